use super::super::ChunkConfig;
use super::*;
use serde_json::json;

/// Reading group by group keeps the order of `KEYS`: of two bad keys, the earlier is blamed.
#[test]
fn of_two_bad_keys_the_first_in_keys_is_blamed() {
    for (i, first) in KEYS.iter().enumerate() {
        for second in &KEYS[i + 1..] {
            // An array is a bad value for every key.
            let cfg = json!({ *first: [], *second: [] });
            match ChunkConfig::parse(&cfg) {
                Err(ChunkError::InvalidConfig { key, .. }) => assert_eq!(key, *first, "{cfg}"),
                other => panic!("{cfg}: {other:?}"),
            }
        }
    }
}

#[test]
fn each_group_reads_its_own_keys() {
    let cfg = json!({"method": "threshold", "smoothing": 2, "model": "m", "fallback": "fixed", "language": "rust"});
    let keys = Keys::of(&cfg).unwrap();
    assert_eq!(keys.strategy(), Ok(Strategy::Semantic));
    assert!(matches!(keys.semantic_method(), Ok((Boundaries::Threshold(_), 2))));
    assert_eq!(keys.sizes(), Ok((ExplicitSizes::default(), None)));
    assert_eq!(keys.embedding(), Ok((Some("m".to_string()), Fallback::Fixed)));
    assert_eq!(keys.limits(), Ok((DEFAULT_INLINE_THRESHOLD, DEFAULT_MAX_DOCUMENT_SIZE)));
    assert_eq!(keys.structure(), Ok((Some("rust".to_string()), false)));
    assert_eq!(keys.output(), Ok((false, false)));
}
