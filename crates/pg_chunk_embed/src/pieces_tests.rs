use super::*;

const PIECES: &[&str] = &["[UNK]", "a", "ab", "##", "##b", "##bc", "#", "中文", "ab", "", "##中"];

fn table() -> PieceTable {
    PieceTable::new(PIECES.iter().copied()).unwrap()
}

/// The table searched by bytes, and the same with a hash index.
fn tables() -> [PieceTable; 2] {
    [table(), table().with_hash_index()]
}

#[test]
fn looks_up_every_piece_and_keeps_the_last_id_of_a_duplicate() {
    for table in tables() {
        looks_up_every_piece(&table);
    }
    assert!(PieceTable::new(["a", "b"]).unwrap().all_distinct());
    assert_eq!(PieceTable::new([""; 0]).unwrap().with_hash_index().lookup(""), None);
}

fn looks_up_every_piece(table: &PieceTable) {
    assert_eq!(table.len(), PIECES.len());
    assert!(!table.all_distinct());
    for (id, piece) in PIECES.iter().enumerate() {
        assert_eq!(table.piece(id as u32), *piece);
        let last = PIECES.iter().rposition(|other| other == piece).unwrap() as u32;
        assert_eq!(table.lookup(piece), Some(last), "{piece:?}");
    }
    assert_eq!(table.lookup("abc"), None);
    assert_eq!(table.lookup("中"), None);
    assert_eq!(table.get(PIECES.len() as u32), None);
    assert_eq!(table.get(7), Some("中文"));
    let vocab = table.vocab();
    assert_eq!(vocab.len(), PIECES.len() - 1);
    assert_eq!(vocab["ab"], 8);
}

#[test]
fn a_joined_lookup_equals_the_lookup_of_the_joined_string() {
    let parts = ["", "#", "##", "###", "a", "b", "bc", "bcd", "中", "中文", "[UNK]", "[U"];
    let [searched, hashed] = tables();
    let mut found = 0;
    for prefix in parts {
        for rest in parts {
            let joined = format!("{prefix}{rest}");
            let want = PIECES.iter().rposition(|piece| *piece == joined).map(|id| id as u32);
            found += usize::from(want.is_some());
            assert_eq!(searched.lookup_joined(prefix, rest), want, "{prefix:?} + {rest:?}");
            assert_eq!(hashed.lookup_joined(prefix, rest), want, "{prefix:?} + {rest:?}, hashed");
        }
    }
    assert!(found > 10);
}

#[test]
fn finds_every_piece_a_text_starts_with_shortest_first() {
    let table = table();
    for text in ["abc", "##bcd", "中文字", "x", ""] {
        let mut found = Vec::new();
        table.for_each_prefix(text.as_bytes(), |length, id| found.push((length, id)));
        let want: Vec<(usize, u32)> =
            (1..=text.len()).filter_map(|length| Some((length, table.lookup(text.get(..length)?)?))).collect();
        assert_eq!(found, want, "{text:?}");
    }
}
