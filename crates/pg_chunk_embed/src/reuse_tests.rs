use super::*;
use crate::{EmbedOutput, ModelKind, ModelSpec, Pooling};
use std::cell::RefCell;
use std::path::PathBuf;

/// A 2-dimension model whose vector of a text is (its length, its role), recording what it is asked.
struct Lengths {
    spec: ModelSpec,
    asked: Vec<String>,
    dimension_out: usize,
}

fn lengths() -> Lengths {
    let spec = ModelSpec {
        name: "lengths".into(),
        kind: ModelKind::Static,
        model_file: PathBuf::new(),
        tokenizer_file: PathBuf::new(),
        dimension: 2,
        pooling: Pooling::Mean,
        normalize: false,
        max_tokens: 10,
        query_prefix: None,
        passage_prefix: None,
        output_name: None,
        optimize_graph: false,
    };
    Lengths { spec, asked: Vec::new(), dimension_out: 2 }
}

impl SentenceModel for Lengths {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    fn embed(&mut self, texts: &[&str], role: Role, _: usize, _: &mut dyn FnMut()) -> Result<EmbedOutput, EmbedError> {
        self.asked.extend(texts.iter().map(|t| t.to_string()));
        let vectors = texts.iter().flat_map(|t| [t.len() as f32, (role == Role::Query) as u8 as f32]).collect();
        Ok(EmbedOutput { dimension: self.dimension_out, vectors, truncated: 0 })
    }

    fn count_tokens(&self, text: &str) -> usize {
        text.len()
    }

    fn passage_window(&self) -> usize {
        10
    }
}

/// A store holding vectors by text, recording what it saved.
#[derive(Default)]
struct Store {
    held: Vec<(String, Vec<f32>)>,
    saved: RefCell<Vec<String>>,
}

impl VectorStore for &Store {
    fn find(&self, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
        texts.iter().map(|t| self.held.iter().find(|(h, _)| h == t).map(|(_, v)| v.clone())).collect()
    }

    fn save(&self, texts: &[&str], vectors: &[f32]) {
        assert_eq!(vectors.len(), 2 * texts.len());
        self.saved.borrow_mut().extend(texts.iter().map(|t| t.to_string()));
    }
}

fn run(model: &mut Lengths, texts: &[&str], cache: &mut EmbeddingCache, store: Option<&Store>) -> Reused {
    let embedding = Embedding { name: "lengths", scope: "", model, role: Role::Passage, batch_size: 4 };
    embed_reusing(embedding, texts, cache, || store, &mut || {}).unwrap()
}

#[test]
fn each_distinct_text_is_embedded_once_and_then_cached() {
    let (mut model, mut cache) = (lengths(), EmbeddingCache::new(1 << 20));
    let first = run(&mut model, &["ab", "c", "ab"], &mut cache, None);
    assert_eq!(first.vectors, [2.0, 0.0, 1.0, 0.0, 2.0, 0.0]);
    assert_eq!((first.cache_hits, first.stored_hits, first.embedded), (0, 0, 2));
    assert_eq!(model.asked, ["ab", "c"]);
    let again = run(&mut model, &["c", "ab", "c"], &mut cache, None);
    assert_eq!(again.vectors, [1.0, 0.0, 2.0, 0.0, 1.0, 0.0]);
    assert_eq!((again.cache_hits, again.embedded), (3, 0));
    assert_eq!(model.asked.len(), 2, "nothing embedded again");
}

#[test]
fn the_store_is_asked_before_the_model_and_keeps_what_it_made() {
    let (mut model, mut cache) = (lengths(), EmbeddingCache::new(1 << 20));
    let store =
        Store { held: vec![("stored".into(), vec![9.0, 9.0]), ("short".into(), vec![1.0])], ..Store::default() };
    let reused = run(&mut model, &["stored", "new", "short"], &mut cache, Some(&store));
    assert_eq!(reused.vectors, [9.0, 9.0, 3.0, 0.0, 5.0, 0.0], "a stored vector of another dimension is not used");
    assert_eq!((reused.stored_hits, reused.embedded), (1, 2));
    assert_eq!(*store.saved.borrow(), ["new", "short"]);
    // All cached now: the store is not opened.
    let embedding = Embedding { name: "lengths", scope: "", model: &mut model, role: Role::Passage, batch_size: 4 };
    let cached =
        embed_reusing(embedding, &["new", "stored"], &mut cache, || -> Option<&Store> { panic!("opened") }, &mut || {});
    assert_eq!(cached.unwrap().cache_hits, 2);
}

