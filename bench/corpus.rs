//! The benchmark corpus: real English prose that every Debian machine has, the licence
//! texts in /usr/share/common-licenses (about 260 KB), repeated to the size a benchmark asks for.

use std::fs;

const LICENCES: &str = "/usr/share/common-licenses";

/// `bytes` of English prose (cut at a character boundary).
pub fn english_prose(bytes: usize) -> String {
    let mut names: Vec<_> = fs::read_dir(LICENCES)
        .unwrap_or_else(|e| panic!("{LICENCES}: {e}"))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.is_file())
        .collect();
    names.sort();
    let texts: Vec<String> = names.iter().filter_map(|path| fs::read_to_string(path).ok()).collect();
    let mut corpus = String::with_capacity(bytes + 4096);
    while corpus.len() < bytes {
        for text in &texts {
            corpus.push_str(text);
            corpus.push_str("\n\n");
        }
    }
    let mut end = bytes;
    while !corpus.is_char_boundary(end) {
        end -= 1;
    }
    corpus.truncate(end);
    corpus
}
