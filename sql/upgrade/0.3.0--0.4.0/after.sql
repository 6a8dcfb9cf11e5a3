-- 0.3.0 → 0.4.0, after the functions: triggers, indexes, data backfills.

-- A document's language is stored by its name (sql/store.sql).
CREATE TRIGGER documents_language BEFORE INSERT OR UPDATE OF language ON knowledge.documents
FOR EACH ROW EXECUTE FUNCTION knowledge_internal.documents_language();
