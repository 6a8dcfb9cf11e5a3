-- 0.5.0 → 0.6.0, after the functions: triggers, indexes, data backfills.

-- 0.5.0's triggers counted one occurrence for each chunk of no lexeme (only stop words) into
-- the lexeme '' of BM25's statistics: counted again from the chunks.
SELECT knowledge_internal.recount_text_stats(NULL);
