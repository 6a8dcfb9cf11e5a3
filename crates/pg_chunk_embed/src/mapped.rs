//! A whole file mapped read-only into memory. Its pages are the page cache's: every process
//! that maps the same file shares one copy, where reading it would give each its own.
//!
//! The installer replaces model files by renaming new ones into place, so a mapped file keeps
//! its contents; a file truncated in place while mapped would fault on access (SIGBUS).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

pub(crate) struct MappedFile {
    address: *mut libc::c_void,
    length: usize,
}

// SAFETY: the mapping is read-only and lives until drop; shared references only read it.
unsafe impl Send for MappedFile {}
unsafe impl Sync for MappedFile {}

impl MappedFile {
    pub(crate) fn open(path: &Path) -> io::Result<MappedFile> {
        let file = File::open(path)?;
        let length = usize::try_from(file.metadata()?.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "file too large to map"))?;
        if length == 0 {
            // mmap refuses a length of 0; an empty file is no model either.
            return Err(io::Error::new(io::ErrorKind::InvalidData, "file is empty"));
        }
        // SAFETY: a fresh read-only private mapping of an open file, checked for failure.
        let address = unsafe {
            libc::mmap(std::ptr::null_mut(), length, libc::PROT_READ, libc::MAP_PRIVATE, file.as_raw_fd(), 0)
        };
        if address == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(MappedFile { address, length })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `length` readable bytes are mapped at `address` until drop.
        unsafe { std::slice::from_raw_parts(self.address.cast::<u8>(), self.length) }
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in open, once.
        unsafe {
            libc::munmap(self.address, self.length);
        }
    }
}

#[cfg(test)]
#[path = "mapped_tests.rs"]
mod tests;
