//! Reading a model2vec embedding table from a safetensors file. The format is small enough to
//! parse here: 8 bytes little-endian header length, a JSON header mapping tensor names to
//! `{dtype, shape, data_offsets}` (offsets relative to the end of the header), then raw data.

use std::ops::Deref;

use serde_json::Value;

use crate::error::EmbedError;
use crate::mapped::MappedFile;

/// A safetensors file's bytes: mapped (the page cache's copy, one for every backend) or read.
pub(crate) enum FileBytes {
    Mapped(MappedFile),
    #[cfg_attr(not(test), allow(dead_code))]
    Read(Vec<u8>),
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(file) => file.bytes(),
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

struct TensorEntry {
    name: String,
    dtype: String,
    shape: Vec<usize>,
    start: usize,
    end: usize,
}

/// Finds the embedding table in `file` (named "embeddings", or else the only 2-D tensor).
/// `source` names the file in errors. Files with further tensors — newer model2vec formats add
/// per-token `weights` or a vocabulary `mapping` — are refused rather than half-read, because
/// ignoring those tensors would give wrong vectors without any sign.
pub(crate) fn read_embedding_table(file: FileBytes, source: &str) -> Result<EmbeddingTable, EmbedError> {
    let invalid = |why: String| EmbedError::InvalidModel(format!("{source}: {why}"));
    let length_bytes: [u8; 8] = file
        .get(..8)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or_else(|| invalid("too short for a safetensors file".into()))?;
    let header_length = usize::try_from(u64::from_le_bytes(length_bytes))
        .ok()
        .filter(|&length| length <= file.len() - 8)
        .ok_or_else(|| invalid("header length runs past the end of the file".into()))?;
    let data = &file[8 + header_length..];
    let header: Value = serde_json::from_slice(&file[8..8 + header_length])
        .map_err(|error| invalid(format!("header is not JSON: {error}")))?;
    let header = header.as_object().ok_or_else(|| invalid("header is not a JSON object".into()))?;

    let tensors = header
        .iter()
        .filter(|(name, _)| name.as_str() != "__metadata__")
        .map(|(name, entry)| {
            parse_entry(name, entry).ok_or_else(|| invalid(format!("malformed entry for tensor {name}")))
        })
        .collect::<Result<Vec<_>, _>>()?;

    let table = match tensors.iter().find(|tensor| tensor.name == "embeddings") {
        Some(table) => table,
        None => {
            let mut two_dimensional = tensors.iter().filter(|tensor| tensor.shape.len() == 2);
            match (two_dimensional.next(), two_dimensional.next()) {
                (Some(table), None) => table,
                (None, _) => return Err(invalid("no 2-D tensor (embedding table) found".into())),
                (Some(_), Some(_)) => return Err(invalid("several 2-D tensors and none named \"embeddings\"".into())),
            }
        }
    };
    let others: Vec<&str> =
        tensors.iter().filter(|tensor| tensor.name != table.name).map(|tensor| tensor.name.as_str()).collect();
    if !others.is_empty() {
        return Err(invalid(format!("unsupported tensors {others:?} besides the embedding table {:?}", table.name)));
    }
    if table.dtype != "F32" {
        return Err(invalid(format!("tensor {} has dtype {}; only F32 is supported", table.name, table.dtype)));
    }
    let [rows, dimension] = table.shape[..] else {
        return Err(invalid(format!("tensor {} has shape {:?}; expected 2-D", table.name, table.shape)));
    };
    let expected_bytes = rows.checked_mul(dimension).and_then(|count| count.checked_mul(4));
    if table.end < table.start || Some(table.end - table.start) != expected_bytes || table.end > data.len() {
        return Err(invalid(format!(
            "tensor {} data_offsets [{}, {}] do not fit shape {:?} and a data section of {} bytes",
            table.name,
            table.start,
            table.end,
            table.shape,
            data.len()
        )));
    }
    if dimension == 0 {
        return Err(invalid(format!("tensor {} has dimension 0", table.name)));
    }
    let start = 8 + header_length + table.start;
    let in_place =
        cfg!(target_endian = "little") && (file.as_ptr() as usize + start).is_multiple_of(std::mem::align_of::<f32>());
    let values = if in_place {
        Values::InFile { file, start }
    } else {
        Values::Copied(
            file[start..8 + header_length + table.end]
                .chunks_exact(4)
                .map(|bytes| f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
                .collect(),
        )
    };
    Ok(EmbeddingTable { rows, dimension, values })
}

fn parse_entry(name: &str, entry: &Value) -> Option<TensorEntry> {
    let dtype = entry.get("dtype")?.as_str()?.to_string();
    let shape = entry
        .get("shape")?
        .as_array()?
        .iter()
        .map(|size| size.as_u64().and_then(|size| usize::try_from(size).ok()))
        .collect::<Option<Vec<_>>>()?;
    let offsets = entry.get("data_offsets")?.as_array()?;
    let offset = |index: usize| offsets.get(index)?.as_u64().and_then(|o| usize::try_from(o).ok());
    Some(TensorEntry { name: name.to_string(), dtype, shape, start: offset(0)?, end: offset(1)? })
}

#[cfg(test)]
#[path = "safetensors_tests.rs"]
mod tests;
