-- 0.4.0 → 0.5.0, before the functions: schema moves, dropped or re-typed functions,
-- the new C functions, tables and views.

-- Stored vectors are kept per chunk config: knowledge_internal.write_chunks calls
-- embed_config_chunks, which takes the config, in place of embed_chunks_stored (which the library
-- keeps for databases not yet updated).
DROP FUNCTION knowledge_internal.embed_chunks_stored(bigint[], text[], jsonb, text);
CREATE  FUNCTION knowledge_internal."embed_config_chunks"(
	"config" TEXT, /* &str */
	"document_ids" bigint[], /* :: std :: option :: Option < Vec < Option < i64 > > > */
	"docs" TEXT[], /* :: std :: option :: Option < Vec < Option < String > > > */
	"cfg" jsonb DEFAULT '{}', /* Option < Cfg > */
	"model" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS TABLE (
	"document_id" bigint,  /* i64 */
	"chunk_index" INT,  /* i32 */
	"content" TEXT,  /* String */
	"char_offset" INT,  /* i32 */
	"char_length" INT,  /* i32 */
	"token_count" INT,  /* i32 */
	"metadata" jsonb,  /* JsonB */
	"model" TEXT,  /* String */
	"embedding" vector  /* Option < Vector > */
)
VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'embed_config_chunks_wrapper';

-- What the drop guard's event trigger calls (sql/drop_guard.sql).
CREATE  FUNCTION knowledge_internal."drop_guard_loaded"() RETURNS bool /* bool */
STRICT VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'drop_guard_loaded_wrapper';
