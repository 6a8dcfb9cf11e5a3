use super::*;
use crate::{Pooling, SentenceModel};

fn potion() -> StaticModel {
    let dir = std::env::var_os("PG_CHUNK_MODEL_DIR")
        .expect("PG_CHUNK_MODEL_DIR names the installed models (scripts/test.sh sets it)");
    let dir = std::path::Path::new(&dir).join("potion-base-8m");
    let spec = ModelSpec {
        name: "potion-base-8m".into(),
        kind: crate::ModelKind::Static,
        model_file: dir.join("model.safetensors"),
        tokenizer_file: dir.join("tokenizer.json"),
        dimension: 256,
        pooling: Pooling::Mean,
        normalize: true,
        max_tokens: 512,
        query_prefix: None,
        passage_prefix: None,
        output_name: None,
        optimize_graph: false,
    };
    StaticModel::load(&spec).unwrap()
}

#[test]
fn potion_drops_unknown_words_with_its_compact_word_piece_model() {
    let mut model = potion();
    let tokenizer = model.tokenizer.tokenizer();
    assert!(matches!(tokenizer.get_model(), TokenizerModel::WordPiece(_)));
    let unknown = tokenizer.token_to_id("[UNK]").expect("potion's vocabulary has [UNK]");
    assert_eq!(model.unknown_token_id, Some(unknown));
    // "𝄞" is not in the vocabulary: the tokenizer gives [UNK], which the model leaves out.
    assert_eq!(tokenizer.encode("𝄞", false).unwrap().get_ids(), [unknown]);
    let output = model.embed(&["a musical clef 𝄞", "a musical clef", "𝄞"], Role::Passage, 8, &mut || {}).unwrap();
    assert_eq!(output.row(0), output.row(1));
    assert!(output.row(1).iter().any(|&value| value != 0.0));
    assert!(output.row(2).iter().all(|&value| value == 0.0));
}
