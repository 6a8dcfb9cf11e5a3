//! Unknown model names, bad roles, and models that do not fit their files or their chunks.

use super::{doc, Check, Expect, Matrix, BAD_CFG, CHECK_VIOLATION, DIM_256, MISFIT, NO_ROWS, OK, ONE_ROW, UNKNOWN};
use pg_chunk_client_tests::sample_document;
use std::rc::Rc;

/// Model names nobody registered (and, last, ones a cfg refuses as empty).
const UNKNOWN_MODELS: &[&str] = &[
    "nope",
    "ALL-MINILM-L6-V2",
    "potion-base-8m ",
    " lexical",
    "LEXICAL",
    "../potion-base-8m",
    "/etc/passwd",
    "potion-base-8m\u{200b}",
    "модель",
    "lexical'; DROP TABLE knowledge.models; --",
];

/// Roles other than `query` and `passage`.
const BAD_ROLES: &[&str] = &[
    "QUERY",
    "Passage",
    " query",
    "query ",
    "",
    "document",
    "query\tpassage",
    "запрос",
    "passage'; DROP TABLE knowledge.documents; --",
];

/// Unknown model names in every place a model is named, and roles other than query/passage.
pub(super) fn models_and_roles(m: &mut Matrix) {
    let sample = doc(&sample_document());
    for name in UNKNOWN_MODELS {
        let n = doc(name);
        let short: String = name.chars().take(24).collect();
        let label = |f: &str| format!("{f} × unknown model {short:?}");
        m.add(
            label("embed"),
            "SELECT knowledge.embed('Bees fly.', $1::text)",
            vec![n.clone()],
            Check::Nothing,
            UNKNOWN,
        );
        m.add(
            label("embed_batch"),
            "SELECT * FROM knowledge.embed_batch(ARRAY['Bees fly.'], $1::text)",
            vec![n.clone()],
            Check::Nothing,
            UNKNOWN,
        );
        m.add(
            label("token_count"),
            "SELECT knowledge.token_count('Bees fly.', $1::text)",
            vec![n.clone()],
            Check::Nothing,
            UNKNOWN,
        );
        let cfg = Some(Rc::from(serde_json::json!({ "model": name }).to_string().as_str()));
        for f in ["chunk", "semantic_chunk", "chunk_explain"] {
            m.add(
                label(&format!("{f} cfg")),
                format!("SELECT * FROM knowledge.{f}($1::text, $2::text::jsonb)"),
                vec![sample.clone(), cfg.clone()],
                Check::Nothing,
                UNKNOWN,
            );
        }
        m.add(
            label("chunk of one char, cfg"),
            "SELECT * FROM knowledge.chunk('a', $1::text::jsonb)",
            vec![cfg.clone()],
            Check::Nothing,
            UNKNOWN,
        );
        m.add(
            label("chunk_plot cfg"),
            "SELECT knowledge.chunk_plot($1::text, $2::text::jsonb)",
            vec![sample.clone(), cfg.clone()],
            Check::Nothing,
            UNKNOWN,
        );
        m.add(
            label("embed_chunks model"),
            "SELECT * FROM knowledge_internal.embed_chunks('Bees fly. Lava flows.', '{\"model\": \"lexical\"}', $1::text)",
            vec![n.clone()],
            Check::Nothing,
            UNKNOWN,
        );
        m.add(
            label("chunk_configs.model"),
            "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('m', $1::text)",
            vec![n.clone()],
            Check::Nothing,
            UNKNOWN,
        )
        .rolled_back(&[]);
        m.add(
            label("chunk_configs.cfg model"),
            "INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('m', $1::text::jsonb, 'lexical')",
            vec![cfg.clone()],
            Check::Nothing,
            UNKNOWN,
        )
        .rolled_back(&[]);
        m.add(
            label("search config"),
            "SELECT * FROM knowledge.search('bees', 5, jsonb_build_object('config', $1::text))",
            vec![n.clone()],
            Check::Nothing,
            UNKNOWN,
        );
        m.add(
            label("rechunk config"),
            "SELECT knowledge.rechunk((SELECT min(id) FROM knowledge.documents), $1::text)",
            vec![n.clone()],
            Check::Nothing,
            UNKNOWN,
        )
        .rolled_back(&[]);
        m.add(
            label("rechunk_all config"),
            "SELECT knowledge.rechunk_all($1::text)",
            vec![n.clone()],
            Check::Nothing,
            UNKNOWN,
        )
        .rolled_back(&[]);
        m.add(
            label("attach config"),
            "SELECT knowledge.attach('bad_src', 'id', 'body', $1::text)",
            vec![n.clone()],
            Check::Nothing,
            UNKNOWN,
        )
        .rolled_back(&[]);
        m.add(label("default_model setting"), "SELECT knowledge.embed('Bees fly.')", vec![], Check::Nothing, UNKNOWN)
            .rolled_back(&[&format!("SET LOCAL pg_chunk.default_model = '{}'", name.replace('\'', "''"))]);
    }
    for name in ["", "   "] {
        let label = |f: &str| format!("{f} × empty model {name:?}");
        m.add(
            label("embed"),
            "SELECT knowledge.embed('Bees fly.', $1::text)",
            vec![doc(name)],
            Check::Nothing,
            UNKNOWN,
        );
        m.add(
            label("token_count"),
            "SELECT knowledge.token_count('Bees fly.', $1::text)",
            vec![doc(name)],
            Check::Nothing,
            UNKNOWN,
        );
        m.add(
            label("chunk cfg"),
            "SELECT * FROM knowledge.chunk('Bees fly.', jsonb_build_object('model', $1::text))",
            vec![doc(name)],
            Check::Nothing,
            BAD_CFG,
        );
        m.add(
            label("chunk_configs.model"),
            "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('m', $1::text)",
            vec![doc(name)],
            Check::Nothing,
            UNKNOWN,
        )
        .rolled_back(&[]);
    }

    for role in BAD_ROLES {
        let r = doc(role);
        let label = |f: &str| format!("{f} × role {role:?}");
        m.add(
            label("embed lexical"),
            "SELECT knowledge.embed('Bees fly.', 'lexical', $1::text)",
            vec![r.clone()],
            Check::Nothing,
            BAD_CFG,
        );
        m.add(
            label("embed potion"),
            "SELECT knowledge.embed('Bees fly.', 'potion-base-8m', $1::text)",
            vec![r.clone()],
            Check::Nothing,
            BAD_CFG,
        );
        m.add(
            label("embed e5 (prefixed model)"),
            "SELECT knowledge.embed('Bees fly.', 'multilingual-e5-small', $1::text)",
            vec![r.clone()],
            Check::Nothing,
            BAD_CFG,
        );
        m.add(
            label("embed_batch potion"),
            "SELECT * FROM knowledge.embed_batch(ARRAY['Bees fly.', NULL], 'potion-base-8m', $1::text)",
            vec![r.clone()],
            Check::Nothing,
            BAD_CFG,
        );
        m.add(
            label("embed NULL text"),
            "SELECT knowledge.embed(NULL, 'lexical', $1::text)",
            vec![r.clone()],
            Check::Nothing,
            Expect::OneOf(&["00000", "22023"]),
        );
    }
    for role in ["query", "passage"] {
        m.add(format!("embed potion × role {role}"), "SELECT vector_dims(e), e::text LIKE '%NaN%' FROM (SELECT knowledge.embed('Bees fly.', 'potion-base-8m', $1::text) AS e) AS s", vec![doc(role)], Check::Vectors(DIM_256), ONE_ROW);
    }
    let long_role = "q".repeat(10_000);
    m.add(
        "embed × role of 10000 chars",
        "SELECT knowledge.embed('Bees fly.', 'lexical', $1::text)",
        vec![doc(&long_role)],
        Check::Nothing,
        BAD_CFG,
    );
    let long_name = "x".repeat(10_000);
    m.add(
        "embed × model name of 10000 chars",
        "SELECT knowledge.embed('Bees fly.', $1::text)",
        vec![doc(&long_name)],
        Check::Nothing,
        UNKNOWN,
    );
    m.add(
        "chunk × model name of 10000 chars",
        "SELECT * FROM knowledge.chunk('Bees fly.', jsonb_build_object('model', $1::text))",
        vec![doc(&long_name)],
        Check::Nothing,
        UNKNOWN,
    );
}

