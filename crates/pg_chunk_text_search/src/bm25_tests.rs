use super::*;

/// The bytes PostgreSQL stores for a tsvector (after the varlena header): lexemes sorted, each
/// with `positions` (none: stored without positions, as `strip()` leaves them).
fn encode(lexemes: &[(&str, usize)]) -> Vec<u8> {
    let mut sorted = lexemes.to_vec();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut entries = Vec::new();
    let mut strings: Vec<u8> = Vec::new();
    for (lexeme, positions) in sorted {
        let pos = strings.len() as u32;
        strings.extend_from_slice(lexeme.as_bytes());
        let has_positions = positions > 0;
        if has_positions {
            if strings.len() % 2 == 1 {
                strings.push(0);
            }
            strings.extend_from_slice(&(positions as u16).to_le_bytes());
            for p in 1..=positions {
                strings.extend_from_slice(&(p as u16).to_le_bytes());
            }
        }
        entries.push(u32::from(has_positions) | ((lexeme.len() as u32) << 1) | (pos << 12));
    }
    let mut data = (entries.len() as i32).to_le_bytes().to_vec();
    for entry in entries {
        data.extend_from_slice(&entry.to_le_bytes());
    }
    data.extend_from_slice(&strings);
    data
}

fn lexemes_of(data: &[u8]) -> Vec<(String, usize)> {
    TsVector::new(data).unwrap().lexemes().map(|(l, n)| (String::from_utf8(l.to_vec()).unwrap(), n)).collect()
}

#[test]
fn reads_lexemes_and_their_occurrences() {
    // Odd and even lexeme lengths put the position counts at padded and unpadded offsets.
    let data = encode(&[("rain", 2), ("cat", 1), ("spain", 3), ("é", 1), ("plain", 0)]);
    assert_eq!(
        lexemes_of(&data),
        vec![("cat".into(), 1), ("plain".into(), 1), ("rain".into(), 2), ("spain".into(), 3), ("é".into(), 1)]
    );
    assert_eq!(lexemes_of(&encode(&[])), vec![]);
}

#[test]
fn malformed_bytes_never_panic() {
    assert!(TsVector::new(&[]).is_none());
    assert!(TsVector::new(&[5, 0, 0, 0]).is_none(), "five entries declared, none there");
    assert!(TsVector::new(&(-1i32).to_le_bytes()).is_none());
    let mut data = encode(&[("alpha", 2), ("beta", 1)]);
    data.truncate(data.len() - 5);
    // What is cut off is absent; the rest still reads.
    let tsv = TsVector::new(&data).unwrap();
    assert!(tsv.lexemes().count() < 2);
    let bm25 = Bm25 { k1: 1.2, b: 0.75, average_length: 3.0 };
    assert!(bm25.score(&tsv, &[(b"beta".as_slice(), 1.0)]).is_finite());
}

/// The formula written out for one chunk, as a reader would compute it by hand.
fn by_hand(tf: &[(f64, f64)], length: f64, k1: f64, b: f64, average: f64) -> f64 {
    tf.iter().map(|&(tf, idf)| idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * length / average))).sum()
}

#[test]
fn scores_as_okapi_bm25() {
    let data = encode(&[("rain", 2), ("spain", 1), ("plain", 3), ("fall", 0)]);
    let tsv = TsVector::new(&data).unwrap();
    let bm25 = Bm25 { k1: 1.2, b: 0.75, average_length: 5.0 };
    let lexemes = vec!["spain".to_string(), "rain".to_string(), "absent".to_string(), "rain".to_string()];
    let terms = sorted_terms(&lexemes, &[0.5, 2.0, 9.0, 7.0]);
    assert_eq!(terms, vec![(b"absent".as_slice(), 9.0), (b"rain".as_slice(), 2.0), (b"spain".as_slice(), 0.5)]);
    // Length 2 + 1 + 3 + 1 = 7 occurrences.
    let expected = by_hand(&[(2.0, 2.0), (1.0, 0.5)], 7.0, 1.2, 0.75, 5.0);
    assert!((bm25.score(&tsv, &terms) - expected).abs() < 1e-12);
    // b = 0 ignores length; no matching term scores 0.
    let flat = Bm25 { b: 0.0, ..bm25 };
    assert!((flat.score(&tsv, &terms) - by_hand(&[(2.0, 2.0), (1.0, 0.5)], 0.0, 1.2, 0.0, 5.0)).abs() < 1e-12);
    assert_eq!(bm25.score(&tsv, &sorted_terms(&["nothing".to_string()], &[3.0])), 0.0);
}

#[test]
fn more_occurrences_score_higher_and_saturate() {
    let bm25 = Bm25 { k1: 1.2, b: 0.0, average_length: 10.0 };
    let lexemes = ["rain".to_string()];
    let terms = sorted_terms(&lexemes, &[1.0]);
    let scores: Vec<f64> =
        [1, 2, 4, 100].iter().map(|&n| bm25.score(&TsVector::new(&encode(&[("rain", n)])).unwrap(), &terms)).collect();
    assert!(scores.windows(2).all(|w| w[0] < w[1]), "{scores:?}");
    assert!(scores[3] < 1.0 * (1.2 + 1.0), "bounded by idf · (k1 + 1): {scores:?}");
}

#[test]
fn idf_is_positive_and_falls_with_frequency() {
    assert!(idf(100.0, 1.0) > idf(100.0, 10.0));
    assert!(idf(100.0, 100.0) > 0.0, "a term in every chunk still counts a little");
    assert!((idf(10.0, 2.0) - (1.0f64 + 8.5 / 2.5).ln()).abs() < 1e-12);
}
