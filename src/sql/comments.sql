-- Documentation of pg_chunk's functions, shown by \df+ and obj_description(). Every function in
-- schema knowledge has one (tests/tests/catalog.rs); this file runs last, after the Rust ones too.

COMMENT ON FUNCTION knowledge.chunk(text, jsonb) IS
'Chunks a document with the strategy cfg names (semantic by default). Offsets are 0-based characters: substr(doc, char_offset + 1, char_length) = content.';

COMMENT ON FUNCTION knowledge.semantic_chunk(text, jsonb) IS
'Chunks a document where its meaning changes: sentence embeddings, optimal segmentation (or a threshold on the distance curve), size guards.';

COMMENT ON FUNCTION knowledge.split_sentences(text) IS
'The sentences, headings and list items of a document, with 0-based character offsets.';

COMMENT ON FUNCTION knowledge.chunk_explain(text, jsonb) IS
'One row per sentence: distance from the previous sentence, smoothed distance, the score the method weighed at that gap and its threshold, whether a chunk starts there and why.';

COMMENT ON FUNCTION knowledge.chunk_plot(text, jsonb) IS
'chunk_explain as an SVG picture: the score curve, the threshold, the cuts coloured by reason and the chunks as bands. Save it with psql -Atc and open it in a browser.';

COMMENT ON FUNCTION knowledge.embed(text, text, text) IS
'The embedding of a text as a vector, with a model from knowledge.models (NULL: pg_chunk.default_model) or lexical; role query or passage picks the model''s prefix.';

COMMENT ON FUNCTION knowledge.embed_batch(text[], text, text) IS
'Embeddings of many texts in batches; ordinality is the 1-based position in the array.';

COMMENT ON FUNCTION knowledge.token_count(text, text) IS
'Tokens in a text as the model''s tokenizer counts them, without special tokens.';

COMMENT ON FUNCTION knowledge.embedding_stats() IS
'Per model, in this backend: loads and load time, texts (sentences and chunks) embedded, cache hits, time spent embedding, vectors reused from knowledge_internal.stored_vectors, chunk rows written.';

COMMENT ON FUNCTION knowledge.prewarm(text) IS
'Loads a model (NULL: pg_chunk.default_model) into this backend ahead of its first use, for a connection pool''s connect hook; returns the load time in milliseconds, 0 where the model was already loaded.';

COMMENT ON FUNCTION knowledge.version() IS
'The version of this backend''s pg_chunk library and of the SQL installed in this database (pg_extension.extversion); a library older than the SQL is refused until the right library is installed and, where preloaded, the server restarted.';

COMMENT ON FUNCTION knowledge.rechunk(bigint, text) IS
'Chunks and embeds one document again now, with the named chunk config or (config NULL) with each config it belongs to, async configs included; returns the chunk rows written.';

COMMENT ON FUNCTION knowledge.rechunk_all(text, int) IS
'Chunks and embeds again every document the named config applies to (NULL: every document with all its configs), queueing them for an async config, with a NOTICE every progress_every documents; returns the number of documents.';

COMMENT ON FUNCTION knowledge.rechunk_estimate(text, jsonb, text) IS
'What changing the named config''s cfg or model (NULL: as it is) would rewrite: the documents it applies to and its chunks, the chunks per second of its past writes with that model (knowledge.embedding_writes), the seconds that makes (NULL without such writes, with a note), and whether the change needs pg_chunk.reembed_confirm.';

COMMENT ON FUNCTION knowledge.attach(regclass, name, name, text, regconfig) IS
'Mirrors a table into knowledge.documents: each row with a non-NULL text becomes a document (source_key = its id column), kept in step by triggers on the table, TRUNCATE included; returns the rows mirrored now.';

COMMENT ON FUNCTION knowledge.detach(regclass, boolean) IS
'Stops mirroring a table attached with knowledge.attach; its documents and their chunks are deleted unless keep_documents. Returns the documents deleted.';

COMMENT ON FUNCTION knowledge.search(text, int, jsonb) IS
'The k chunks that best answer a query: the config''s HNSW index by cosine similarity and BM25 over its text index, fused by score (options: mode, config, min_score, document_ids, metadata, language, k1, b, fusion, neighbours; docs/store.md). Runs with the caller''s rights, so row-level security applies.';

