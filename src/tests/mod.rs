//! The `#[pg_test]`s, run inside PostgreSQL by `cargo pgrx test`, one file per subject. Each file
//! holds its tests in a `#[pgrx::pg_schema] mod tests`: pgrx calls every test as
//! `"tests"."<name>"()`, so the schema must be named `tests`.

mod chunking;
mod models;
mod plot;
mod queue;
mod store;
mod support;
mod text_search;
