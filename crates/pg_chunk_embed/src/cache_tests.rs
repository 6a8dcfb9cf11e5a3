use super::*;

/// Capacity for exactly `count` entries of `text_len`-byte texts with 2-d vectors.
fn room_for(count: usize, text_len: usize) -> usize {
    count * (text_len + 8 + ENTRY_OVERHEAD_BYTES)
}

#[test]
fn returns_what_was_inserted_per_model() {
    let mut cache = EmbeddingCache::new(room_for(10, 1));
    cache.insert("m1", "a", vec![1.0, 2.0]);
    cache.insert("m2", "a", vec![3.0, 4.0]);
    assert_eq!(cache.get("m1", "a"), Some(&[1.0, 2.0][..]));
    assert_eq!(cache.get("m2", "a"), Some(&[3.0, 4.0][..]));
    assert_eq!(cache.get("m1", "b"), None);
    assert_eq!(cache.get("m3", "a"), None);
    assert_eq!(cache.len(), 2);
}

#[test]
fn evicts_least_recently_used_first() {
    let mut cache = EmbeddingCache::new(room_for(3, 1));
    cache.insert("m", "a", vec![0.0, 1.0]);
    cache.insert("m", "b", vec![0.0, 2.0]);
    cache.insert("m", "c", vec![0.0, 3.0]);
    assert!(cache.get("m", "a").is_some()); // a is now the most recent; b the least
    cache.insert("m", "d", vec![0.0, 4.0]);
    assert!(cache.get("m", "b").is_none());
    for text in ["a", "c", "d"] {
        assert!(cache.get("m", text).is_some(), "{text}");
    }
    // order of use now: a, c, d → inserting two evicts a then c
    cache.insert("m", "e", vec![0.0, 5.0]);
    cache.insert("m", "f", vec![0.0, 6.0]);
    assert!(cache.get("m", "a").is_none() && cache.get("m", "c").is_none());
    assert!(cache.get("m", "d").is_some() && cache.get("m", "e").is_some());
}

#[test]
fn never_exceeds_its_byte_bound() {
    let capacity = 1_000;
    let mut cache = EmbeddingCache::new(capacity);
    for i in 0..500usize {
        let text = "x".repeat(i % 37);
        cache.insert(&format!("m{}", i % 3), &text, vec![i as f32; i % 11]);
        if i % 4 == 0 {
            cache.get("m1", &"x".repeat(i % 5));
        }
        assert!(cache.bytes() <= capacity, "{} > {capacity} after {i}", cache.bytes());
        let counted: usize = cache.entries.iter().map(|(key, vector)| entry_bytes(key.text(), vector.len())).sum();
        assert_eq!(counted, cache.bytes());
    }
}

#[test]
fn replacing_an_entry_counts_it_once() {
    let mut cache = EmbeddingCache::new(room_for(5, 1));
    cache.insert("m", "a", vec![1.0, 1.0]);
    cache.insert("m", "a", vec![2.0, 2.0]);
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.bytes(), entry_bytes("a", 2));
    assert_eq!(cache.get("m", "a"), Some(&[2.0, 2.0][..]));
}

#[test]
fn capacity_zero_stores_nothing() {
    let mut cache = EmbeddingCache::new(0);
    cache.insert("m", "a", vec![1.0]);
    assert_eq!((cache.len(), cache.bytes()), (0, 0));
    assert!(cache.get("m", "a").is_none());
}

#[test]
fn an_entry_larger_than_the_capacity_is_not_stored_and_evicts_nothing() {
    let mut cache = EmbeddingCache::new(room_for(2, 1));
    cache.insert("m", "a", vec![1.0, 1.0]);
    cache.insert("m", "huge", vec![0.0; 1_000]);
    assert!(cache.get("m", "huge").is_none());
    assert!(cache.get("m", "a").is_some());
}

#[test]
fn shrinking_and_clearing() {
    let mut cache = EmbeddingCache::new(room_for(4, 1));
    for text in ["a", "b", "c", "d"] {
        cache.insert("m", text, vec![0.0, 0.0]);
    }
    cache.set_capacity(room_for(2, 1));
    assert_eq!(cache.len(), 2);
    assert!(cache.get("m", "c").is_some() && cache.get("m", "d").is_some());
    cache.clear();
    assert!(cache.is_empty() && cache.bytes() == 0 && cache.get("m", "c").is_none());
}

#[test]
fn a_model_and_a_text_are_one_key_wherever_they_meet() {
    // The parts of a key, not their concatenation, make it: "ab" + "c" is not "a" + "bc".
    let mut cache = EmbeddingCache::new(room_for(10, 2));
    cache.insert("ab", "c", vec![1.0, 1.0]);
    cache.insert("a", "bc", vec![2.0, 2.0]);
    assert_eq!(cache.get("ab", "c"), Some(&[1.0, 1.0][..]));
    assert_eq!(cache.get("a", "bc"), Some(&[2.0, 2.0][..]));
    assert_eq!(cache.get("abc", ""), None);
    assert_eq!(cache.len(), 2);
}
