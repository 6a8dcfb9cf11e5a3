use super::*;

#[test]
fn keywords_drop_short_and_function_words_and_lowercase() {
    let words: Vec<String> = keywords("The Bees and the HIVE, in winter: a cluster of 42 bees.").into_iter().collect();
    assert_eq!(words, ["bees", "cluster", "hive", "winter"]);
}

#[test]
fn jaccard_is_overlap_over_union() {
    let a = keywords("bees hive winter");
    let b = keywords("bees hive summer honey");
    assert!((jaccard(&a, &b) - 2.0 / 5.0).abs() < 1e-12);
    assert_eq!(jaccard(&BTreeSet::new(), &BTreeSet::new()), 0.0);
}

#[test]
fn entropy_grows_with_variety() {
    assert_eq!(char_entropy(""), 0.0);
    assert_eq!(char_entropy("aaaa"), 0.0);
    assert!((char_entropy("abab") - 1.0).abs() < 1e-12);
    assert!((char_entropy("abcd") - 2.0).abs() < 1e-12);
    assert!(char_entropy("The quick brown fox.") > char_entropy("aaaa bbbb"));
}
