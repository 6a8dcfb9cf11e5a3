use super::is_ideograph;

#[test]
fn ideographs_kana_and_hangul_syllables_are_units_latin_and_punctuation_are_not() {
    // Han, hiragana, katakana with its prolonged sound mark and middle dot, Hangul syllables,
    // extension A, a compatibility ideograph, extension B, the compatibility supplement's last.
    for c in ['数', '据', '库', 'の', 'デ', 'ー', '・', '한', '국', '\u{3400}', '\u{F900}', '\u{20000}', '\u{2FA1D}']
    {
        assert!(is_ideograph(c), "{c:?} ({:X})", c as u32);
    }
    // Latin, Devanagari, CJK punctuation, a Kangxi radical, conjoining jamo, halfwidth katakana.
    for c in ['a', 'Z', '9', 'न', '。', '、', '\u{2F00}', '\u{1100}', '\u{FF71}', ' '] {
        assert!(!is_ideograph(c), "{c:?} ({:X})", c as u32);
    }
}

#[test]
fn the_blocks_end_where_they_end() {
    let ranges =
        [(0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F)];
    for (first, last) in ranges {
        for (u, inside) in [(first - 1, false), (first, true), (last, true), (last + 1, false)] {
            let c = char::from_u32(u).unwrap();
            assert_eq!(is_ideograph(c), inside, "U+{u:X}");
        }
    }
}
