//! The layers lib.rs lists hold: every `crate::` path in a module of src/ names a module of a
//! layer above its own. A circle of imports, or a module of one layer importing another of the
//! same layer (`store` from `api`), fails here with the file and the path.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Each module's layer, from the comment in lib.rs (`//   3. models: ...`).
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let mut layers = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.strip_prefix("//   ") else { continue };
        let Some((number, rest)) = rest.split_once(". ") else { continue };
        let Ok(layer) = number.parse::<usize>() else { continue };
        let Some((modules, _)) = rest.split_once(':') else { continue };
        for module in modules.split(',') {
            layers.insert(module.trim().to_string(), layer);
        }
    }
    layers
}

/// The modules of ours that `source` names with `crate::`: `crate::x::...` and
/// `crate::{x, y::z}`.
fn imports(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in source.match_indices("crate::") {
        let rest = &source[at + "crate::".len()..];
        let paths = match rest.strip_prefix('{') {
            Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
            None => vec![rest],
        };
        for path in paths {
            let name: String = path.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                found.push(name);
            }
        }
    }
    found
}

/// Every import that does not point to a layer above: `file: path (layer a -> layer b)`.
fn upward_or_sideways(src: &Path) -> Vec<String> {
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let layers = layers(&lib);
    let mut wrong = Vec::new();
    let mut files: Vec<_> = fs::read_dir(src).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "rs")) {
        let stem = file.file_stem().unwrap().to_str().unwrap();
        if stem == "lib" || stem == "lib_tests" {
            continue;
        }
        let module = stem.strip_suffix("_tests").unwrap_or(stem);
        let Some(&layer) = layers.get(module) else {
            wrong.push(format!("{stem}.rs: module {module} is in no layer of lib.rs"));
            continue;
        };
        for import in imports(&fs::read_to_string(file).unwrap()) {
            match layers.get(&import) {
                Some(&of) if of < layer => {}
                Some(&of) => wrong.push(format!("{stem}.rs: crate::{import} (layer {layer} -> layer {of})")),
                None => wrong.push(format!("{stem}.rs: crate::{import}, which is in no layer of lib.rs")),
            }
        }
    }
    wrong
}

#[test]
fn modules_import_only_from_layers_above_their_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    assert!(layers(&fs::read_to_string(src.join("lib.rs")).unwrap()).len() >= 10, "lib.rs lists the layers");
    let wrong = upward_or_sideways(&src);
    assert!(wrong.is_empty(), "imports against the layers of lib.rs:\n{}", wrong.join("\n"));
}

#[test]
fn imports_are_read_in_both_forms() {
    let source = "use crate::gucs;\nuse crate::{errors::Error, models};\nlet x = crate::vector_cache::clear();";
    assert_eq!(imports(source), ["gucs", "errors", "models", "vector_cache"]);
}
