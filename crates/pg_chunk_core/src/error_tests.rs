use super::*;

#[derive(Debug, PartialEq, thiserror::Error)]
#[error("model failed")]
struct ModelFailure(u32);

#[test]
fn an_embedders_error_comes_back_as_itself() {
    let ChunkError::Embedder(error) = ChunkError::embedder(ModelFailure(7)) else { panic!("not Embedder") };
    assert_eq!(error.to_string(), "model failed");
    assert_eq!(error.downcast::<ModelFailure>().ok(), Some(ModelFailure(7)));
    let ChunkError::Embedder(error) = ChunkError::embedder(ModelFailure(7)) else { panic!("not Embedder") };
    assert!(error.downcast::<std::fmt::Error>().is_err(), "another type is not taken for it");
}