COMMENT ON FUNCTION knowledge.attach_distributed(regclass, name, name, text, regconfig) IS
'Citus: attaches each shard of a hash-distributed table with knowledge.attach on the worker that holds it, so that worker chunks and embeds the rows written to it; run on the coordinator. Returns the rows mirrored now (docs/scaling.md).';

COMMENT ON FUNCTION knowledge.distributed_search(text, int, jsonb) IS
'Citus: knowledge.search over every worker''s store, run on the coordinator, with the same arguments, options and results; BM25''s statistics are summed over the workers (docs/scaling.md).';

COMMENT ON FUNCTION knowledge_internal.embed_chunks_batch(bigint[], text[], jsonb, text) IS
'The chunks of several documents with their embeddings, as embed_chunks gives them for each; all the chunks are embedded together.';

COMMENT ON FUNCTION knowledge_internal.embed_config_chunks(text, bigint[], text[], jsonb, text) IS
'embed_chunks_batch for knowledge_internal.write_chunks, for one chunk config: each text''s vector is looked up among the config''s in knowledge_internal.stored_vectors first and saved there when it had to be embedded.';

COMMENT ON TABLE knowledge_internal.stored_vectors IS
'Vectors the store embedded, keyed by model identity, chunk config, role and text, reused by knowledge_internal.write_chunks; capped by pg_chunk.stored_vectors_mb.';

COMMENT ON VIEW knowledge.embedding_run_stats IS
'Per embedding run: writes, documents, chunk rows written and kept, vectors embedded and reused (knowledge.embedding_writes summed), and the milliseconds they took.';

COMMENT ON FUNCTION knowledge.process_queue(int, int) IS
'Chunks, embeds and writes up to batch_size queued documents in the caller''s transaction; failures are retried with backoff, then moved to knowledge.failed. The background workers call it.';

COMMENT ON FUNCTION knowledge.wait_for_queue(interval) IS
'Waits until knowledge.queue has nothing waiting or in progress (true) or the timeout passes (false).';

COMMENT ON FUNCTION knowledge.retry_failed(text) IS
'Queues the documents in knowledge.failed again (of one chunk config, or all); returns how many.';

COMMENT ON VIEW knowledge.queue_status IS
'Asynchronous ingestion at a glance: pending, in progress, failed, done in the last minute, the oldest pending age, and the workers serving this database.';

COMMENT ON FUNCTION knowledge.cjk_bigrams(text) IS
'The text with every run of CJK characters written as its overlapping two-character words, so that PostgreSQL''s full-text parser makes lexemes of Chinese and Japanese.';

COMMENT ON FUNCTION knowledge.text_vector(regconfig, text) IS
'The tsvector that knowledge.search''s text leg indexes a chunk (and reads a query) with: to_tsvector of the text, CJK runs written as overlapping bigrams first.';

COMMENT ON FUNCTION knowledge.rebuild_text_stats() IS
'Recomputes knowledge_internal.text_stats (BM25''s per-config lexeme statistics) from knowledge.chunks; the triggers keep it exact, so this is for a data-only restore with triggers disabled. Returns the rows written.';

COMMENT ON FUNCTION knowledge.begin_load(text) IS
'Begins a bulk load of a chunk config: drops its HNSW and GIN indexes and stops counting its chunks into BM25''s statistics, so that its writes do neither row by row; until knowledge.end_load its search reads every chunk of the config and ranks text with the statistics of before.';

COMMENT ON FUNCTION knowledge.end_load(text) IS
'Ends a bulk load that knowledge.begin_load began: waits for the transactions that wrote the config''s chunks, counts its BM25 statistics once from all its chunks and builds its HNSW and GIN indexes once (nothing for an index that exists). Needs READ COMMITTED.';

COMMENT ON TABLE knowledge_internal.text_stats_paused IS
'The chunk configs in a bulk load (knowledge.begin_load): their chunks are not counted into knowledge_internal.text_stats as they are written; knowledge.end_load counts them once.';

COMMENT ON TABLE knowledge_internal.text_stats IS
'BM25''s statistics per chunk config: for each lexeme, the chunks holding it and its occurrences (lexeme '''': all chunks and all occurrences); a lexeme''s figures are the sum of its rows.';

COMMENT ON FUNCTION knowledge.chunk_replicated_documents(boolean) IS
'On a logical-replication subscriber of knowledge.documents alone: sets the triggers that keep chunks in step (sync, BM25''s statistics, deletes cascading to chunks) ENABLE ALWAYS, so they fire for the apply worker''s writes too (false: back to ENABLE). Returns the number of triggers set.';
