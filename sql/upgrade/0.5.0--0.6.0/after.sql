-- 0.5.0 → 0.6.0, after the functions: triggers, indexes, data backfills.

-- A document written directly is known by its source key: no two may share one. A store whose
-- documents do is refused, and left as it was, until each has a key of its own.
DO $$
DECLARE
    shared bigint;
    example text;
BEGIN
    SELECT count(*), min(source_key) INTO shared, example
    FROM (SELECT source_key FROM knowledge.documents WHERE attachment_id IS NULL AND source_key IS NOT NULL
          GROUP BY source_key HAVING count(*) > 1) AS k;
    IF shared > 0 THEN
        RAISE EXCEPTION '% source keys are each held by more than one document (such as "%"), which pg_chunk 0.6.0 refuses', shared, example
            USING ERRCODE = 'unique_violation',
                  HINT = 'Give each document a key of its own, or NULL, then update again: SELECT source_key, array_agg(id) FROM knowledge.documents WHERE attachment_id IS NULL GROUP BY source_key HAVING count(*) > 1;';
    END IF;
END
$$;
CREATE UNIQUE INDEX documents_source_key ON knowledge.documents (source_key) WHERE attachment_id IS NULL;

-- 0.5.0's triggers counted one occurrence for each chunk of no lexeme (only stop words) into
-- the lexeme '' of BM25's statistics: counted again from the chunks.
SELECT knowledge_internal.recount_text_stats(NULL);
