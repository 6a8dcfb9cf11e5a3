use super::*;

#[test]
fn counts_characters_not_bytes_in_any_order() {
    let doc = "aé中😀b";
    let mut cursor = CharCursor::new(doc);
    let bytes: Vec<usize> = doc.char_indices().map(|(i, _)| i).collect();
    for (chars, &byte) in bytes.iter().enumerate() {
        assert_eq!(cursor.char_offset(byte), chars);
    }
    assert_eq!(cursor.char_offset(doc.len()), 5);
    assert_eq!(cursor.char_offset(1), 1, "going back recounts");
}
