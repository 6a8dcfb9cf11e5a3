//! A store spread over Citus workers (docs/scaling.md), on the cluster scripts/citus.sh starts:
//! a distributed table attached with knowledge.attach_distributed is chunked and embedded on the
//! workers that hold its shards (their knowledge.embedding_writes, not the coordinator's), edits,
//! deletes and an async config reach them, rechunk_all runs on each, and
//! knowledge.distributed_search on the coordinator returns what knowledge.search returns over the
//! same corpus in one store (the coordinator's own, local one): the same chunks, in the same
//! order, with the same scores, BM25's statistics summed over the workers.
//!
//! Ignored by a plain cargo test: scripts/test.sh runs it with `--ignored` after scripts/citus.sh,
//! with CITUS_COORDINATOR_PORT and CITUS_DATABASE naming the coordinator and its database.

use postgres::{Client, NoTls};

fn coordinator() -> Client {
    let port = std::env::var("CITUS_COORDINATOR_PORT").unwrap_or_else(|_| "5441".to_string());
    let database = std::env::var("CITUS_DATABASE").unwrap_or_else(|_| "pg_chunk_citus".to_string());
    let user = std::env::var("PGUSER").or_else(|_| std::env::var("USER")).unwrap_or_else(|_| "root".to_string());
    let params = format!("host=/var/run/postgresql port={port} user={user} dbname={database}");
    Client::connect(&params, NoTls).unwrap_or_else(|e| panic!("{params}: {e}"))
}

