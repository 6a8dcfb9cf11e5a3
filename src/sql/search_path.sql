-- Every SQL function of pg_chunk runs with a fixed search_path (pg_catalog, then pgvector's
-- schema for its types and operators), so no caller's objects can stand in for the ones it means.
DO $$
DECLARE
    vector_schema name := (SELECT n.nspname FROM pg_catalog.pg_extension AS e
                           JOIN pg_catalog.pg_namespace AS n ON n.oid = e.extnamespace WHERE e.extname = 'vector');
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc AS p
             WHERE p.pronamespace IN ('knowledge'::regnamespace, 'knowledge_internal'::regnamespace) AND p.prolang IN (
                   SELECT l.oid FROM pg_catalog.pg_language AS l WHERE l.lanname IN ('sql', 'plpgsql'))
               AND p.prokind = 'f' LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, %I, pg_temp', f, vector_schema);
    END LOOP;
END
$$;