#[test]
fn roles_are_cached_apart_and_a_wrong_dimension_is_an_error() {
    let (mut model, mut cache) = (lengths(), EmbeddingCache::new(1 << 20));
    run(&mut model, &["ab"], &mut cache, None);
    let embedding = Embedding { name: "lengths", scope: "", model: &mut model, role: Role::Query, batch_size: 4 };
    let query = embed_reusing::<&Store>(embedding, &["ab"], &mut cache, || None, &mut || {}).unwrap();
    assert_eq!((query.vectors, query.embedded), (vec![2.0, 1.0], 1));
    model.dimension_out = 3;
    let embedding = Embedding { name: "lengths", scope: "", model: &mut model, role: Role::Passage, batch_size: 4 };
    let wrong = embed_reusing::<&Store>(embedding, &["new"], &mut cache, || None, &mut || {});
    assert!(matches!(wrong, Err(EmbedError::DimensionMismatch { expected: 2, found: 3 })), "{wrong:?}");
}

#[test]
fn the_caller_may_stop_the_cache_look_ups_and_stores_every_batch() {
    let (mut model, mut cache) = (lengths(), EmbeddingCache::new(1 << 20));
    let texts = ["a", "bb", "ccc", "dddd", "eeeee"];
    let mut calls = 0;
    let embedding = Embedding { name: "lengths", scope: "", model: &mut model, role: Role::Passage, batch_size: 2 };
    embed_reusing::<&Store>(embedding, &texts, &mut cache, || None, &mut || calls += 1).unwrap();
    // Three batches of look-ups and three of stores (the test model itself never calls).
    assert_eq!(calls, 6);
    calls = 0;
    let embedding = Embedding { name: "lengths", scope: "", model: &mut model, role: Role::Passage, batch_size: 2 };
    embed_reusing::<&Store>(embedding, &texts, &mut cache, || None, &mut || calls += 1).unwrap();
    assert_eq!(calls, 3, "all cached: look-ups only");
}

#[test]
fn stored_keys_differ_by_identity_scope_role_and_text() {
    let key = stored_vector_key(&[1; 32], "a", Role::Passage, "text");
    assert_ne!(key, stored_vector_key(&[2; 32], "a", Role::Passage, "text"));
    assert_ne!(key, stored_vector_key(&[1; 32], "b", Role::Passage, "text"));
    assert_ne!(key, stored_vector_key(&[1; 32], "", Role::Passage, "text"));
    assert_ne!(key, stored_vector_key(&[1; 32], "a", Role::Query, "text"));
    assert_ne!(key, stored_vector_key(&[1; 32], "a", Role::Passage, "text "));
    // The scope's length is hashed: its end cannot move into the role or the text.
    assert_ne!(
        stored_vector_key(&[1; 32], "ab", Role::Passage, "text"),
        stored_vector_key(&[1; 32], "a", Role::Passage, "btext")
    );
    assert_eq!(key, stored_vector_key(&[1; 32], "a", Role::Passage, "text"));
}

#[test]
fn scopes_are_cached_apart() {
    let (mut model, mut cache) = (lengths(), EmbeddingCache::new(1 << 20));
    for (scope, embedded) in [("a", 1), ("a", 0), ("b", 1)] {
        let embedding = Embedding { name: "lengths", scope, model: &mut model, role: Role::Passage, batch_size: 4 };
        let reused = embed_reusing::<&Store>(embedding, &["ab"], &mut cache, || None, &mut || {}).unwrap();
        assert_eq!((reused.embedded, reused.cache_hits), (embedded, 1 - embedded), "scope {scope}");
    }
}
