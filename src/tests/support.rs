//! What the `#[pg_test]` modules share: running a query for its one value or for the error it
//! raises.

use pgrx::prelude::*;

/// The SQLSTATE and message that `query` raises, or ("00000", "") when it succeeds.
pub fn sqlstate_and_message(query: &str) -> (String, String) {
    Spi::run(
        "CREATE OR REPLACE FUNCTION pg_temp.error_of(q text) RETURNS text[] LANGUAGE plpgsql AS $$
         BEGIN EXECUTE q; RETURN ARRAY['00000', '']; EXCEPTION WHEN OTHERS THEN RETURN ARRAY[SQLSTATE, SQLERRM]; END $$",
    )
    .unwrap();
    let got = Spi::get_one_with_args::<Vec<String>>("SELECT pg_temp.error_of($1)", &[query.into()]).unwrap().unwrap();
    (got[0].clone(), got[1].clone())
}

/// The SQLSTATE that `query` raises, or "00000" when it succeeds.
pub fn sqlstate_of(query: &str) -> String {
    sqlstate_and_message(query).0
}

/// The one non-NULL value `query` returns.
pub fn one<T: FromDatum + IntoDatum>(query: &str) -> T {
    Spi::get_one::<T>(query).unwrap().unwrap()
}
