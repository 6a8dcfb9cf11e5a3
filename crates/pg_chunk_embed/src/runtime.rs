//! Loading ONNX Runtime from a path, once per process.
//!
//! `ort` (load-dynamic) keeps the first library it loads for the life of the process, so a second
//! path cannot take effect: asking for one is an error that says to reconnect, rather than a
//! silent use of the old library. Before handing the path to `ort` we read the library's version
//! ourselves, so an old runtime is reported with both versions instead of failing later inside a
//! call that needs a newer API.

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use ort::environment::Environment;

use crate::error::{require_file, EmbedError};
use crate::ModelFile;

/// The process's ONNX Runtime environment and the library it came from. A Mutex rather than a
/// OnceLock because a failed load must leave it empty, so a corrected path can be tried again.
static LOADED: Mutex<Option<LoadedRuntime>> = Mutex::new(None);

struct LoadedRuntime {
    library_path: PathBuf,
    version: String,
    environment: Environment,
}

/// The ONNX Runtime versions this build works with: `ort` asks the library for API version
/// `ort::MINOR_VERSION`, which every 1.x release from 1.MINOR_VERSION on provides.
pub fn required_runtime_version() -> String {
    format!("1.{}.0 or a later 1.x", ort::MINOR_VERSION)
}

/// The version string (e.g. "1.31.1") of the ONNX Runtime library at `library_path`, read with
/// `OrtGetApiBase()->GetVersionString()`. Does not make it the process's runtime.
pub fn onnxruntime_version(library_path: &Path) -> Result<String, EmbedError> {
    let (_library, version) = open_and_read_version(library_path)?;
    Ok(version)
}

/// The process's environment, loading ONNX Runtime from `library_path` on first use.
pub(crate) fn environment(library_path: &Path) -> Result<Environment, EmbedError> {
    require_file(library_path, ModelFile::RuntimeLibrary)?;
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(runtime) = loaded.as_ref() {
        if same_file(&runtime.library_path, library_path) {
            return Ok(runtime.environment.clone());
        }
        return Err(EmbedError::Runtime(format!(
            "ONNX Runtime {} is already loaded in this process from {}; a process loads it only once, \
             so reconnect to use {}",
            runtime.version,
            runtime.library_path.display(),
            library_path.display()
        )));
    }

    // Keep our handle open until ort holds its own, so the library is not unloaded in between.
    let (_library, version) = open_and_read_version(library_path)?;
    check_version(&version)?;
    let builder = ort::init_from(library_path)
        .map_err(|error| EmbedError::Runtime(format!("cannot load {}: {error}", library_path.display())))?;
    let environment = with_signals_blocked(|| builder.with_name("pg_chunk").with_telemetry(false).build())?;
    *loaded =
        Some(LoadedRuntime { library_path: library_path.to_path_buf(), version, environment: environment.clone() });
    Ok(environment)
}

/// Runs `create` with every signal blocked in the calling thread, then restores the mask (also
/// on unwind). Threads that ONNX Runtime starts inside `create` (the environment starts one;
/// sessions with more than one intra-op thread start a pool) inherit the all-blocked mask, so
/// Postgres's signals — cancel, terminate, latch wake-ups — are always handled by the backend's
/// own thread, never by a library thread. Signals arriving meanwhile stay pending, not lost.
pub(crate) fn with_signals_blocked<T>(create: impl FnOnce() -> T) -> T {
    #[cfg(unix)]
    let _restore = SignalMaskGuard::block_all();
    create()
}

#[cfg(unix)]
struct SignalMaskGuard {
    previous: Option<libc::sigset_t>,
}

#[cfg(unix)]
impl SignalMaskGuard {
    fn block_all() -> Self {
        // SAFETY: sigset_t is plain data that sigfillset/pthread_sigmask initialise; both calls
        // only touch this thread's mask and the local sets.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut previous: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            let blocked = libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut previous) == 0;
            SignalMaskGuard { previous: blocked.then_some(previous) }
        }
    }
}

#[cfg(unix)]
impl Drop for SignalMaskGuard {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.as_ref() {
            // SAFETY: restores the mask saved by block_all on this same thread.
            unsafe {
                libc::pthread_sigmask(libc::SIG_SETMASK, previous, std::ptr::null_mut());
            }
        }
    }
}

/// Fails with `IncompatibleRuntime` unless `found` is a 1.x version at least 1.MINOR_VERSION.
pub(crate) fn check_version(found: &str) -> Result<(), EmbedError> {
    let mut parts = found.trim().split('.').map(|part| part.parse::<u32>().ok());
    let compatible = match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => major == 1 && minor >= ort::MINOR_VERSION,
        _ => false,
    };
    if compatible {
        Ok(())
    } else {
        Err(EmbedError::IncompatibleRuntime { found: found.to_string(), required: required_runtime_version() })
    }
}

fn open_and_read_version(library_path: &Path) -> Result<(libloading::Library, String), EmbedError> {
    require_file(library_path, ModelFile::RuntimeLibrary)?;
    // SAFETY: loading a library runs its initialisers; the path comes from a superuser-only
    // setting that is meant to name ONNX Runtime.
    let library = unsafe { libloading::Library::new(library_path) }
        .map_err(|error| EmbedError::Runtime(format!("cannot load {}: {error}", library_path.display())))?;
    let not_onnxruntime = || {
        EmbedError::Runtime(format!("{} is not ONNX Runtime: it has no usable OrtGetApiBase", library_path.display()))
    };
    // SAFETY: the signature is ONNX Runtime's C API entry point, declared by ort-sys.
    let get_api_base =
        unsafe { library.get::<unsafe extern "system" fn() -> *const ort::sys::OrtApiBase>(b"OrtGetApiBase") }
            .map_err(|_| not_onnxruntime())?;
    // SAFETY: OrtGetApiBase takes no arguments and returns a pointer to a static struct.
    let api_base = unsafe { get_api_base() };
    if api_base.is_null() {
        return Err(not_onnxruntime());
    }
    // SAFETY: api_base is non-null and points to the library's static OrtApiBase;
    // GetVersionString returns a static NUL-terminated string (or null, checked).
    let version_ptr = unsafe { ((*api_base).GetVersionString)() };
    if version_ptr.is_null() {
        return Err(not_onnxruntime());
    }
    // SAFETY: non-null, NUL-terminated, static for the life of the library, copied before return.
    let version = unsafe { CStr::from_ptr(version_ptr) }.to_string_lossy().into_owned();
    Ok((library, version))
}

/// The same file, even if reached through different paths (symlinks, `..`).
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
#[path = "runtime_tests.rs"]
mod tests;
