//! Links that cannot rot: every relative link in the repository's Markdown (`[text](path)`,
//! `[text](path#heading)`, `[text](#heading)`) names a file or folder that exists and, for a
//! heading, one the target page has, spelt as GitHub spells a heading's anchor (lower case, spaces
//! made `-`, punctuation but `-` and `_` dropped, `-1`, `-2` after repeats). Links in fenced blocks
//! and code spans are not links; `http:`, `https:` and `mailto:` ones are not checked (no network).

use super::blocks::is_fence;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Every `.md` file under `root`, outside hidden folders and cargo's `target`.
pub fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let (path, name) = (entry.path(), entry.file_name().to_string_lossy().into_owned());
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" {
                    folders.push(path);
                }
            } else if name.ends_with(".md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The lines of a page outside fenced blocks (fences left out too), each with its number.
fn prose_lines(page: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fenced = false;
    page.lines().enumerate().filter_map(move |(index, line)| {
        if is_fence(line) {
            fenced = !fenced;
            return None;
        }
        (!fenced).then_some((index + 1, line))
    })
}

fn without_code_spans(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join("")
}

/// A heading's anchor as GitHub makes it.
pub fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings, repeats numbered.
pub fn anchors(page: &str) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut found = HashSet::new();
    for (_, line) in prose_lines(page) {
        let level = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&level) || !line[level..].starts_with(' ') {
            continue;
        }
        let base = anchor(&line[level..].trim().trim_end_matches('#').replace('`', ""));
        let repeats = seen.entry(base.clone()).or_insert(0);
        found.insert(if *repeats == 0 { base } else { format!("{base}-{repeats}") });
        *repeats += 1;
    }
    found
}

/// The targets of a page's inline links, each with its line number.
pub fn link_targets(page: &str) -> Vec<(usize, String)> {
    let mut targets = Vec::new();
    for (number, line) in prose_lines(page) {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(|c: char| c == ')' || c.is_whitespace()).unwrap_or(rest.len());
            if rest[end..].starts_with(')') && end > 0 {
                targets.push((number, rest[..end].to_string()));
            }
            rest = &rest[end..];
        }
    }
    targets
}

/// What is wrong with each relative link of the page at `path` (from the repository's `root`):
/// `path:line: target: why`. `anchors_of` gives a linked page's heading anchors (None: unreadable).
pub fn broken_links(
    root: &Path,
    path: &Path,
    page: &str,
    anchors_of: &dyn Fn(&Path) -> Option<HashSet<String>>,
) -> Vec<String> {
    let folder = path.parent().unwrap_or(Path::new(""));
    let own = anchors(page);
    let mut broken = Vec::new();
    for (number, target) in link_targets(page) {
        if ["http:", "https:", "mailto:"].iter().any(|scheme| target.starts_with(scheme)) {
            continue;
        }
        let (file, heading) = target.split_once('#').unwrap_or((&target, ""));
        let linked = root.join(folder).join(file);
        let why = if file.is_empty() {
            (!own.contains(heading)).then_some("no such heading")
        } else if !linked.exists() {
            Some("no such file or folder")
        } else if heading.is_empty() || !file.ends_with(".md") {
            None
        } else {
            match anchors_of(&linked) {
                Some(found) if found.contains(heading) => None,
                Some(_) => Some("no such heading"),
                None => Some("unreadable"),
            }
        };
        if let Some(why) = why {
            broken.push(format!("{}:{number}: {target}: {why}", path.display()));
        }
    }
    broken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_spelt_as_github_spells_them() {
        assert_eq!(anchor("Reuse: edits and repeated text"), "reuse-edits-and-repeated-text");
        assert_eq!(anchor("Pure pipeline throughput (no PostgreSQL)"), "pure-pipeline-throughput-no-postgresql");
        assert_eq!(
            anchor("e5 in batches, on another machine (2026-12-03)"),
            "e5-in-batches-on-another-machine-2026-12-03"
        );
        let page = "# Peers\n\n```\n# not a heading\n```\n## Peers\n### Retrieval through `knowledge.search`\n#no\n";
        let expected: HashSet<String> =
            ["peers", "peers-1", "retrieval-through-knowledgesearch"].map(String::from).into();
        assert_eq!(anchors(page), expected);
    }

    #[test]
    fn links_in_code_are_not_links() {
        let page = "See [a](a.md) and `[b](b.md)`,\n```\n[c](c.md)\n```\n[d](d.md#x) [e](https://e) [f](g h)";
        let targets: Vec<String> = link_targets(page).into_iter().map(|(_, t)| t).collect();
        assert_eq!(targets, ["a.md", "d.md#x", "https://e"]);
    }

    #[test]
    fn a_missing_file_or_heading_is_reported_with_its_line() {
        let root = std::env::temp_dir().join(format!("pg_chunk-links-test-{}", std::process::id()));
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/linked.md"), "# Helpers\n").unwrap();
        std::fs::write(root.join("present.txt"), "").unwrap();
        let page = "# Top\n[ok](#top) [no](#bottom)\n[a](../present.txt) [gone](gone.txt)\n\
                    [page](linked.md#helpers) [page](linked.md#other) [web](https://x#y)";
        let anchors_of = |path: &Path| std::fs::read_to_string(path).ok().map(|text| anchors(&text));
        let broken = broken_links(&root, Path::new("docs/page.md"), page, &anchors_of);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(
            broken,
            [
                "docs/page.md:2: #bottom: no such heading",
                "docs/page.md:3: gone.txt: no such file or folder",
                "docs/page.md:4: linked.md#other: no such heading",
            ]
        );
    }
}
