use super::library_serves;

#[test]
fn a_library_serves_its_own_and_earlier_sql_only() {
    let cases = [
        ("0.4.0", "0.4.0", true),
        ("0.4.0", "0.3.0", true),
        ("0.4.0", "0.1.0", true),
        ("0.10.0", "0.9.0", true),
        ("0.4.0", "0.5.0", false),
        ("0.4.0", "9.9.9", false),
        ("0.9.0", "0.10.0", false),
        ("0.4.0", "0.4.0-beta", false),
        ("0.4.0-beta", "0.4.0-beta", true),
    ];
    for (library, sql, serves) in cases {
        assert_eq!(library_serves(library, sql), serves, "library {library}, sql {sql}");
    }
}