/// The result of `query` (one text value) on each worker, in Citus's order of the workers.
fn on_workers(client: &mut Client, query: &str) -> Vec<String> {
    client
        .query("SELECT coalesce(w, '') FROM knowledge_internal.on_workers($1) AS w", &[&query])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

fn on_workers_i64(client: &mut Client, query: &str) -> Vec<i64> {
    on_workers(client, query).iter().map(|v| v.parse().unwrap()).collect()
}

/// Each question's top 5 as (content, score rounded to 1e-9), through `function`.
fn answers(client: &mut Client, function: &str, questions: &[String], options: &str) -> Vec<Vec<(String, String)>> {
    questions
        .iter()
        .map(|question| {
            client
                .query(
                    &format!(
                        "SELECT content, round(score::numeric, 9)::text FROM {function}($1, 5, $2::text::jsonb) ORDER BY score DESC"
                    ),
                    &[question, &options],
                )
                .unwrap()
                .iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect()
        })
        .collect()
}

/// Score fusion ranks by scores alone, which the two searches compute alike: the same top 5
/// with the same scores. Reciprocal rank (rrf, text mode) also ranks ties by chunk id, and ids
/// differ between the stores: the same chunks, in any order.
fn assert_same_answers(client: &mut Client, questions: &[String], options: &str, when: &str) {
    let single = answers(client, "knowledge.search", questions, options);
    let cluster = answers(client, "knowledge.distributed_search", questions, options);
    assert!(single.iter().all(|hits| !hits.is_empty()), "{when}: a question without results in one store");
    let by_rank = options.contains("rrf") || options.contains("text");
    for ((question, one), many) in questions.iter().zip(&single).zip(&cluster) {
        if by_rank {
            let chunks = |hits: &Vec<(String, String)>| {
                let mut chunks: Vec<String> = hits.iter().map(|(content, _)| content.clone()).collect();
                chunks.sort();
                chunks
            };
            assert_eq!(chunks(one), chunks(many), "{when}: {question:?}: one store's top 5 chunks, then the workers'");
        } else {
            assert_eq!(one, many, "{when}: {question:?}: one store's top 5, then the workers'");
        }
    }
}

#[test]
#[ignore]
fn a_distributed_store_is_chunked_on_its_workers_and_searched_as_one() {
    let mut client = coordinator();
    let corpus = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/search_corpus.json")).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&corpus).unwrap();
    let questions: Vec<String> =
        parsed["questions"].as_array().unwrap().iter().map(|q| q["question"].as_str().unwrap().to_string()).collect();

    // Afresh: no table, document or config of an earlier run, on any node.
    client
        .batch_execute(
            "SET client_min_messages = warning;
             DROP TABLE IF EXISTS citus_test_docs, citus_test_notes;
             DELETE FROM knowledge.documents;
             DELETE FROM knowledge.chunk_configs WHERE name = 'later';",
        )
        .unwrap();
    on_workers(
        &mut client,
        "DELETE FROM knowledge.documents; DELETE FROM knowledge.attachments; DELETE FROM knowledge.embedding_writes;
         DELETE FROM knowledge.chunk_configs WHERE name = 'later'",
    );
    // One connection per worker for a statement's shards: the shards of one worker write to one
    // store, and Citus's connections of one transaction would wait on one another's rows.
    client.batch_execute("SET citus.max_adaptive_executor_pool_size = 1").unwrap();
    // Each its own transaction: attach_distributed reaches the shards over Citus's own
    // connections, which see only committed shards.
    client.batch_execute("CREATE TABLE citus_test_docs (id bigint PRIMARY KEY, body text)").unwrap();
    client.batch_execute("SELECT create_distributed_table('citus_test_docs', 'id')").unwrap();
    client.batch_execute("SELECT knowledge.attach_distributed('citus_test_docs', 'id', 'body')").unwrap();
    // A table Citus does not hash-distribute is refused, naming it.
    let error = client
        .batch_execute("SELECT knowledge.attach_distributed('knowledge.documents', 'id', 'content')")
        .unwrap_err();
    let db = error.as_db_error().unwrap();
    assert_eq!(
        (db.code().code(), db.message()),
        ("42809", "knowledge.documents is not a hash-distributed Citus table")
    );
    client
        .execute(
            "INSERT INTO citus_test_docs
             SELECT n, d ->> 'content' FROM jsonb_array_elements($1::text::jsonb -> 'documents') WITH ORDINALITY AS x (d, n)",
            &[&corpus],
        )
        .unwrap();
    // The same corpus in the coordinator's own store, the single server to compare with.
    client
        .execute(
            "INSERT INTO knowledge.documents (content)
             SELECT d ->> 'content' FROM jsonb_array_elements($1::text::jsonb -> 'documents') WITH ORDINALITY AS x (d, n) ORDER BY n",
            &[&corpus],
        )
        .unwrap();
    let documents = parsed["documents"].as_array().unwrap().len() as i64;

    // Each worker chunked and embedded its own documents: its embedding_writes count them.
    let held = on_workers_i64(&mut client, "SELECT count(*) FROM knowledge.documents");
    let written = on_workers_i64(&mut client, "SELECT coalesce(sum(documents), 0) FROM knowledge.embedding_writes");
    assert_eq!(held.len(), 2, "two workers");
    assert!(held.iter().all(|&n| n > 0), "every worker holds documents: {held:?}");
    assert_eq!(held.iter().sum::<i64>(), documents);
    assert_eq!(written, held, "each worker's embedding_writes count the documents it holds");
    let unchunked = on_workers_i64(
        &mut client,
        "SELECT count(*) FROM knowledge.documents AS d WHERE NOT EXISTS (SELECT FROM knowledge.chunks AS c WHERE c.document_id = d.id)",
    );
    assert_eq!(unchunked, vec![0, 0], "a worker's document without chunks");

    assert_same_answers(&mut client, &questions, "{}", "after the inserts");
    assert_same_answers(&mut client, &questions, r#"{"fusion": "rrf"}"#, "rrf");
    assert_same_answers(&mut client, &questions, r#"{"mode": "text"}"#, "text mode");

    // An edit and a delete through the coordinator, made in the single store too.
    let edited = "Quantum tunnelling lets particles pass through barriers they could not climb. \
                  Scanning tunnelling microscopes image surfaces with it.";
    client.execute("UPDATE citus_test_docs SET body = $1 WHERE id = 3", &[&edited]).unwrap();
    client.execute("DELETE FROM citus_test_docs WHERE id = 4", &[]).unwrap();
    let (third, fourth) =
        (parsed["documents"][2]["content"].as_str().unwrap(), parsed["documents"][3]["content"].as_str().unwrap());
    client.execute("UPDATE knowledge.documents SET content = $1 WHERE content = $2", &[&edited, &third]).unwrap();
    client.execute("DELETE FROM knowledge.documents WHERE content = $1", &[&fourth]).unwrap();
    let on_workers_now = on_workers_i64(
        &mut client,
        "SELECT count(*) FROM knowledge.documents WHERE source_key = '4' OR (source_key = '3' AND content LIKE 'Quantum%')",
    );
    assert_eq!(on_workers_now.iter().sum::<i64>(), 1, "the edit on its worker, the deleted document gone");
    let mut asked = questions.clone();
    asked.push("How does a scanning tunnelling microscope see a surface?".to_string());
    assert_same_answers(&mut client, &asked, "{}", "after an edit and a delete");

    // An async config, made on every node; a table attached with it is drained by each
    // worker's own pg_chunk background worker.
    for statement in [
        "SELECT run_command_on_all_nodes($$INSERT INTO knowledge.chunk_configs (name, model, mode, cfg)
             VALUES ('later', 'all-minilm-l6-v2', 'async', '{\"max_size\": 200}')$$)",
        "CREATE TABLE citus_test_notes (id bigint PRIMARY KEY, body text)",
        "SELECT create_distributed_table('citus_test_notes', 'id', colocate_with => 'citus_test_docs')",
        "SELECT knowledge.attach_distributed('citus_test_notes', 'id', 'body', 'later')",
    ] {
        client.batch_execute(statement).unwrap();
    }
    // One row a transaction: the queue NOTIFYs its worker, and PostgreSQL cannot PREPARE a
    // transaction that did, which Citus does for one that writes on two workers.
    for n in 1..=8i64 {
        let content = parsed["documents"][(n - 1) as usize]["content"].as_str().unwrap();
        client.execute("INSERT INTO citus_test_notes VALUES ($1, $2)", &[&n, &content]).unwrap();
    }
    let drained = on_workers(&mut client, "SELECT knowledge.wait_for_queue('2 minutes')");
    assert_eq!(drained, vec!["t", "t"], "each worker drains its queue");
    let later = on_workers_i64(
        &mut client,
        "SELECT count(DISTINCT document_id) FROM knowledge.chunks WHERE chunk_config = 'later'",
    );
    assert_eq!(later.iter().sum::<i64>(), 8, "the async config's chunks, on the workers: {later:?}");
    let found: i64 = client
        .query_one(
            "SELECT count(*) FROM knowledge.distributed_search('How do hives stay warm in winter?', 5, '{\"config\": \"later\"}')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(found, 5);

    // rechunk_all on every worker rechunks the documents each holds.
    let rechunked = on_workers_i64(&mut client, "SELECT knowledge.rechunk_all()");
    let now_held = on_workers_i64(&mut client, "SELECT count(*) FROM knowledge.documents");
    assert_eq!(rechunked, now_held);
    assert_same_answers(&mut client, &questions, "{}", "after rechunk_all");

    // The search reaches the workers through knowledge_internal.citus_workers, one shard on
    // each: with both its shards moved onto one worker, the next search makes it again (else it
    // would search that worker twice and the other not at all), and so when it is gone.
    let fanout_groups = |client: &mut Client| -> Vec<i32> {
        client
            .query(
                "SELECT p.groupid FROM pg_dist_shard AS s JOIN pg_dist_placement AS p USING (shardid)
                 WHERE s.logicalrelid = 'knowledge_internal.citus_workers'::regclass ORDER BY p.groupid",
                &[],
            )
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect()
    };
    assert_eq!(fanout_groups(&mut client).len(), 2, "one shard on each worker");
    client
        .batch_execute(
            "SET citus.local_hostname = '/var/run/postgresql';
             SELECT citus_move_shard_placement(s.shardid, n.nodename, n.nodeport, t.nodename, t.nodeport,
                                               shard_transfer_mode => 'block_writes')
             FROM pg_dist_shard AS s JOIN pg_dist_shard_placement AS n USING (shardid),
                  (SELECT nodename, nodeport FROM pg_dist_node WHERE groupid > 0 ORDER BY groupid LIMIT 1) AS t
             WHERE s.logicalrelid = 'knowledge_internal.citus_workers'::regclass AND n.nodeport <> t.nodeport",
        )
        .unwrap();
    assert_eq!(
        fanout_groups(&mut client).iter().collect::<std::collections::HashSet<_>>().len(),
        1,
        "moved onto one worker"
    );
    assert_same_answers(&mut client, &questions, "{}", "after the shards were moved onto one worker");
    assert_eq!(fanout_groups(&mut client), vec![1, 2], "made again, a shard on each worker");
    client.batch_execute("DROP TABLE knowledge_internal.citus_workers").unwrap();
    assert_same_answers(&mut client, &questions, "{}", "after knowledge_internal.citus_workers was dropped");

    // A node that holds shards but takes no new ones cannot get one of it: the search says so,
    // and so when no node takes shards; it answers again once they do.
    let takes_shards = |client: &mut Client, groups: &str, on: bool| {
        client
            .batch_execute(&format!(
                "SELECT citus_set_node_property(nodename, nodeport, 'shouldhaveshards', {on})
                 FROM pg_dist_node WHERE groupid IN ({groups})"
            ))
            .unwrap();
    };
    let refused = |client: &mut Client| -> (String, String) {
        client.batch_execute("DROP TABLE IF EXISTS knowledge_internal.citus_workers").unwrap();
        let error = client.query("SELECT * FROM knowledge.distributed_search('bees', 5)", &[]).unwrap_err();
        let db = error.as_db_error().unwrap();
        (db.code().code().to_string(), db.message().to_string())
    };
    takes_shards(&mut client, "2", false);
    assert_eq!(
        refused(&mut client),
        (
            "55000".to_string(),
            "a Citus node holds shards but takes no new ones, so a search cannot reach its store".to_string()
        )
    );
    takes_shards(&mut client, "1", false);
    assert_eq!(refused(&mut client), ("55000".to_string(), "no Citus node takes shards".to_string()));
    takes_shards(&mut client, "1, 2", true);
    assert_same_answers(&mut client, &questions, "{}", "once every worker takes shards again");

    // A table named with a quote, its columns with a percent sign: Citus formats the command it
    // sends to each shard, and each name reaches the workers only as a literal.
    client
        .batch_execute(
            r#"DROP TABLE IF EXISTS "citus_test_it's";
               CREATE TABLE "citus_test_it's" ("id%s" bigint PRIMARY KEY, "body%%L" text);"#,
        )
        .unwrap();
    client.batch_execute(r#"SELECT create_distributed_table('"citus_test_it''s"', 'id%s')"#).unwrap();
    client
        .batch_execute(r#"SELECT knowledge.attach_distributed('"citus_test_it''s"', 'id%s', 'body%%L')"#)
        .unwrap_or_else(|e| panic!("attach_distributed of a table named with a quote: {e}"));
    client
        .batch_execute(r#"INSERT INTO "citus_test_it's" VALUES (1, 'Ammonites were shelled sea creatures.'), (2, 'Trilobites had compound eyes.')"#)
        .unwrap();
    let quoted = on_workers_i64(
        &mut client,
        "SELECT count(*) FROM knowledge.documents AS d JOIN knowledge.attachments AS a ON a.id = d.attachment_id
         WHERE a.source::text LIKE '\"citus_test_it''s%' AND a.id_column = 'id%s' AND a.text_column = 'body%%L'",
    );
    assert_eq!(quoted.iter().sum::<i64>(), 2, "both rows mirrored on their workers: {quoted:?}");
    client.batch_execute(r#"DROP TABLE "citus_test_it's""#).unwrap();
}
