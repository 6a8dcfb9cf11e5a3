//! Does tree-sitter serve the code strategy better than its line rules? Parses about 1 MB of
//! Python (Debian's textwrap.py, repeated) and Rust (the code strategy's definitions.rs, repeated) with tree-sitter
//! and times it against the whole code strategy on the same text. See README.md.

use std::time::Instant;
use pg_chunk_core::{chunk_document, ChunkConfig};
use pg_chunk_core::lexical::LexicalEmbedder;
use pg_chunk_core::size::EstimatedTokens;

fn top_level_defs(tree: &tree_sitter::Tree) -> usize {
    let root = tree.root_node();
    let mut cursor = root.walk();
    root.children(&mut cursor).filter(|n| matches!(n.kind(), "function_definition" | "class_definition" | "decorated_definition" | "function_item" | "impl_item" | "struct_item" | "enum_item")).count()
}

fn main() {
    for (name, path, lang) in [
        ("python", "/usr/lib/python3.11/textwrap.py", tree_sitter::Language::new(tree_sitter_python::LANGUAGE)),
        ("rust", concat!(env!("CARGO_MANIFEST_DIR"), "/../../../crates/pg_chunk_core/src/strategy/code/definitions.rs"), tree_sitter::Language::new(tree_sitter_rust::LANGUAGE)),
    ] {
        let one = std::fs::read_to_string(path).unwrap();
        let text = one.repeat(1_000_000 / one.len() + 1); // ~1 MB
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&lang).unwrap();
        let mut ts = Vec::new();
        let mut defs = 0;
        for _ in 0..5 {
            let t = Instant::now();
            let tree = parser.parse(&text, None).unwrap();
            defs = top_level_defs(&tree);
            ts.push(t.elapsed().as_secs_f64());
        }
        let cfg = ChunkConfig::parse(&serde_json::json!({"strategy": "code", "language": name})).unwrap();
        let mut ours = Vec::new();
        let mut chunks = 0;
        for _ in 0..5 {
            let t = Instant::now();
            chunks = chunk_document(&text, &cfg, &mut LexicalEmbedder::new(), &EstimatedTokens).unwrap().len();
            ours.push(t.elapsed().as_secs_f64());
        }
        ts.sort_by(f64::total_cmp); ours.sort_by(f64::total_cmp);
        println!("{name}: {:.2} MB; tree-sitter parse alone median {:.1} ms ({defs} top-level definitions); pg_chunk code strategy (scan + pack + token counts) median {:.1} ms ({chunks} chunks)", text.len() as f64 / 1e6, ts[2] * 1e3, ours[2] * 1e3);
    }
}
