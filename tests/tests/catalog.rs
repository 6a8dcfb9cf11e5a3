//! The installed catalog: what a fresh install documents.

use pg_chunk_client_tests::{fresh_database, STORE_PRIVILEGE_VIOLATIONS, UNCOMMENTED_FUNCTIONS};

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
    assert!(
        missing.is_empty(),
        "functions in schema knowledge without a COMMENT ON in src/sql/comments.sql: {missing:#?}"
    );
}

/// docs/security.md's rules for what runs with the store's rights, over the catalog: fails when
/// a function is SECURITY DEFINER without a pinned search_path, with EXECUTE left to PUBLIC, or
/// owned by another role than knowledge_store, and when the store's objects or that role are not
/// as the page says. (tests/upgrade.rs runs the same check on databases updated from each release.)
#[test]
fn only_knowledge_store_runs_functions_with_its_rights_and_no_one_else_may_call_them() {
    let mut client = fresh_database("catalog_privileges");
    let definers: i64 = client
        .query_one(
            "SELECT count(*) FROM pg_proc WHERE prosecdef AND pronamespace IN ('knowledge'::regnamespace, 'knowledge_internal'::regnamespace)",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(definers, 9, "the functions docs/security.md lists");
    let violations: Vec<String> =
        client.query(STORE_PRIVILEGE_VIOLATIONS, &[]).unwrap().iter().map(|row| row.get(0)).collect();
    assert!(violations.is_empty(), "{violations:#?}");
}
