//! CJK text made readable to PostgreSQL's full-text parser.
//!
//! Chinese and Japanese put no spaces between words, so the parser takes a whole run of
//! ideographs (often a sentence) as one word, and a query matches nothing but that exact
//! sentence. Writing each run as its overlapping two-character words (bigrams, as Lucene's
//! CJKAnalyzer and pg_bigm do) lets a query's words match wherever they occur: "数据库管理"
//! becomes "数据 据库 库管 管理". Both the chunks' tsvectors and the queries go through it.
//! Devanagari needs nothing: the parser already splits Hindi at spaces into whole words.

use pg_chunk_ideograph::is_ideograph;
use std::borrow::Cow;

/// `text` with every run of CJK characters (ideographs, kana, Hangul syllables) written as its
/// overlapping bigrams separated by spaces, a run of one character kept as it is; borrowed when
/// there is no such run.
pub fn cjk_bigrams(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_ideograph) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() * 3);
    let mut run: Vec<char> = Vec::new();
    for c in text.chars() {
        if is_ideograph(c) {
            run.push(c);
            continue;
        }
        write_run(&mut out, &run);
        run.clear();
        out.push(c);
    }
    write_run(&mut out, &run);
    Cow::Owned(out)
}

fn write_run(out: &mut String, run: &[char]) {
    if run.is_empty() {
        return;
    }
    out.push(' ');
    if run.len() == 1 {
        out.push(run[0]);
    } else {
        for (i, pair) in run.windows(2).enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push(pair[0]);
            out.push(pair[1]);
        }
    }
    out.push(' ');
}

#[cfg(test)]
#[path = "cjk_tests.rs"]
mod tests;
