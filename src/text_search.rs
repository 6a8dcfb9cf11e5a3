//! The SQL functions of knowledge.search's text leg: CJK bigrams for the tsvectors and queries
//! (`knowledge.text_vector` in sql/store.sql calls it) and the BM25 score of a chunk's tsvector.

use pg_chunk_text_search::bm25::{idf, sorted_terms, Bm25, TsVector};
use pg_chunk_text_search::cjk::cjk_bigrams;
use pgrx::callconv::{Arg, ArgAbi};
use pgrx::prelude::*;
use pgrx::{impl_sql_translatable, pg_sys, FromDatum};

/// `doc` with every run of CJK characters written as its overlapping two-character words, so
/// that PostgreSQL's parser makes lexemes of them (crates/pg_chunk_text_search/src/cjk.rs).
#[pg_extern(immutable, parallel_safe, strict, name = "cjk_bigrams")]
fn cjk_bigrams_of(doc: &str) -> String {
    cjk_bigrams(doc).into_owned()
}

/// The BM25 score of a chunk's tsvector for query lexemes found in `df` of the config's `chunks`
/// chunks each (same order), given the config's mean chunk length
/// (crates/pg_chunk_text_search/src/bm25.rs). knowledge.search reads them from knowledge_internal.text_stats.
#[pg_extern(immutable, parallel_safe, strict, schema = "knowledge_internal")]
fn bm25(
    tsv: TsVectorBytes<'_>,
    lexemes: Vec<String>,
    df: Vec<f64>,
    chunks: f64,
    k1: f64,
    b: f64,
    average_length: f64,
) -> f64 {
    let Some(tsv) = TsVector::new(tsv.0) else { return 0.0 };
    let weights: Vec<f64> = df.iter().map(|&df| idf(chunks, df)).collect();
    let terms = sorted_terms(&lexemes, &weights);
    Bm25 { k1, b, average_length }.score(&tsv, &terms)
}

/// A `tsvector` argument as the bytes after its varlena header (detoasted, not copied).
pub struct TsVectorBytes<'a>(&'a [u8]);

impl_sql_translatable!(TsVectorBytes<'_>, arg_only = "tsvector");

impl FromDatum for TsVectorBytes<'_> {
    unsafe fn from_polymorphic_datum(datum: pg_sys::Datum, is_null: bool, typoid: pg_sys::Oid) -> Option<Self> {
        // SAFETY: a tsvector is a varlena, which is what the byte slice reads.
        unsafe { <&[u8]>::from_polymorphic_datum(datum, is_null, typoid).map(TsVectorBytes) }
    }
}

// SAFETY: unboxes through FromDatum, as pgrx does for its own varlena types.
unsafe impl<'fcx> ArgAbi<'fcx> for TsVectorBytes<'fcx> {
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
        // STRICT: PostgreSQL never calls the function with a NULL tsvector.
        unsafe { arg.unbox_arg_using_from_datum().unwrap_or(TsVectorBytes(&[])) }
    }
}