/// Models whose registration does not fit their files (dimension, kind, tokenizer, missing
/// file), vectors of the wrong dimension in the store, and a config whose model went away.
pub(super) fn dimension_mismatches(m: &mut Matrix) {
    let sample = doc(&sample_document());
    for (model, expect) in [
        ("potion-384", MISFIT),
        ("minilm-as-static", MISFIT),
        ("tok-swapped", MISFIT),
        ("missing-file", Expect::Fails("58P01")),
        // A safetensors file registered as an ONNX transformer: ONNX Runtime refuses it.
        ("potion-as-onnx", Expect::OneOf(&["42P17", "38000"])),
    ] {
        let n = doc(model);
        let label = |f: &str| format!("{f} × model {model}");
        m.add(label("embed"), "SELECT knowledge.embed('Bees fly.', $1::text)", vec![n.clone()], Check::Nothing, expect);
        m.add(
            label("embed_batch"),
            "SELECT * FROM knowledge.embed_batch(ARRAY['Bees fly.', 'Lava flows.'], $1::text)",
            vec![n.clone()],
            Check::Nothing,
            expect,
        );
        m.add(
            label("token_count"),
            "SELECT knowledge.token_count('Bees fly.', $1::text)",
            vec![n.clone()],
            Check::Nothing,
            expect,
        );
        m.add(
            label("chunk"),
            "SELECT * FROM knowledge.chunk($1::text, jsonb_build_object('model', $2::text))",
            vec![sample.clone(), n.clone()],
            Check::Nothing,
            expect,
        );
        m.add(
            label("chunk_explain"),
            "SELECT * FROM knowledge.chunk_explain($1::text, jsonb_build_object('model', $2::text))",
            vec![sample.clone(), n.clone()],
            Check::Nothing,
            expect,
        );
        m.add(label("chunk with lexical fallback"), "SELECT chunk_index, content, char_offset, char_length FROM knowledge.chunk($1::text, jsonb_build_object('model', $2::text, 'fallback', 'lexical')) ORDER BY 1", vec![sample.clone(), n.clone()], Check::Spans, OK);
        m.add(label("chunk with fixed fallback"), "SELECT chunk_index, content, char_offset, char_length FROM knowledge.chunk($1::text, jsonb_build_object('model', $2::text, 'fallback', 'fixed')) ORDER BY 1", vec![sample.clone(), n.clone()], Check::Spans, OK);
        m.add(
            label("embed_chunks"),
            "SELECT * FROM knowledge_internal.embed_chunks($1::text, '{\"model\": \"lexical\"}', $2::text)",
            vec![sample.clone(), n.clone()],
            Check::Nothing,
            expect,
        );
        // A config embedding with it rechunks the store's documents at once: refused whole.
        m.add(
            label("chunk_configs insert"),
            "INSERT INTO knowledge.chunk_configs (name, model) VALUES ('misfit', $1::text)",
            vec![n.clone()],
            Check::Nothing,
            expect,
        )
        .rolled_back(&[]);
        m.add(
            label("chunk_configs model changed"),
            "UPDATE knowledge.chunk_configs SET model = $1::text WHERE name = 'potion'",
            vec![n.clone()],
            Check::Nothing,
            expect,
        )
        .rolled_back(&[]);
        m.add(label("chunk_configs cuts with it, lexical embeds"), "INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('misfit', jsonb_build_object('model', $1::text), 'lexical')", vec![n.clone()], Check::Nothing, expect).rolled_back(&[]);
    }
    // The transformer registered with the wrong dimension (one MiniLM load).
    m.add(
        "embed × transformer registered with 256 dimensions",
        "SELECT knowledge.embed('Bees fly.', 'minilm-256')",
        vec![],
        Check::Nothing,
        MISFIT,
    );
    // Through chunking the same failure has the same SQLSTATE (it was 38000 there).
    m.add(
        "chunk × transformer registered with 256 dimensions",
        "SELECT count(*) FROM knowledge.chunk('Bees fly. Volcanoes erupt. Glaciers slide.', '{\"model\": \"minilm-256\", \"inline_threshold\": 0}')",
        vec![],
        Check::Nothing,
        MISFIT,
    );
    // A config whose cut model (cfg) and embedding model (column) differ in dimension: allowed,
    // and its vectors are the column model's.
    m.add("config cutting with potion (256), embedding with lexical", "INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('two-models', '{\"model\": \"potion-base-8m\"}', 'lexical')", vec![], Check::StoreExact, NO_ROWS).rolled_back(&[]);
    m.add(
        "config halfvec with a 256-dimension model",
        "INSERT INTO knowledge.chunk_configs (name, model, halfvec) VALUES ('half', 'potion-base-8m', true)",
        vec![],
        Check::StoreExact,
        NO_ROWS,
    )
    .rolled_back(&[]);
    m.add("search of a config cutting and embedding with different models", "SELECT chunk_id, score, similarity FROM knowledge.search('bees in winter', 5, '{\"config\": \"two-models\"}')", vec![], Check::Search, OK)
        .rolled_back(&["INSERT INTO knowledge.chunk_configs (name, cfg, model) VALUES ('two-models', '{\"model\": \"potion-base-8m\"}', 'lexical')"]);
    // Vectors of the wrong dimension written into knowledge.chunks by hand: the config's HNSW
    // index refuses them (pgvector, 22000); a lexical config has no index, so search meets them.
    let bad_chunk = "INSERT INTO knowledge.chunks (document_id, chunk_config, chunk_index, content, char_offset, char_length, token_count, model, embedding, tsv, run_id) \
         SELECT c.document_id, c.chunk_config, 1000, 'x', 0, 1, 1, c.model, '[1,2,3]', to_tsvector('bees'), c.run_id FROM knowledge.chunks AS c WHERE c.chunk_config = '{config}' LIMIT 1";
    m.add(
        "3-dimension vector into an indexed config's chunks",
        bad_chunk.replace("{config}", "potion"),
        vec![],
        Check::Nothing,
        Expect::Fails("22000"),
    )
    .rolled_back(&[]);
    m.add("search meeting a 3-dimension vector", "SELECT chunk_id, score, similarity FROM knowledge.search('bees', 5, '{\"config\": \"lex\", \"mode\": \"vector\"}')", vec![], Check::Search, Expect::OneOf(&["00000", "22000"]))
        .rolled_back(&[&bad_chunk.replace("{config}", "lex")]);
    m.add(
        "model's registered dimension changed under its chunks",
        "UPDATE knowledge.models SET dimension = 384 WHERE name = 'potion-base-8m'",
        vec![],
        Check::Nothing,
        Expect::OneOf(&["22000", "42P17"]),
    )
    .rolled_back(&[]);
    m.add(
        "search of a config whose model was unregistered",
        "SELECT * FROM knowledge.search('bees', 5, '{\"config\": \"potion\"}')",
        vec![],
        Check::Nothing,
        UNKNOWN,
    )
    .rolled_back(&["DELETE FROM knowledge.models WHERE name = 'potion-base-8m'"]);
    m.add(
        "rechunk of a config whose model was unregistered",
        "SELECT knowledge.rechunk((SELECT min(id) FROM knowledge.documents), 'potion')",
        vec![],
        Check::Nothing,
        UNKNOWN,
    )
    .rolled_back(&["DELETE FROM knowledge.models WHERE name = 'potion-base-8m'"]);
    m.add(
        "embed_chunks_batch with arrays of different lengths",
        "SELECT * FROM knowledge_internal.embed_chunks_batch(ARRAY[1, 2]::bigint[], ARRAY['a'], '{}', 'lexical')",
        vec![],
        Check::Nothing,
        BAD_CFG,
    );
    // Registrations the models table refuses.
    for (label, values) in [
        ("named lexical", "('lexical', 'static', 'a/m', 'a/t', 256)"),
        ("name in capitals", "('Bad', 'static', 'a/m', 'a/t', 256)"),
        ("absolute model file", "('bad', 'static', '/etc/passwd', 'a/t', 256)"),
        ("model file with ..", "('bad', 'static', 'a/../../../etc/passwd', 'a/t', 256)"),
        ("tokenizer file with ..", "('bad', 'static', 'a/m', '../t', 256)"),
        ("dimension 0", "('bad', 'static', 'a/m', 'a/t', 0)"),
        ("dimension -1", "('bad', 'static', 'a/m', 'a/t', -1)"),
        ("dimension 16001", "('bad', 'static', 'a/m', 'a/t', 16001)"),
        ("unknown kind", "('bad', 'magic', 'a/m', 'a/t', 256)"),
    ] {
        m.add(
            format!("register model {label}"),
            format!("INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension) VALUES {values}"),
            vec![],
            Check::Nothing,
            CHECK_VIOLATION,
        )
        .rolled_back(&[]);
    }
}
