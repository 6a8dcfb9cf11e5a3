//! The text leg of knowledge.search is exact: its top k are the top k that BM25 gives over every
//! chunk of the config (ties by chunk id), with the same statistics, on a store where scoring
//! only some of the matching chunks would miss them. 2,600 one-chunk documents: every one holds
//! "ledger", the last 100 three times in a short chunk (the best for it, and the last a scan of
//! the index finds), the rest once and a few of 39 other words drawn with skewed frequencies, so
//! that queries of one to four words have lexemes from rare to common.

use pg_chunk_client_tests::fresh_database;
use postgres::Client;

const WORDS: [&str; 40] = [
    "ledger", "quartz", "harbor", "violin", "glacier", "lantern", "meadow", "copper", "falcon", "orchard", "canyon",
    "timber", "saddle", "beacon", "marble", "thunder", "pepper", "velvet", "compass", "willow", "anchor", "basket",
    "cactus", "dragon", "ember", "fossil", "garnet", "hammock", "island", "jasmine", "kettle", "lobster", "magnet",
    "nectar", "oyster", "pigeon", "quiver", "raven", "saffron", "tulip",
];

/// A fixed sequence of pseudo-random numbers (a 64-bit linear congruential generator).
struct Numbers(u64);

impl Numbers {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }

    /// A word other than "ledger", the first ones far more often than the last (the square of a
    /// uniform draw).
    fn skewed_word(&mut self) -> &'static str {
        let u = self.below(1000) as f64 / 1000.0;
        WORDS[1 + (u * u * (WORDS.len() - 1) as f64) as usize]
    }
}

fn documents() -> Vec<String> {
    let mut numbers = Numbers(7);
    let mut documents: Vec<String> = (0..2500)
        .map(|_| {
            let words: Vec<&str> = (0..4 + numbers.below(12)).map(|_| numbers.skewed_word()).collect();
            format!("ledger {}.", words.join(" "))
        })
        .collect();
    documents.extend((0..100).map(|i| format!("ledger ledger ledger {}.", WORDS[1 + i % 39])));
    documents
}

/// The chunk ids knowledge.search's text leg ranks first for `query`, best first.
fn text_leg(client: &mut Client, query: &str, k: i32, filter: &str) -> Vec<i64> {
    let options = format!(r#"{{"mode": "text"{filter}}}"#);
    client
        .query(
            "SELECT chunk_id FROM knowledge.search($1, $2, $3::text::jsonb) ORDER BY text_rank",
            &[&query, &k, &options],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

/// The chunk ids that BM25 ranks first over every chunk of the default config that `where_`
/// keeps, with knowledge.search's statistics, b 0.75 and this k1, ties by id.
fn exhaustive(client: &mut Client, query: &str, k: i64, k1: f64, where_: &str) -> Vec<i64> {
    let sql = format!(
        "SELECT c.id FROM knowledge.chunks AS c JOIN knowledge.documents AS d ON d.id = c.document_id,
                knowledge_internal.text_query('default', $1, NULL) AS q,
                LATERAL (SELECT knowledge_internal.bm25(c.tsv, q.lexemes, q.df, q.chunks, $3, 0.75, q.average_length) AS score) AS s
         WHERE c.chunk_config = 'default' AND s.score > 0 AND {where_}
         ORDER BY s.score DESC, c.id LIMIT $2"
    );
    client.query(&sql, &[&query, &k, &k1]).unwrap().iter().map(|row| row.get(0)).collect()
}

#[test]
fn text_leg_returns_exactly_the_top_k_of_exhaustive_bm25() {
    let mut client = fresh_database("text_exact");
    client.batch_execute("UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'default'").unwrap();
    let documents = documents();
    client
        .execute(
            "INSERT INTO knowledge.documents (content, metadata)
             SELECT t.content, jsonb_build_object('part', t.n % 3) FROM unnest($1::text[]) WITH ORDINALITY AS t (content, n)",
            &[&documents],
        )
        .unwrap();
    let chunks: i64 = client.query_one("SELECT count(*) FROM knowledge.chunks", &[]).unwrap().get(0);
    assert_eq!(chunks, documents.len() as i64, "one chunk per document");

    let mut numbers = Numbers(11);
    // The long ones need more sets of lexemes than the cover lists (knowledge_internal.bm25_cover
    // then falls back to its essential lexemes one by one).
    let mut queries = vec![
        "ledger".to_string(),
        "ledger quartz".to_string(),
        "tulip raven ledger".to_string(),
        WORDS[1..13].join(" "),
        WORDS[20..40].join(" "),
    ];
    queries.extend((0..40).map(|_| {
        let words: Vec<&str> = (0..1 + numbers.below(4)).map(|_| WORDS[numbers.below(WORDS.len())]).collect();
        words.join(" ")
    }));
    let mut compared = 0;
    for query in &queries {
        // k1 0: each lexeme adds exactly its idf, the most the cover's bounds allow, so a cover
        // or floor off by any margin misses chunks.
        for (k, k1, filter, where_) in [
            (10, 1.2, "", "true"),
            (3, 1.2, "", "true"),
            (10, 1.2, r#", "metadata": {"part": 1}"#, "d.metadata @> '{\"part\": 1}'"),
            (10, 0.0, r#", "k1": 0"#, "true"),
        ] {
            let expected = exhaustive(&mut client, query, k.into(), k1, where_);
            let found = text_leg(&mut client, query, k, filter);
            assert_eq!(found, expected, "{query:?}, k {k}{filter}: the text leg's top k, then exhaustive BM25's");
            compared += usize::from(expected.len() == k as usize);
        }
    }
    assert!(compared > queries.len() * 2, "only {compared} comparisons had k results");

    // The best chunks for "ledger" are the last 100 written: a scan that stops early misses them.
    let best = text_leg(&mut client, "ledger", 10, "");
    let last: i64 = client.query_one("SELECT max(id) - 100 FROM knowledge.chunks", &[]).unwrap().get(0);
    assert!(
        best.iter().all(|&id| id > last),
        "ledger's best {best:?} are not among the last 100 chunks (after {last})"
    );
}
