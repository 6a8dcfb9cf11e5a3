//! The queue's SQL (src/sql/queue.sql), driven by hand: the test server preloads nothing, so no
//! background worker runs and each test calls knowledge.process_queue itself. tests/tests/queue.rs
//! and tests/tests/worker_crash.rs test the workers over real connections.

#[pgrx::pg_schema]
mod tests {
    use crate::tests::support::{one, sqlstate_of};
    use pgrx::prelude::*;

    const DOC: &str =
        "Bees cluster in winter. The queen stays warm. Volcanoes erupt when magma rises. Lava cools into basalt.";

    /// An async config named `name` with the static model (fast), the only active one.
    fn async_config(name: &str, cfg: &str) {
        Spi::run(&format!(
            "UPDATE knowledge.chunk_configs SET active = false;
             INSERT INTO knowledge.chunk_configs (name, cfg, model, mode) VALUES ('{name}', '{cfg}', 'potion-base-8m', 'async')"
        ))
        .unwrap();
    }

    fn insert(content: &str) -> i64 {
        one::<i64>(&format!("INSERT INTO knowledge.documents (content) VALUES ($${content}$$) RETURNING id"))
    }

    /// Whether the document's stored chunks for `config` are exactly what knowledge.chunk gives
    /// for its content now, each embedded.
    fn chunks_match(document: i64, config: &str) -> bool {
        one::<bool>(&format!(
            "SELECT (SELECT coalesce(array_agg(row(c.chunk_index, c.content, c.char_offset, c.char_length)::text ORDER BY c.chunk_index), '{{}}')
                     FROM knowledge.chunks AS c WHERE c.document_id = {document} AND c.chunk_config = '{config}' AND c.embedding IS NOT NULL)
                  = (SELECT array_agg(row(k.chunk_index, k.content, k.char_offset, k.char_length)::text ORDER BY k.chunk_index)
                     FROM knowledge.documents AS d, knowledge.chunk_configs AS cc, knowledge.chunk(d.content, cc.effective_cfg) AS k
                     WHERE d.id = {document} AND cc.name = '{config}')"
        ))
    }

    fn queued(document: i64) -> i64 {
        one::<i64>(&format!("SELECT count(*) FROM knowledge.queue WHERE document_id = {document} AND done_at IS NULL"))
    }

    #[pg_test]
    fn an_async_insert_queues_and_process_queue_writes_the_chunks() {
        async_config("later", "{}");
        let id = insert(DOC);
        assert_eq!(queued(id), 1, "queued by the insert");
        assert_eq!(
            one::<i64>(&format!("SELECT count(*) FROM knowledge.chunks WHERE document_id = {id}")),
            0,
            "no chunks yet"
        );
        assert_eq!(one::<i64>("SELECT pending FROM knowledge.queue_status"), 1);
        assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 1);
        assert!(chunks_match(id, "later"));
        assert_eq!(queued(id), 0);
        assert_eq!(one::<i64>("SELECT done_last_minute FROM knowledge.queue_status"), 1);
        assert!(one::<bool>("SELECT knowledge.wait_for_queue('0 s')"), "nothing left to wait for");
        assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 0, "nothing ready");
        // An update queues the document again, and the new content is what gets chunked.
        Spi::run(&format!("UPDATE knowledge.documents SET content = 'Only one sentence now.' WHERE id = {id}"))
            .unwrap();
        assert_eq!(queued(id), 1);
        assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 1);
        assert!(chunks_match(id, "later"));
        assert_eq!(one::<i64>(&format!("SELECT count(*) FROM knowledge.chunks WHERE document_id = {id}")), 1);
    }

    #[pg_test]
    fn a_document_updated_while_queued_is_chunked_once_with_its_newest_content() {
        async_config("later", "{}");
        let id = insert(DOC);
        Spi::run(&format!(
            "UPDATE knowledge.documents SET content = 'Newest words here. And more of them.' WHERE id = {id}"
        ))
        .unwrap();
        assert_eq!(
            one::<i64>(&format!("SELECT count(*) FROM knowledge.queue WHERE document_id = {id}")),
            1,
            "one queue row"
        );
        assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 1);
        assert!(chunks_match(id, "later"));
        assert!(one::<bool>(&format!("SELECT bool_and(content LIKE '%ewest%' OR content LIKE '%more%') FROM knowledge.chunks WHERE document_id = {id}")));
    }

    #[pg_test]
    fn a_document_deleted_while_queued_leaves_the_queue() {
        async_config("later", "{}");
        let id = insert(DOC);
        Spi::run(&format!("DELETE FROM knowledge.documents WHERE id = {id}")).unwrap();
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge.queue"), 0);
        assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 0);
    }

    #[pg_test]
    fn documents_of_one_batch_are_embedded_together_and_match_one_at_a_time() {
        async_config("later", r#"{"strategy": "fixed", "max_size": 40, "overlap": 0}"#);
        let ids: Vec<i64> = (0..5).map(|i| insert(&format!("{DOC} Number {i} ends it."))).collect();
        assert_eq!(one::<i32>("SELECT knowledge.process_queue(3)"), 3, "batch_size caps a batch");
        assert_eq!(one::<i32>("SELECT knowledge.process_queue(3)"), 2);
        for id in ids {
            assert!(chunks_match(id, "later"), "document {id}");
        }
        // The batch function itself: the same rows as embed_chunks gives for each document.
        let same = format!(
            "SELECT (SELECT array_agg(row(document_id, chunk_index, content, embedding)::text ORDER BY document_id, chunk_index)
                     FROM knowledge_internal.embed_chunks_batch(ARRAY[7, 9], ARRAY['{DOC}', 'Short one. Two.'], '{{}}', 'potion-base-8m'))
                  = (SELECT array_agg(row(d.id, e.chunk_index, e.content, e.embedding)::text ORDER BY d.id, e.chunk_index)
                     FROM (VALUES (7, '{DOC}'), (9, 'Short one. Two.')) AS d(id, doc),
                          knowledge_internal.embed_chunks(d.doc, '{{}}', 'potion-base-8m') AS e)"
        );
        assert!(one::<bool>(&same));
        assert_eq!(
            sqlstate_of("SELECT * FROM knowledge_internal.embed_chunks_batch(ARRAY[1, 2], ARRAY['one'])"),
            "22023"
        );
        assert_eq!(
            one::<i64>(
                "SELECT count(*) FROM knowledge_internal.embed_chunks_batch(ARRAY[1, NULL], ARRAY[NULL, 'two'])"
            ),
            0
        );
    }

    #[pg_test]
    fn a_failing_document_is_retried_with_backoff_then_moved_to_failed() {
        // max_document_size makes one of two documents fail; the other must not wait for it.
        async_config("small", r#"{"max_document_size": 60}"#);
        let bad = insert(DOC);
        let good = insert("A short one. It fits.");
        assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 2);
        assert!(chunks_match(good, "small"), "the good document is done");
        let retry = format!("SELECT attempts || ' ' || (not_before > clock_timestamp()) || ' ' || last_error FROM knowledge.queue WHERE document_id = {bad}");
        assert_eq!(
            one::<String>(&retry),
            "1 true document is 103 bytes, above max_document_size of 60 bytes (SQLSTATE 54000)"
        );
        assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 0, "waiting out its backoff");
        let backoff = format!("SELECT extract(epoch FROM not_before - clock_timestamp()) > 1 FROM knowledge.queue WHERE document_id = {bad}");
        for attempt in 2..=4 {
            Spi::run("UPDATE knowledge.queue SET not_before = now()").unwrap();
            assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 1);
            assert_eq!(one::<i32>(&format!("SELECT attempts FROM knowledge.queue WHERE document_id = {bad}")), attempt);
            assert!(one::<bool>(&backoff), "the backoff grows: 2 s and more after attempt {attempt}");
        }
        assert!(!one::<bool>("SELECT knowledge.wait_for_queue('0.1 s')"), "still pending: wait_for_queue times out");
        Spi::run("UPDATE knowledge.queue SET not_before = now()").unwrap();
        assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 1);
        assert_eq!(
            one::<i64>("SELECT count(*) FROM knowledge.queue WHERE done_at IS NULL"),
            0,
            "given up after 5 attempts"
        );
        assert_eq!(
            one::<String>(&format!("SELECT attempts || ' ' || error FROM knowledge.failed WHERE document_id = {bad}")),
            "5 document is 103 bytes, above max_document_size of 60 bytes (SQLSTATE 54000)"
        );
        assert_eq!(one::<i64>("SELECT failed FROM knowledge.queue_status"), 1);
        // retry_failed queues it again; so would any change to the document.
        assert_eq!(one::<i64>("SELECT knowledge.retry_failed()"), 1);
        assert_eq!(one::<i64>("SELECT count(*) FROM knowledge.failed"), 0);
        assert_eq!(queued(bad), 1);
        Spi::run(&format!("UPDATE knowledge.documents SET content = 'Now it fits.' WHERE id = {bad}")).unwrap();
        assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 1);
        assert!(chunks_match(bad, "small"));
    }

    #[pg_test]
    fn rechunk_writes_now_and_rechunk_all_queues_for_async_configs() {
        async_config("later", "{}");
        let id = insert(DOC);
        assert!(one::<i32>(&format!("SELECT knowledge.rechunk({id})")) > 0, "rechunk writes at once");
        assert!(chunks_match(id, "later"));
        assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 1, "the insert's queue entry is still there");
        assert_eq!(one::<i64>("SELECT knowledge.rechunk_all('later')"), 1);
        assert_eq!(queued(id), 1, "rechunk_all of an async config queues");
        // A document that no longer uses the config by the time the queue gets to it gets no chunks.
        Spi::run(&format!(
            "INSERT INTO knowledge.chunk_configs (name, cfg, model, active) VALUES ('other', '{{}}', 'lexical', false);
             UPDATE knowledge.documents SET chunk_config = 'other' WHERE id = {id}"
        ))
        .unwrap();
        assert_eq!(one::<i32>("SELECT knowledge.process_queue()"), 1);
        assert_eq!(
            one::<i64>(&format!(
                "SELECT count(*) FROM knowledge.chunks WHERE document_id = {id} AND chunk_config = 'later'"
            )),
            0
        );
        assert!(chunks_match(id, "other"), "the config it names now, in sync mode, wrote its chunks at once");
    }

    #[pg_test]
    fn bad_queue_arguments_and_modes_are_refused() {
        assert_eq!(sqlstate_of("SELECT knowledge.process_queue(0)"), "22023");
        assert_eq!(sqlstate_of("SELECT knowledge.process_queue(16, NULL)"), "22023");
        assert_eq!(sqlstate_of("SELECT knowledge.wait_for_queue('-1 s')"), "22023");
        assert_eq!(sqlstate_of("SELECT knowledge.wait_for_queue(NULL)"), "22023");
        assert_eq!(sqlstate_of("INSERT INTO knowledge.chunk_configs (name, mode) VALUES ('x', 'later')"), "23514");
        assert_eq!(one::<i64>("SELECT workers FROM knowledge.queue_status"), 0, "no worker in the test server");
        assert!(!one::<bool>("SELECT knowledge_internal.queue_served()"), "pg_chunk is not preloaded there");
    }
}
