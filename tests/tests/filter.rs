//! knowledge.search's `filter` option (docs/store.md, "Filters"): each operator keeps exactly the
//! documents it names, over document and chunk metadata, in every mode, as PostgreSQL's jsonpath
//! evaluates what crates/pg_chunk_filter writes. The refusals are in bad_input/search.rs.

use pg_chunk_client_tests::fresh_database;
use postgres::Client;
use std::collections::BTreeSet;

/// Each document's name (its title) and metadata; every content mentions glaciers.
const DOCUMENTS: [(&str, &str); 7] = [
    ("alpine", r#"{"region": "Alps", "year": 1990, "tags": ["ice", "rock"], "reviewed": true}"#),
    ("andes", r#"{"region": "Andes", "year": 2005, "tags": ["ice"], "reviewed": false}"#),
    ("arctic", r#"{"region": "Arctic", "year": 2015, "tags": [], "note": null}"#),
    ("quoted", r#"{"region": "O'Brien \"Bay\" 100%", "year": "2010"}"#),
    ("bare", r#"{}"#),
    ("multiline", r#"{"region": "North\nSea", "year": 2020.5}"#),
    ("chunky", r#"{"region": "Alps", "split_reason": "document"}"#),
];

fn store(database: &str) -> Client {
    let mut client = fresh_database(database);
    client
        .batch_execute(
            r#"INSERT INTO knowledge.chunk_configs (name, cfg, model)
               VALUES ('f', '{"strategy": "fixed", "max_size": 200, "overlap": 0}', 'potion-base-8m')"#,
        )
        .unwrap();
    for (name, metadata) in DOCUMENTS {
        client
            .execute(
                "INSERT INTO knowledge.documents (title, content, metadata, chunk_config) VALUES ($1, $2, $3::text::jsonb, 'f')",
                &[&name, &format!("The {name} glacier moves slowly downhill."), &metadata],
            )
            .unwrap();
    }
    client
}

/// The names of the documents whose chunks a search with `filter` returns, in `mode`.
fn found(client: &mut Client, filter: &str, mode: &str) -> BTreeSet<String> {
    let options = format!(r#"{{"config": "f", "mode": "{mode}", "filter": {filter}}}"#);
    client
        .query(
            "SELECT d.title FROM knowledge.search('glacier', 100, $1::text::jsonb) AS s JOIN knowledge.documents AS d ON d.id = s.document_id",
            &[&options],
        )
        .unwrap_or_else(|e| panic!("{filter}: {e:?}"))
        .iter()
        .map(|row| row.get(0))
        .collect()
}

#[test]
fn each_operator_keeps_exactly_its_documents() {
    let mut client = store("filter");
    let all: BTreeSet<String> = DOCUMENTS.iter().map(|(name, _)| name.to_string()).collect();
    assert_eq!(found(&mut client, "{}", "hybrid"), all);
    let cases: [(&str, &[&str]); 33] = [
        (r#"{"region": "Alps"}"#, &["alpine", "chunky"]),
        (r#"{"region": {"$eq": "Andes"}}"#, &["andes"]),
        (r#"{"year": 2005}"#, &["andes"]),
        (r#"{"year": "2010"}"#, &["quoted"]),
        (r#"{"reviewed": false}"#, &["andes"]),
        (r#"{"note": null}"#, &["arctic"]),
        (r#"{"region": {"$ne": "Alps"}}"#, &["andes", "arctic", "quoted", "multiline"]),
        // An empty array holds no "rock".
        (r#"{"tags": {"$ne": "rock"}}"#, &["andes", "arctic"]),
        (r#"{"year": {"$lt": 2005}}"#, &["alpine"]),
        (r#"{"year": {"$lte": 2005}}"#, &["alpine", "andes"]),
        (r#"{"year": {"$gt": 2015}}"#, &["multiline"]),
        (r#"{"year": {"$gte": 2015}}"#, &["arctic", "multiline"]),
        (r#"{"region": {"$gt": "B"}}"#, &["quoted", "multiline"]),
        (r#"{"year": {"$gte": 2000, "$lt": 2016}}"#, &["andes", "arctic"]),
        (r#"{"region": {"$in": ["Andes", "Arctic", "Moon"]}}"#, &["andes", "arctic"]),
        (r#"{"region": {"$in": []}}"#, &[]),
        (r#"{"region": {"$nin": ["Alps", "Andes"]}}"#, &["arctic", "quoted", "multiline"]),
        (r#"{"tags": {"$nin": ["rock"]}}"#, &["andes", "arctic"]),
        (r#"{"year": {"$between": [1990, 2015]}}"#, &["alpine", "andes", "arctic"]),
        (r#"{"region": {"$like": "A%"}}"#, &["alpine", "andes", "arctic", "chunky"]),
        (r#"{"region": {"$like": "a%"}}"#, &[]),
        (r#"{"region": {"$ilike": "a_p%"}}"#, &["alpine", "chunky"]),
        (r#"{"region": {"$like": "%100\\%"}}"#, &["quoted"]),
        (r#"{"region": {"$like": "O'Brien \"Bay\"%"}}"#, &["quoted"]),
        (r#"{"region": {"$like": "North%Sea"}}"#, &["multiline"]),
        (r#"{"reviewed": {"$exists": true}}"#, &["alpine", "andes"]),
        // Missing, null or an empty array.
        (r#"{"tags": {"$empty": true}}"#, &["arctic", "quoted", "bare", "multiline", "chunky"]),
        (r#"{"note": {"$empty": true}, "tags": {"$empty": false}}"#, &["alpine", "andes"]),
        (r#"{"tags": "ice"}"#, &["alpine", "andes"]),
        (r#"{"$and": [{"tags": "ice"}, {"year": {"$gt": 2000}}]}"#, &["andes"]),
        (
            r#"{"$or": [{"year": 1990}, {"region": "Arctic"}, {"$not": {"region": {"$exists": true}}}]}"#,
            &["alpine", "arctic", "bare"],
        ),
        // The chunk's metadata merged under the document's: the fixed strategy writes
        // split_reason "window" into every chunk, and "chunky"'s document has its own, which wins.
        (r#"{"split_reason": "window"}"#, &["alpine", "andes", "arctic", "quoted", "bare", "multiline"]),
        (r#"{"split_reason": "document"}"#, &["chunky"]),
    ];
    for (filter, expected) in cases {
        let expected: BTreeSet<String> = expected.iter().map(|name| name.to_string()).collect();
        for mode in ["hybrid", "vector", "text"] {
            assert_eq!(found(&mut client, filter, mode), expected, "{filter} in {mode} mode");
        }
    }
}
