//! pg_chunk's chunking logic, free of pgrx so that plain `cargo test` covers it.
//!
//! Data flows one way: text → sentences (with offsets) → sentence embeddings → cuts (optimal
//! segmentation, or a threshold on the distance curve) → size guards → chunks (with offsets). All offsets inside this crate are
//! byte offsets into the document (`&str` indices); [`offsets::CharCursor`] turns them into
//! the character offsets SQL shows, once, at the boundary.
//! [`explain`] reports a semantic run sentence by sentence and draws it as SVG.

#![warn(missing_docs)]

pub mod config;
pub mod curve;
pub mod embed;
pub mod error;
pub mod explain;
pub mod guards;
pub mod invariants;
pub mod lexical;
pub mod measures;
pub mod names;
pub mod offsets;
pub mod segmentation;
pub mod sentences;
pub mod size;
pub mod strategy;
pub mod threshold;

pub use config::{Boundaries, ChunkConfig};
pub use error::{ChunkError, EmbedderError};
pub use explain::{explain_semantic, Explanation};
pub use strategy::{chunk_document, Chunk, SplitReason};
