//! pgvector's `vector` as a return type, built directly in its on-disk layout so that an
//! embedding reaches SQL without a detour through `real[]`.

use pgrx::callconv::{BoxRet, FcInfo};
use pgrx::datum::Datum;
use pgrx::{impl_sql_translatable, pg_sys, IntoDatum};
use std::cell::Cell;

/// An embedding, returned to SQL as pgvector's `vector`.
pub struct Vector(pub Vec<f32>);

impl_sql_translatable!(Vector, "vector");

/// pgvector's header: `int32 vl_len_; int16 dim; int16 unused;` then `dim` floats.
const HEADER_BYTES: usize = 8;

impl IntoDatum for Vector {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        let bytes = HEADER_BYTES + 4 * self.0.len();
        // SAFETY: palloc0 returns `bytes` zeroed bytes in the current memory context; we write
        // the varlena header, the dimension and the floats inside them.
        unsafe {
            let raw = pg_sys::palloc0(bytes).cast::<u8>();
            pgrx::set_varsize_4b(raw.cast(), bytes as i32);
            raw.add(4).cast::<i16>().write_unaligned(self.0.len() as i16);
            std::ptr::copy_nonoverlapping(self.0.as_ptr().cast::<u8>(), raw.add(HEADER_BYTES), 4 * self.0.len());
            Some(pg_sys::Datum::from(raw))
        }
    }

    fn type_oid() -> pg_sys::Oid {
        vector_oid()
    }
}

unsafe impl BoxRet for Vector {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        match self.into_datum() {
            // SAFETY: the datum was just built in the function's memory context.
            Some(datum) => unsafe { fcinfo.return_raw_datum(datum) },
            None => fcinfo.return_null(),
        }
    }
}

thread_local! {
    /// The oid of type `vector`, looked up once per backend (pgvector is a dependency, so it
    /// cannot be dropped while pg_chunk exists).
    static VECTOR_OID: Cell<pg_sys::Oid> = const { Cell::new(pg_sys::InvalidOid) };
}

fn vector_oid() -> pg_sys::Oid {
    VECTOR_OID.with(|oid| {
        if oid.get() == pg_sys::InvalidOid {
            // pgvector's own type, wherever the caller's search_path points: a type of the same
            // name in another schema must not stand in for it. Read-only (Spi::get_one runs
            // read-write, which a parallel worker refuses).
            let query = "SELECT t.oid FROM pg_catalog.pg_extension AS e \
                         JOIN pg_catalog.pg_type AS t ON t.typnamespace = e.extnamespace AND t.typname = 'vector' \
                         WHERE e.extname = 'vector'";
            let found =
                pgrx::Spi::connect(|client| client.select(query, Some(1), &[])?.first().get_one::<pg_sys::Oid>());
            match found {
                Ok(Some(found)) => oid.set(found),
                // pgvector is a dependency of pg_chunk, so neither can happen but by damage.
                Ok(None) => pgrx::error!("pg_chunk: pgvector's type vector is not installed in this database"),
                Err(e) => pgrx::error!("pg_chunk: cannot look up pgvector's type vector: {e}"),
            }
        }
        oid.get()
    })
}
