//! The text leg of pg_chunk's search, free of pgrx so that plain `cargo test` covers it:
//! a `tsvector` read in PostgreSQL's on-disk layout and scored with Okapi BM25 ([`bm25`]), and
//! CJK runs written as bigrams for PostgreSQL's full-text parser ([`cjk`]).

#![warn(missing_docs)]

pub mod bm25;
pub mod cjk;
pub mod cover;
