//! The checks of a successful case's rows (see `Check`).

use super::{describe, truncate, Case, Check};
use postgres::{GenericClient, Row};

/// What is wrong with the rows of a successful case, if anything.
pub(super) fn check(db: &mut impl GenericClient, case: &Case, rows: &[Row]) -> Option<String> {
    let problems = match case.check {
        Check::Nothing => Vec::new(),
        Check::Spans => check_spans(case.params.first().cloned().flatten().as_deref().unwrap_or(""), rows),
        Check::Explain => check_explain(case.params.first().cloned().flatten().as_deref().unwrap_or(""), rows),
        Check::Svg => rows
            .iter()
            .filter_map(|r| {
                let svg: Option<String> = r.get(0);
                let svg = svg?;
                let t = svg.trim();
                (!(t.starts_with("<svg") || t.starts_with("<?xml")) || !t.ends_with("</svg>") || t.contains("NaN"))
                    .then(|| format!("not a clean SVG: {}", truncate(t, 80)))
            })
            .collect(),
        Check::Vectors(dim) => rows
            .iter()
            .filter_map(|r| {
                let (dims, nan): (Option<i32>, Option<bool>) = (r.get(0), r.get(1));
                match dims {
                    Some(d) if d != dim => Some(format!("{d} dimensions, not {dim}")),
                    Some(_) if nan == Some(true) => Some("NaN in a vector".to_string()),
                    _ => None,
                }
            })
            .collect(),
        Check::Count => {
            rows.iter().filter_map(|r| first_int(r).filter(|&n| n < 0).map(|n| format!("negative count {n}"))).collect()
        }
        Check::IsTrue => match rows.first().map(|r| r.get::<_, Option<bool>>(0)) {
            Some(Some(true)) => Vec::new(),
            other => vec![format!("expected true, got {other:?}")],
        },
        Check::Search => rows
            .iter()
            .filter_map(|r| {
                let (id, score, similarity): (i64, Option<f64>, Option<f64>) = (r.get(0), r.get(1), r.get(2));
                if !score.is_some_and(f64::is_finite) {
                    Some(format!("chunk {id}: score {score:?}"))
                } else if similarity.is_some_and(f64::is_nan) {
                    Some(format!("chunk {id}: similarity NaN"))
                } else {
                    None
                }
            })
            .collect(),
        Check::Stored => match rows.first() {
            None => vec!["no document id returned".to_string()],
            Some(r) => store_problems(db, Some(r.get::<_, i64>(0))),
        },
        Check::StoreExact => store_problems(db, None),
    };
    (!problems.is_empty())
        .then(|| format!("{} problem(s), first {}", problems.len(), problems[..problems.len().min(3)].join("; ")))
}

fn first_int(row: &Row) -> Option<i64> {
    row.try_get::<_, Option<i32>>(0)
        .map(|v| v.map(i64::from))
        .or_else(|_| row.try_get::<_, Option<i64>>(0))
        .ok()
        .flatten()
}

/// Rows of (index, content, char_offset, char_length[, token_count]) against the document.
fn check_spans(doc: &str, rows: &[Row]) -> Vec<String> {
    let chars: Vec<char> = doc.chars().collect();
    let mut problems = Vec::new();
    let mut previous_offset = -1i64;
    for (i, row) in rows.iter().enumerate() {
        let (index, content, offset, length): (i32, String, i32, i32) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        let (offset, length) = (offset as i64, length as i64);
        if index as usize != i {
            problems.push(format!("row {i} has index {index}"));
        }
        if length <= 0 || content.is_empty() {
            problems.push(format!("row {i} is empty (char_length {length})"));
        }
        if offset < previous_offset {
            problems.push(format!("row {i} starts at {offset}, before row {}'s {previous_offset}", i - 1));
        }
        previous_offset = offset;
        if offset < 0 || offset + length > chars.len() as i64 {
            problems
                .push(format!("row {i}: offsets {offset}+{length} outside a document of {} characters", chars.len()));
            continue;
        }
        let expected: String = chars[offset as usize..(offset + length) as usize].iter().collect();
        if expected != content {
            problems.push(format!(
                "row {i}: content {:?} is not substr(doc, {}, {length}) = {:?}",
                truncate(&content, 40),
                offset + 1,
                truncate(&expected, 40)
            ));
        }
        if content.chars().count() as i64 != length {
            problems.push(format!("row {i}: char_length {length}, content has {} characters", content.chars().count()));
        }
        if row.len() > 4 {
            let tokens: i32 = row.get(4);
            if tokens < 0 {
                problems.push(format!("row {i}: token_count {tokens}"));
            }
        }
    }
    problems
}

