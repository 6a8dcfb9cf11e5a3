//! pg_chunk seen from a client: results, errors and backends over a real connection.

use pg_chunk_client_tests::{connect, sample_document, sqlstate_of};
use std::thread;

#[test]
fn the_sample_document_chunks_with_exact_offsets_in_every_strategy() {
    let mut client = connect();
    let doc = sample_document();
    for cfg in [
        "{}",
        r#"{"strategy": "fixed"}"#,
        r#"{"strategy": "recursive"}"#,
        r#"{"max_size": "60 words", "overlap": "1 sentences"}"#,
    ] {
        let rows = client
            .query("SELECT chunk_index, content, char_offset, char_length FROM knowledge.chunk($1, $2::text::jsonb) ORDER BY chunk_index", &[&doc, &cfg])
            .unwrap();
        assert!(rows.len() > 1, "{cfg}: {} chunks", rows.len());
        let chars: Vec<char> = doc.chars().collect();
        for (i, row) in rows.iter().enumerate() {
            let (index, content, offset, length): (i32, String, i32, i32) =
                (row.get(0), row.get(1), row.get(2), row.get(3));
            assert_eq!(index as usize, i);
            let expected: String = chars[offset as usize..(offset + length) as usize].iter().collect();
            assert_eq!(content, expected, "{cfg}: chunk {i}");
        }
    }
}

#[test]
fn the_default_chunking_of_the_sample_follows_its_topics() {
    let mut client = connect();
    let doc = sample_document();
    let rows = client.query("SELECT content FROM knowledge.chunk($1)", &[&doc]).unwrap();
    let contents: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    // No chunk mixes bees and volcanoes: the topics are far apart in the text and in words.
    assert!(!contents.iter().any(|c| c.contains("queen") && c.contains("magma")), "{contents:#?}");
}

#[test]
fn errors_reach_the_client_with_their_sqlstate() {
    let mut client = connect();
    let cases = [
        ("SELECT * FROM knowledge.chunk('text', '{\"bogus\": 1}')", "22023"),
        ("SELECT * FROM knowledge.chunk('text', '{\"max_size\": \"big\"}')", "22023"),
        ("SELECT * FROM knowledge.chunk(repeat('a ', 100), '{\"max_document_size\": 10}')", "54000"),
        ("SELECT * FROM knowledge.chunk(repeat('Words here. ', 400), '{\"model\": \"missing\"}')", "42704"),
        ("SELECT * FROM knowledge.chunk('fine text')", "00000"),
    ];
    for (query, code) in cases {
        assert_eq!(sqlstate_of(&mut client, query), code, "{query}");
    }
    // The backend that raised them is alive and well.
    let one: i32 = client.query_one("SELECT 1", &[]).unwrap().get(0);
    assert_eq!(one, 1);
}

#[test]
fn concurrent_backends_give_identical_results() {
    let doc = sample_document();
    let reference: Vec<String> =
        connect().query("SELECT content FROM knowledge.chunk($1)", &[&doc]).unwrap().iter().map(|r| r.get(0)).collect();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let doc = doc.clone();
            thread::spawn(move || {
                let mut client = connect();
                (0..20)
                    .map(|_| {
                        client
                            .query("SELECT content FROM knowledge.chunk($1)", &[&doc])
                            .unwrap()
                            .iter()
                            .map(|r| r.get(0))
                            .collect::<Vec<String>>()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for worker in workers {
        for result in worker.join().unwrap() {
            assert_eq!(result, reference);
        }
    }
}

#[test]
fn statement_timeout_cancels_chunking_of_a_large_document() {
    let mut client = connect();
    // 9 MB of text, sent as a parameter so that chunking is the only long work in the query.
    let doc = "Cats purr in the sun. Rust compiles to code. Bread rises overnight. ".repeat(130_000);
    client.batch_execute("SET statement_timeout = '50ms'").unwrap();
    let err = client.query("SELECT count(*) FROM knowledge.chunk($1)", &[&doc]).unwrap_err();
    assert_eq!(err.code().map(|c| c.code()), Some("57014"), "{err}");
    client.batch_execute("RESET statement_timeout").unwrap();
    let one: i32 = client.query_one("SELECT 1", &[]).unwrap().get(0);
    assert_eq!(one, 1, "the connection survives the cancel");
}
