//! The chunker's closed sets of names (split reasons, block kinds, chunk types, strategies,
//! fallbacks) are made with `pg_chunk_names`' [`named_enum!`], shared with pg_chunk_embed.

pub use pg_chunk_names::{named_enum, NamedSet, UnknownName};

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