/// chunk_explain rows: (sentence_index, char_offset, char_length, distance, smoothed_distance,
/// threshold, score).
fn check_explain(doc: &str, rows: &[Row]) -> Vec<String> {
    let n = doc.chars().count() as i64;
    let mut problems = Vec::new();
    let mut end = 0i64;
    for (i, row) in rows.iter().enumerate() {
        let (index, offset, length): (i32, i32, i32) = (row.get(0), row.get(1), row.get(2));
        let (offset, length) = (offset as i64, length as i64);
        if index as usize != i {
            problems.push(format!("row {i} has index {index}"));
        }
        if offset < end || length <= 0 || offset + length > n {
            problems.push(format!("row {i}: sentence {offset}+{length} out of order or outside {n} characters"));
        }
        end = offset + length;
        for (column, name) in [(3, "distance"), (4, "smoothed_distance"), (5, "threshold"), (6, "score")] {
            let value: Option<f64> = row.get(column);
            if value.is_some_and(|v| !v.is_finite()) {
                problems.push(format!("row {i}: {name} {value:?}"));
            }
        }
    }
    problems
}

/// Chunks in the store (of one document, or all) that are not their document's text at their
/// offsets, are not numbered 0, 1, … per document and config, or lack a sound embedding of their
/// model's dimension. Compared here rather than with substr in SQL, which would read a 5 MB
/// document once per chunk.
fn store_problems(db: &mut impl GenericClient, document: Option<i64>) -> Vec<String> {
    let docs = "SELECT d.id, d.content FROM knowledge.documents AS d
                WHERE ($1::bigint IS NULL OR d.id = $1) AND EXISTS (SELECT FROM knowledge.chunks AS c WHERE c.document_id = d.id)";
    let chunks = "SELECT c.document_id, c.chunk_config, c.chunk_index, c.content, c.char_offset, c.char_length,
                         CASE WHEN c.embedding IS NULL THEN 'no embedding'
                              WHEN vector_dims(c.embedding) <> coalesce(m.dimension, 256) THEN format('an embedding of %s dimensions', vector_dims(c.embedding))
                              WHEN c.embedding::text LIKE '%NaN%' THEN 'NaN in its embedding' END
                  FROM knowledge.chunks AS c LEFT JOIN knowledge.models AS m ON m.name = c.model
                  WHERE ($1::bigint IS NULL OR c.document_id = $1)
                  ORDER BY c.document_id, c.chunk_config, c.chunk_index";
    let (docs, chunks) = match (db.query(docs, &[&document]), db.query(chunks, &[&document])) {
        (Ok(d), Ok(c)) => (d, c),
        (Err(e), _) | (_, Err(e)) => return vec![format!("checking the store failed: {}", describe(&e).1)],
    };
    let texts: std::collections::HashMap<i64, Vec<char>> =
        docs.iter().map(|r| (r.get::<_, i64>(0), r.get::<_, String>(1).chars().collect())).collect();
    let mut problems = Vec::new();
    let mut expected_index = (0i64, String::new(), 0i32);
    for row in &chunks {
        let (document_id, config, index, content, offset, length, embedding): (
            i64,
            String,
            i32,
            String,
            i32,
            i32,
            Option<String>,
        ) = (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4), row.get(5), row.get(6));
        let at = format!("chunk {index} of document {document_id} ({config})");
        if (document_id, &config) != (expected_index.0, &expected_index.1) {
            expected_index = (document_id, config.clone(), 0);
        }
        if index != expected_index.2 {
            problems.push(format!("{at}: expected chunk_index {}", expected_index.2));
        }
        expected_index.2 = index + 1;
        let chars = &texts[&document_id];
        let (start, end) = (offset as usize, offset as usize + length as usize);
        if offset < 0 || length <= 0 || end > chars.len() {
            problems.push(format!("{at}: offsets {offset}+{length} outside a document of {} characters", chars.len()));
        } else if chars[start..end].iter().collect::<String>() != content {
            problems.push(format!(
                "{at}: content {:?} is not substr(content, {}, {length})",
                truncate(&content, 40),
                offset + 1
            ));
        }
        if let Some(embedding) = embedding {
            problems.push(format!("{at}: {embedding}"));
        }
    }
    problems
}
