//! multilingual-e5-small in the database: semantic chunking of bilingual documents (Chinese
//! and English, Hindi and English, alternating sentence by sentence) cuts exactly where
//! tests/fixtures/topics_marks.json says a topic begins, and search matches across languages.

use pg_chunk_client_tests::connect;
use serde_json::Value;

/// The fixtures are short (about 1,000 characters), below the default inline_threshold.
const E5: &str = r#"{"model": "multilingual-e5-small", "inline_threshold": 0}"#;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn chunk_starts(doc: &str, cfg: &str) -> Vec<i32> {
    let mut client = connect();
    let rows = client
        .query(
            "SELECT char_offset FROM knowledge.semantic_chunk($1, $2::text::jsonb) ORDER BY chunk_index",
            &[&doc, &cfg],
        )
        .unwrap();
    rows.iter().map(|row| row.get(0)).collect()
}

#[test]
fn bilingual_documents_are_cut_where_their_topic_changes() {
    let marks: Value = serde_json::from_str(&fixture("topics_marks.json")).unwrap();
    for file in ["zh_en_topics.txt", "hi_en_topics.txt"] {
        let expected: Vec<i32> = marks["files"][file]["topic_starts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap() as i32)
            .collect();
        assert_eq!(chunk_starts(&fixture(file), E5), expected, "{file}");
    }
}

#[test]
fn an_english_query_finds_the_chinese_and_hindi_passages_on_its_topic() {
    let mut client = connect();
    let passages = [
        ("zh", "包好的饺子放进开水里煮，水开后加一碗凉水。"),
        ("zh", "昨晚我用望远镜观察了木星和它的卫星。"),
        ("hi", "शनिवार के फाइनल मैच में हमारे स्ट्राइकर ने हेडर से गोल किया।"),
        ("hi", "दिल्ली जाने वाली ट्रेन दो घंटे देरी से चल रही है।"),
    ];
    let queries = [
        ("How do you cook dumplings?", 0),
        ("Looking at Jupiter through a telescope", 1),
        ("Who scored in the football final?", 2),
    ];
    for (query, expected) in queries {
        let best: i64 = client
            .query_one(
                "SELECT p.i FROM unnest($1::text[]) WITH ORDINALITY AS p(passage, i)
                 ORDER BY knowledge.embed(p.passage, 'multilingual-e5-small', 'passage')
                          <=> knowledge.embed($2, 'multilingual-e5-small', 'query') LIMIT 1",
                &[&passages.iter().map(|p| p.1).collect::<Vec<_>>(), &query],
            )
            .unwrap()
            .get(0);
        assert_eq!(best - 1, expected as i64, "{query}: nearest is {:?}", passages[(best - 1) as usize]);
    }
}
