//! Which language a document is in: named by `cfg.language`, else detected from its lines.

/// Languages whose rules differ: C++ follows C's, TypeScript JavaScript's; `Generic` cuts at blank lines only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Family {
    Python,
    JavaScript,
    Java,
    Go,
    Rust,
    C,
    Sql,
    Generic,
}

/// The names cfg `language` accepts: aliases, family, and the name chunks report.
pub(super) const LANGUAGES: [(&str, Family, &str); 9] = [
    ("python py python3", Family::Python, "python"),
    ("javascript js jsx mjs node", Family::JavaScript, "javascript"),
    ("typescript ts tsx", Family::JavaScript, "typescript"),
    ("java", Family::Java, "java"),
    ("go golang", Family::Go, "go"),
    ("rust rs", Family::Rust, "rust"),
    ("c h", Family::C, "c"),
    ("cpp c++ cxx cc hpp", Family::C, "cpp"),
    ("sql postgresql postgres plpgsql psql", Family::Sql, "sql"),
];

/// The language cfg names; an unknown name keeps the generic rules under that name.
pub(super) fn named_language(name: &str) -> (Family, String) {
    let name = name.trim().to_lowercase();
    let known = LANGUAGES.iter().find(|(aliases, ..)| aliases.split(' ').any(|a| a == name));
    known.map_or((Family::Generic, name.clone()), |(_, family, canonical)| (*family, canonical.to_string()))
}

/// Lines that betray a language: (prefix of the trimmed line, text it contains, language, weight).
/// SQL prefixes match in any case.
pub(super) const SIGNALS: &[(&str, &str, &str, usize)] = &[
    ("def ", ":", "python", 3),
    ("async def ", ":", "python", 3),
    ("from ", " import ", "python", 3),
    ("if __name__", "", "python", 3),
    ("elif ", ":", "python", 2),
    ("class ", "):", "python", 2),
    ("fn ", "(", "rust", 3),
    ("pub fn ", "", "rust", 3),
    ("pub ", "", "rust", 1),
    ("impl", "{", "rust", 2),
    ("use ", "::", "rust", 3),
    ("#[", "]", "rust", 3),
    ("let mut ", "", "rust", 2),
    ("func ", "", "go", 3),
    ("package main", "", "go", 3),
    ("import (", "", "go", 2),
    ("", " := ", "go", 1),
    ("package ", ";", "java", 3),
    ("import java", "", "java", 3),
    ("public class ", "", "java", 3),
    ("@Override", "", "java", 3),
    ("function", "(", "javascript", 3),
    ("export ", "", "javascript", 2),
    ("import ", " from ", "javascript", 3),
    ("", "require(", "javascript", 2),
    ("interface ", "{", "javascript", 2),
    ("", "console.", "javascript", 3),
    ("#include", "", "c", 3),
    ("#define ", "", "c", 2),
    ("typedef ", "", "c", 2),
    ("int main(", "", "c", 3),
    ("", "std::", "cpp", 3),
    ("template", "<", "cpp", 2),
    ("namespace ", "", "cpp", 2),
    ("CREATE ", "", "sql", 3),
    ("ALTER TABLE", "", "sql", 3),
    ("INSERT INTO", "", "sql", 2),
    ("GRANT ", "", "sql", 2),
    ("SELECT ", "", "sql", 1),
];

/// The language of `doc` by its shebang, else by the language whose signals its first 64 KB
/// show most; generic ("text") when nothing scores at least one strong signal.
pub(super) fn detect_language(doc: &str) -> (Family, String) {
    let head = &doc[..(0..=doc.len().min(64 * 1024)).rev().find(|&end| doc.is_char_boundary(end)).unwrap_or(0)];
    let shebang = head.lines().next().filter(|line| line.starts_with("#!")).unwrap_or("");
    if let Some((_, name)) =
        [("python", "python"), ("node", "javascript"), ("deno", "typescript"), ("bun", "javascript")]
            .iter()
            .find(|(program, _)| shebang.contains(program))
    {
        return named_language(name);
    }
    let names = ["python", "javascript", "java", "go", "rust", "c", "cpp", "sql"];
    let mut scores = [0usize; 8];
    for (line, &(prefix, needle, name, weight)) in
        head.lines().map(str::trim_start).flat_map(|line| SIGNALS.iter().map(move |signal| (line, signal)))
    {
        let starts =
            line.get(..prefix.len()).is_some_and(|p| p == prefix || (name == "sql" && p.eq_ignore_ascii_case(prefix)));
        scores[names.iter().position(|n| *n == name).unwrap_or(0)] +=
            if starts && line.contains(needle) { weight } else { 0 };
    }
    scores[5] += scores[6]; // C++ signals are C-family signals
    let best = (0..names.len()).fold(0, |best, i| if scores[i] > scores[best] { i } else { best });
    match names[best] {
        _ if scores[best] < 3 => (Family::Generic, "text".to_string()),
        "c" if scores[6] > 0 => named_language("cpp"),
        "javascript" if [": string", ": number", "interface "].iter().any(|t| head.contains(t)) => {
            named_language("typescript")
        }
        name => named_language(name),
    }
}
