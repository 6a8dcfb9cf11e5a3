//! Dropping never deletes documents unasked: a command that would drop `knowledge.documents`
//! while it holds rows is refused (2BP01), whichever way it reaches the table: `DROP EXTENSION
//! pg_chunk` with or without CASCADE, `DROP EXTENSION vector CASCADE`, `DROP SCHEMA public
//! CASCADE` where pgvector lives there. The check is PostgreSQL's object access hook, which sees
//! every object a command drops, before it is dropped; the library installs it as it loads, and the
//! extension's event trigger on those commands (`knowledge_internal.guard_drop`,
//! src/sql/drop_guard.sql) loads the library in a backend that has not used pg_chunk yet. Emptying the table first
//! (`TRUNCATE knowledge.documents CASCADE`) is the deliberate way to drop it with its rows.

use pgrx::pg_sys;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;
use std::ffi::CStr;

/// The hook that was installed before ours, called first.
static mut PREVIOUS_HOOK: pg_sys::object_access_hook_type = None;

/// Installs the hook; once, as the library loads (`_PG_init`).
pub fn install() {
    // SAFETY: _PG_init runs once per process, before any query; PostgreSQL's hooks are plain
    // globals that each library chains.
    unsafe {
        PREVIOUS_HOOK = pg_sys::object_access_hook;
        pg_sys::object_access_hook = Some(refuse_dropping_documents);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn refuse_dropping_documents(
    access: pg_sys::ObjectAccessType::Type,
    class_id: pg_sys::Oid,
    object_id: pg_sys::Oid,
    sub_id: std::ffi::c_int,
    arg: *mut std::ffi::c_void,
) {
    // SAFETY: the previous hook takes the arguments PostgreSQL gave us.
    if let Some(previous) = unsafe { PREVIOUS_HOOK } {
        unsafe { previous(access, class_id, object_id, sub_id, arg) };
    }
    if access == pg_sys::ObjectAccessType::OAT_DROP
        && class_id == pg_sys::RelationRelationId
        && sub_id == 0
        && is_documents_table(object_id)
        && holds_documents()
    {
        ErrorReport::new(
            PgSqlErrorCode::ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST,
            "this would drop table knowledge.documents and the documents in it",
            "refuse_dropping_documents",
        )
        .set_hint(
            "To drop them with it, TRUNCATE knowledge.documents CASCADE first (in the same transaction or before); \
             to keep them, copy them out first (CREATE TABLE my_documents AS TABLE knowledge.documents).",
        )
        .report(PgLogLevel::ERROR);
    }
}

/// Whether `relation` is knowledge.documents of pg_chunk: named so, in a database where pg_chunk
/// is installed (schema knowledge is then the extension's, and no one else can make a table
/// there of that name). Cache look-ups, for each relation dropped.
fn is_documents_table(relation: pg_sys::Oid) -> bool {
    // SAFETY: catalog look-ups by oid and name, inside a transaction (a drop is in one); the
    // names returned are palloc'd C strings or NULL.
    unsafe {
        let name = pg_sys::get_rel_name(relation);
        if name.is_null() || CStr::from_ptr(name).to_bytes() != b"documents" {
            return false;
        }
        let schema = pg_sys::get_namespace_name(pg_sys::get_rel_namespace(relation));
        !schema.is_null()
            && CStr::from_ptr(schema).to_bytes() == b"knowledge"
            && pg_sys::get_extension_oid(c"pg_chunk".as_ptr(), true) != pg_sys::InvalidOid
    }
}

/// Whether knowledge.documents has a row (the dropping role is its owner or a superuser, which
/// row-level security does not hide rows from).
fn holds_documents() -> bool {
    Spi::get_one::<bool>("SELECT EXISTS (SELECT FROM knowledge.documents)").ok().flatten().unwrap_or(true)
}

/// What the event trigger calls: loading the library, which installs the hook, is its whole job.
#[pg_extern(volatile, schema = "knowledge_internal")]
fn drop_guard_loaded() -> bool {
    true
}
