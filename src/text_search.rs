//! The SQL functions of knowledge.search's text leg: CJK bigrams for the tsvectors and queries
//! (`knowledge.text_vector` in src/sql/text_search.sql calls it) and the BM25 score of a chunk's
//! tsvector.

use crate::errors::Error;
use pg_chunk_text_search::bm25::{idf, sorted_terms, Bm25, TsVector};
use pg_chunk_text_search::cjk::cjk_bigrams;
use pg_chunk_text_search::cover::{cover, term_bound};
use pgrx::callconv::{Arg, ArgAbi};
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::{impl_sql_translatable, pg_func_extra, pg_sys, FromDatum};

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
// The SQL function's seven arguments, and this call's fcinfo.
#[allow(clippy::too_many_arguments)]
fn bm25(
    tsv: TsVectorBytes<'_>,
    lexemes: TextArrayBytes<'_>,
    df: Float8ArrayBytes<'_>,
    chunks: f64,
    k1: f64,
    b: f64,
    average_length: f64,
    fcinfo: pg_sys::FunctionCallInfo,
) -> f64 {
    let Some(tsv) = TsVector::new(tsv.bytes) else { return 0.0 };
    // SAFETY: fcinfo is this call's; its fn_extra holds nothing but a QueryTerms.
    let mut query = unsafe { pg_func_extra(fcinfo, QueryTerms::default) };
    if query.lexemes != lexemes.bytes || query.df != df.bytes || query.chunks.to_bits() != chunks.to_bits() {
        // SAFETY: the datums are this call's text[] and float8[] arguments.
        let (words, dfs) =
            unsafe { (Vec::<String>::from_datum(lexemes.datum, false), Vec::<f64>::from_datum(df.datum, false)) };
        let (words, dfs) = (words.unwrap_or_default(), dfs.unwrap_or_default());
        let weights: Vec<f64> = dfs.iter().map(|&df| idf(chunks, df)).collect();
        *query = QueryTerms {
            lexemes: lexemes.bytes.to_vec(),
            df: df.bytes.to_vec(),
            chunks,
            terms: sorted_terms(&words, &weights).into_iter().map(|(l, w)| (l.to_vec(), w)).collect(),
        };
    }
    Bm25 { k1, b, average_length }.score(&tsv, &query.terms)
}

/// More sets than this and the cover is the query's essential lexemes one by one: each set is
/// one scan of the GIN index (about 10 ms for three common words at a million chunks).
const COVER_SETS: usize = 64;

/// Sets of a query's lexemes (1-based positions, each set in increasing order) such that every
/// chunk that BM25 can score at least `score` for lexemes found in `df` of `chunks` chunks each
/// holds every lexeme of one of them (crates/pg_chunk_text_search/src/cover.rs); `score` 0:
/// each lexeme alone. A NULL in `df` is 22023.
#[pg_extern(immutable, parallel_safe, strict, schema = "knowledge_internal")]
fn bm25_cover(
    df: Array<'_, f64>,
    chunks: f64,
    k1: f64,
    score: f64,
) -> Result<SetOfIterator<'static, Vec<i32>>, ErrorReport> {
    let bounds: Vec<f64> = df
        .iter()
        .map(|df| df.map(|df| term_bound(idf(chunks, df), k1)))
        .collect::<Option<_>>()
        .ok_or_else(|| Error::InvalidArgument("bm25_cover's df holds a NULL".into()).report("bm25_cover"))?;
    let sets = cover(&bounds, score, COVER_SETS);
    Ok(SetOfIterator::new(sets.into_iter().map(|set| set.into_iter().map(|i| i as i32 + 1).collect())))
}

/// The query terms the last call of a knowledge_internal.bm25 call site scored with, and the
/// argument bytes they came from. knowledge.search scores every candidate chunk with the same
/// query: decoding its arrays, taking the logarithms and sorting once, not per chunk, cut the
/// scoring from 1.08 to 0.74 µs a chunk (bench/README.md, "Decisions").
#[derive(Default)]
struct QueryTerms {
    lexemes: Vec<u8>,
    df: Vec<u8>,
    chunks: f64,
    terms: Vec<(Vec<u8>, f64)>,
}

/// Arguments read as the bytes after their varlena header (detoasted, not copied), with their
/// datum, one type per SQL type.
macro_rules! varlena_bytes {
    ($name:ident, $sql:literal) => {
        pub struct $name<'a> {
            // Decoded for the arrays; a tsvector's bytes are read in place.
            #[allow(dead_code)]
            datum: pg_sys::Datum,
            bytes: &'a [u8],
        }

        impl_sql_translatable!($name<'_>, arg_only = $sql);

        impl FromDatum for $name<'_> {
            unsafe fn from_polymorphic_datum(datum: pg_sys::Datum, is_null: bool, typoid: pg_sys::Oid) -> Option<Self> {
                // SAFETY: the type is a varlena, which is what the byte slice reads.
                unsafe { <&[u8]>::from_polymorphic_datum(datum, is_null, typoid).map(|bytes| $name { datum, bytes }) }
            }
        }

        // SAFETY: unboxes through FromDatum, as pgrx does for its own varlena types.
        unsafe impl<'fcx> ArgAbi<'fcx> for $name<'fcx> {
            unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
                // STRICT: PostgreSQL never calls the function with a NULL argument.
                unsafe {
                    arg.unbox_arg_using_from_datum().unwrap_or($name { datum: pg_sys::Datum::from(0), bytes: &[] })
                }
            }
        }
    };
}

varlena_bytes!(TsVectorBytes, "tsvector");
varlena_bytes!(TextArrayBytes, "text[]");
varlena_bytes!(Float8ArrayBytes, "double precision[]");
