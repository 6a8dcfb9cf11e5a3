//! README.md's table of SQL functions against the installed catalog: it names every function in
//! schema `knowledge` (overloads count once, by name), and no function that is not there.

use pg_chunk_client_tests::connect;
use std::collections::BTreeSet;
use std::path::Path;

/// The function names in the first cell of each row of README.md's "## SQL functions" table:
/// every `` `name(` `` there.
fn readme_functions(readme: &str) -> BTreeSet<String> {
    let start = readme.find("\n## SQL functions\n").expect("README.md has a section \"## SQL functions\"");
    let section = &readme[start + 1..];
    let section = &section[..section[1..].find("\n## ").map_or(section.len(), |end| end + 1)];
    let mut names = BTreeSet::new();
    for line in section.lines().filter(|line| line.starts_with("| [")) {
        let first_cell = line[1..].split(" | ").next().unwrap();
        for code in first_cell.split('`').skip(1).step_by(2) {
            if let Some((name, _)) = code.split_once('(') {
                names.insert(name.to_string());
            }
        }
    }
    names
}

#[test]
fn readme_function_table_is_the_catalog() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let listed = readme_functions(&readme);
    let mut client = connect();
    let installed: BTreeSet<String> = client
        .query("SELECT DISTINCT proname::text FROM pg_proc WHERE pronamespace = 'knowledge'::regnamespace", &[])
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(installed.len() >= 20, "schema knowledge holds pg_chunk's functions: {installed:?}");
    let unlisted: Vec<&String> = installed.difference(&listed).collect();
    let unknown: Vec<&String> = listed.difference(&installed).collect();
    assert!(
        unlisted.is_empty() && unknown.is_empty(),
        "README.md's table of SQL functions differs from schema knowledge: functions it lacks {unlisted:?}; \
         functions it names that are not installed {unknown:?}"
    );
}

#[test]
fn readme_functions_are_read_from_the_first_cells() {
    let readme = "## SQL functions\n\n| function | what it does |\n|---|---|\n\
                  | [`a(x)`, `b()`](docs/a.md) | uses `c(y)` |\n\n## Next\n| [`d()`](x) | y |\n";
    assert_eq!(readme_functions(&format!("\n{readme}")), BTreeSet::from(["a".to_string(), "b".to_string()]));
}
