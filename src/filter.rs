//! knowledge.search's `filter` option: conditions on the metadata of a chunk and its document,
//! written as the jsonpath predicate the search tests (crates/pg_chunk_filter).

use crate::cfg::Cfg;
use crate::errors::Error;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;

/// The filter as a jsonpath predicate, as text (the search casts it); a bad filter is 22023,
/// naming the operator or field.
#[pg_extern(immutable, parallel_safe, strict, schema = "knowledge_internal")]
fn filter_jsonpath(filter: Cfg) -> Result<String, ErrorReport> {
    let refused = |message: String| Error::InvalidArgument(message).report("filter_jsonpath");
    let value = filter.value().map_err(|reason| refused(format!("search option filter cannot be read: {reason}")))?;
    pg_chunk_filter::jsonpath(value).map_err(|e| refused(e.0))
}
