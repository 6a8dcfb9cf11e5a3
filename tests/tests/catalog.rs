//! The installed catalog: what a fresh install documents.

use pg_chunk_client_tests::{fresh_database, UNCOMMENTED_FUNCTIONS};

#[test]
fn every_function_in_schema_knowledge_has_a_comment() {
    let mut client = fresh_database("catalog");
    let functions: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace WHERE n.nspname = 'knowledge'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(functions >= 20, "schema knowledge holds pg_chunk's functions: {functions}");
    let missing: Vec<String> = client.query(UNCOMMENTED_FUNCTIONS, &[]).unwrap().iter().map(|row| row.get(0)).collect();
    assert!(missing.is_empty(), "functions in schema knowledge without a COMMENT ON in sql/comments.sql: {missing:#?}");
}
