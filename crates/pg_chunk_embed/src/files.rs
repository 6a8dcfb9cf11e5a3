//! A model's files by what identifies them: a stamp (path, size, modification time) that says
//! when a file changed, the sha256 of their bytes, and the vector identity built from both.

use crate::ModelSpec;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A file's path, size and modification time: a model is loaded again, and its files hashed
/// again, when any of these change.
pub type FileStamp = (PathBuf, u64, SystemTime);

/// A model file that exists but cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read model file {}: {source}", path.display())]
pub struct UnreadableFile {
    /// The file.
    pub path: PathBuf,
    /// What reading it said.
    pub source: std::io::Error,
}

fn unreadable(path: &Path) -> impl FnOnce(std::io::Error) -> UnreadableFile + '_ {
    move |source| UnreadableFile { path: path.to_path_buf(), source }
}

/// The stamps of `files`, in order; a file that does not exist is left out.
pub fn file_stamps(files: &[PathBuf]) -> Result<Vec<FileStamp>, UnreadableFile> {
    let mut stamps = Vec::new();
    for file in files.iter().filter(|f| f.is_file()) {
        let metadata = std::fs::metadata(file).map_err(unreadable(file))?;
        stamps.push((file.clone(), metadata.len(), metadata.modified().map_err(unreadable(file))?));
    }
    Ok(stamps)
}

/// The files that may hold a model's weights: its model file, then `<model file>.data` (ONNX
/// external weights, as in the installed MiniLM), which need not exist.
pub fn weights_files(model_file: &Path) -> [PathBuf; 2] {
    let mut data_file = model_file.to_path_buf().into_os_string();
    data_file.push(".data");
    [model_file.to_path_buf(), PathBuf::from(data_file)]
}

/// The sha256 (lowercase hex) of files' bytes one after the other, remembered by their stamps:
/// a file is hashed again only when its size or modification time changes. The owner keeps
/// one per backend.
#[derive(Default)]
pub struct FileHashes {
    hashes: HashMap<Vec<FileStamp>, String>,
}

impl FileHashes {
    /// The sha256 of the files `stamps` name; `between_reads` is called before each 1 MiB read
    /// (a caller checks for query cancel there; it may unwind).
    pub fn sha256(&mut self, stamps: &[FileStamp], between_reads: &mut dyn FnMut()) -> Result<String, UnreadableFile> {
        if let Some(hash) = self.hashes.get(stamps) {
            return Ok(hash.clone());
        }
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 20];
        for (file, _, _) in stamps {
            let mut reader = std::fs::File::open(file).map_err(unreadable(file))?;
            loop {
                between_reads();
                let read = reader.read(&mut buffer).map_err(unreadable(file))?;
                if read == 0 {
                    break;
                }
                hasher.update(&buffer[..read]);
            }
        }
        let hash: String = hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect();
        self.hashes.insert(stamps.to_vec(), hash.clone());
        Ok(hash)
    }
}

/// What decides the vectors a model gives a text, as 32 bytes: every field of its spec that
/// changes them (not its name) and the sha256 of its weights and of its tokenizer file. Vectors
/// stored under one identity are never taken for another.
pub fn vector_identity(spec: &ModelSpec, weights_sha256: &str, tokenizer_sha256: &str) -> [u8; 32] {
    // Stored vectors are keyed by this: changing the text changes every key.
    let fields = format!(
        "pg_chunk vector identity 1\0{:?}\0{}\0{}\0{}\0{:?}\0{}\0{}\0{:?}\0{:?}\0{:?}\0{}\0{weights_sha256}\0{tokenizer_sha256}",
        spec.kind,
        spec.model_file.display(),
        spec.tokenizer_file.display(),
        spec.dimension,
        spec.pooling,
        spec.normalize,
        spec.max_tokens,
        spec.query_prefix,
        spec.passage_prefix,
        spec.output_name,
        spec.optimize_graph,
    );
    Sha256::digest(fields.as_bytes()).into()
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
