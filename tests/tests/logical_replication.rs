//! Logical replication: document writes work under a FOR ALL TABLES publication, which needs a
//! replica identity on every table that is written.

use pg_chunk_client_tests::{assert_store_exact, fresh_database, topic_document};
use postgres::Client;

/// The extension's permanent tables that have no replica identity: a FOR ALL TABLES
/// publication refuses their updates and deletes. Unlogged tables are never published.
const WITHOUT_REPLICA_IDENTITY: &str = "
    SELECT c.oid::regclass::text FROM pg_depend AS d
    JOIN pg_class AS c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
    WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
      AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_chunk')
      AND c.relkind IN ('r', 'p') AND c.relpersistence = 'p'
      AND NOT (c.relreplident = 'f'
               OR (c.relreplident = 'd' AND EXISTS (SELECT FROM pg_index AS i WHERE i.indrelid = c.oid AND i.indisprimary))
               OR (c.relreplident = 'i' AND EXISTS (SELECT FROM pg_index AS i WHERE i.indrelid = c.oid AND i.indisreplident)))
    ORDER BY 1";

#[test]
fn every_table_has_a_replica_identity_and_writes_work_under_a_publication() {
    let mut client = fresh_database("logical_writes");
    let missing: Vec<String> =
        client.query(WITHOUT_REPLICA_IDENTITY, &[]).unwrap().iter().map(|row| row.get(0)).collect();
    assert!(missing.is_empty(), "tables without a replica identity: {missing:?}");

    // wal_level need not be logical: the replica identity is checked at every write.
    let write = |client: &mut Client, sql: &str| {
        client.batch_execute(sql).unwrap_or_else(|e| panic!("{sql}: {}", pg_chunk_client_tests::describe_error(&e)))
    };
    write(&mut client, "SET client_min_messages = error; CREATE PUBLICATION everything FOR ALL TABLES");
    write(&mut client, "UPDATE knowledge.chunk_configs SET model = 'potion-base-8m' WHERE name = 'default'");
    // One transaction each: BM25's statistics fold a lexeme's rows (deleting them) from its
    // eighth commit on.
    for i in 0..10 {
        client.execute("INSERT INTO knowledge.documents (content) VALUES ($1)", &[&topic_document(i)]).unwrap();
    }
    write(&mut client, "UPDATE knowledge.documents SET content = content || ' Bees again.' WHERE id = 1");
    write(&mut client, "DELETE FROM knowledge.documents WHERE id = 2");
    write(&mut client, "SELECT knowledge.rechunk(3), knowledge.rechunk_all('default')");
    write(
        &mut client,
        "CREATE TABLE notes (id int PRIMARY KEY, body text);
         INSERT INTO notes VALUES (1, 'Glaciers carve valleys.'), (2, 'Volcanoes erupt.');
         SELECT knowledge.attach('notes', 'id', 'body');
         UPDATE notes SET body = 'Glaciers carve U-shaped valleys.' WHERE id = 1;
         DELETE FROM notes WHERE id = 2;",
    );
    write(
        &mut client,
        "INSERT INTO knowledge.chunk_configs (name, model, mode) VALUES ('later', 'potion-base-8m', 'async')",
    );
    write(&mut client, "SELECT knowledge.process_queue(100)");
    write(&mut client, "UPDATE knowledge.chunk_configs SET cfg = '{\"max_size\": 200}' WHERE name = 'default'");
    write(&mut client, "UPDATE knowledge.chunk_configs SET name = 'afterwards' WHERE name = 'later'");
    write(
        &mut client,
        "INSERT INTO knowledge.models (name, kind, model_file, tokenizer_file, dimension)
         SELECT 'potion-copy', kind, model_file, tokenizer_file, dimension FROM knowledge.models WHERE name = 'potion-base-8m';
         UPDATE knowledge.chunk_configs SET model = 'potion-copy' WHERE name = 'afterwards';
         SELECT knowledge.process_queue(100);",
    );
    write(&mut client, "SELECT knowledge.detach('notes')");
    write(&mut client, "DELETE FROM knowledge.chunk_configs WHERE name = 'afterwards'");
    write(&mut client, "DELETE FROM knowledge.models WHERE name = 'potion-copy'");
    write(&mut client, "SELECT knowledge.rebuild_text_stats()");
    assert_store_exact(&mut client, "after the writes under a publication");
    write(&mut client, "TRUNCATE knowledge.documents CASCADE");
}
