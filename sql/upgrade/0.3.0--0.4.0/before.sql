-- 0.3.0 → 0.4.0, before the functions: schema moves, dropped or re-typed functions,
-- the new C functions, tables and views.

-- knowledge.version() and knowledge.prewarm(model), new C functions.
CREATE  FUNCTION "prewarm"(
	"model" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS double precision /* Result < f64, ErrorReport > */
VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'prewarm_wrapper';
CREATE  FUNCTION "version"() RETURNS TABLE (
	"library" TEXT,  /* String */
	"sql" TEXT  /* Option < String > */
)
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'version_wrapper';
