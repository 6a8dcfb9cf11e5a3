//! Reading a model2vec embedding table from a safetensors file. The `safetensors` crate parses
//! and checks the header (8 bytes little-endian header length, a JSON header mapping tensor
//! names to `{dtype, shape, data_offsets}`, then the data, which the tensors must cover
//! exactly); it reads no tensor data, so the table stays where the file's bytes are.

use std::ops::Deref;

use memmap2::Mmap;
use safetensors::{Dtype, SafeTensors};

use crate::error::EmbedError;

/// A safetensors file's bytes: mapped (the page cache's copy, one for every backend) or read.
pub(crate) enum FileBytes {
    Mapped(Mmap),
    #[cfg_attr(not(test), allow(dead_code))]
    Read(Vec<u8>),
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(file) => file,
            FileBytes::Read(bytes) => bytes,
        }
    }
}

/// A `rows × dimension` table of f32, row-major: row `id` is token `id`'s vector.
pub(crate) struct EmbeddingTable {
    pub rows: usize,
    pub dimension: usize,
    values: Values,
}

/// The table's values: in the file itself when they sit at an f32 boundary (always, in a mapped
/// file whose data section does), else a copy.
enum Values {
    InFile { file: FileBytes, start: usize },
    Copied(Vec<f32>),
}

impl EmbeddingTable {
    pub fn values(&self) -> &[f32] {
        match &self.values {
            Values::InFile { file, start } => {
                let bytes = &file[*start..*start + self.rows * self.dimension * 4];
                // SAFETY: read_embedding_table checked that these bytes lie inside the file and
                // start at an f32 boundary, and on a little-endian machine their layout is
                // [f32]'s; the file outlives the slice, which borrows self.
                unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<f32>(), bytes.len() / 4) }
            }
            Values::Copied(values) => values,
        }
    }

    pub fn row(&self, id: usize) -> Option<&[f32]> {
        self.values().get(id * self.dimension..(id + 1) * self.dimension)
    }

    #[cfg(test)]
    fn is_in_file(&self) -> bool {
        matches!(self.values, Values::InFile { .. })
    }
}

/// Finds the embedding table in `file` (named "embeddings", or else the only 2-D tensor).
/// `source` names the file in errors. Files with further tensors — newer model2vec formats add
/// per-token `weights` or a vocabulary `mapping` — are refused rather than half-read, because
/// ignoring those tensors would give wrong vectors without any sign.
pub(crate) fn read_embedding_table(file: FileBytes, source: &str) -> Result<EmbeddingTable, EmbedError> {
    let invalid = |why: String| EmbedError::InvalidModel(format!("{source}: {why}"));
    let (header_length, metadata) =
        SafeTensors::read_metadata(&file).map_err(|error| invalid(format!("not a safetensors file: {error}")))?;
    // Names in the order of their data, so that an error lists them the same way every time.
    let names = metadata.offset_keys();
    let (name, info) = match metadata.info("embeddings").map(|info| ("embeddings", info)) {
        Some(table) => table,
        None => {
            let mut two_dimensional = names
                .iter()
                .filter_map(|name| metadata.info(name).map(|info| (name.as_str(), info)))
                .filter(|(_, info)| info.shape.len() == 2);
            match (two_dimensional.next(), two_dimensional.next()) {
                (Some(table), None) => table,
                (None, _) => return Err(invalid("no 2-D tensor (embedding table) found".into())),
                (Some(_), Some(_)) => return Err(invalid("several 2-D tensors and none named \"embeddings\"".into())),
            }
        }
    };
    let others: Vec<&str> = names.iter().map(String::as_str).filter(|other| *other != name).collect();
    if !others.is_empty() {
        return Err(invalid(format!("unsupported tensors {others:?} besides the embedding table {name:?}")));
    }
    if info.dtype != Dtype::F32 {
        return Err(invalid(format!("tensor {name} has dtype {}; only F32 is supported", info.dtype)));
    }
    let [rows, dimension] = info.shape[..] else {
        return Err(invalid(format!("tensor {name} has shape {:?}; expected 2-D", info.shape)));
    };
    if dimension == 0 {
        return Err(invalid(format!("tensor {name} has dimension 0")));
    }
    // read_metadata checked that the offsets fit the shape and lie inside the file.
    let (start, end) = (8 + header_length + info.data_offsets.0, 8 + header_length + info.data_offsets.1);
    let in_place =
        cfg!(target_endian = "little") && (file.as_ptr() as usize + start).is_multiple_of(std::mem::align_of::<f32>());
    let values = if in_place {
        Values::InFile { file, start }
    } else {
        Values::Copied(
            file[start..end]
                .chunks_exact(4)
                .map(|bytes| f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
                .collect(),
        )
    };
    Ok(EmbeddingTable { rows, dimension, values })
}

#[cfg(test)]
#[path = "safetensors_tests.rs"]
mod tests;
