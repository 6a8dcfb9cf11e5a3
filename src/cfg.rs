//! The `cfg jsonb` argument (and any other jsonb argument read as JSON, such as a search filter). pgrx's `JsonB` reads a jsonb through serde_json and panics (an
//! internal error, XX000) on what PostgreSQL accepts and serde_json does not: numbers beyond
//! f64 (`1e400`) and nesting deeper than 128. `Cfg` keeps that failure, so that it becomes the
//! same 22023 as any other bad cfg.

use pg_chunk_core::{ChunkConfig, ChunkError};
use pgrx::callconv::{Arg, ArgAbi};
use pgrx::nullable::Nullable;
use pgrx::{direct_function_call, impl_sql_translatable, pg_sys, FromDatum};
use serde_json::Value;
use std::ffi::CStr;

/// A jsonb argument as JSON, or why serde_json could not read it.
pub struct Cfg(Result<Value, String>);

impl_sql_translatable!(Cfg, "jsonb");

impl Cfg {
    /// The JSON value, or why it could not be read.
    pub fn value(&self) -> Result<&Value, &str> {
        self.0.as_ref().map_err(String::as_str)
    }

    /// The JSON value; an unreadable one is an invalid configuration (22023).
    pub fn json(&self) -> Result<&Value, ChunkError> {
        self.value().map_err(|reason| ChunkError::config("cfg", "(unreadable)", reason.to_owned()))
    }

    pub fn parse(&self) -> Result<ChunkConfig, ChunkError> {
        ChunkConfig::parse(self.json()?)
    }
}

impl FromDatum for Cfg {
    unsafe fn from_polymorphic_datum(datum: pg_sys::Datum, is_null: bool, _: pg_sys::Oid) -> Option<Cfg> {
        if is_null {
            return None;
        }
        // SAFETY: the datum is a non-null jsonb (the function's declared argument type); jsonb_out
        // returns a palloc'd C string of it, which is copied and freed here.
        unsafe {
            let text = direct_function_call::<&CStr>(pg_sys::jsonb_out, &[Some(datum)])?;
            let parsed = match text.to_str() {
                Ok(text) => serde_json::from_str(text).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            pg_sys::pfree(text.as_ptr().cast_mut().cast());
            Some(Cfg(parsed))
        }
    }
}

// SAFETY: as pgrx does for JsonB: the argument is unboxed through `FromDatum`.
unsafe impl<'fcx> ArgAbi<'fcx> for Cfg {
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
        // SAFETY: the caller guarantees a jsonb argument. The functions taking a `Cfg` are STRICT;
        // were one not, its NULL cfg would be refused like any unreadable one (22023).
        unsafe { arg.unbox_arg_using_from_datum() }.unwrap_or_else(|| Cfg(Err("cfg is NULL".to_string())))
    }

    unsafe fn unbox_nullable_arg(arg: Arg<'_, 'fcx>) -> Nullable<Self> {
        // SAFETY: the caller guarantees a jsonb argument.
        unsafe { arg.unbox_arg_using_from_datum() }.into()
    }
}
