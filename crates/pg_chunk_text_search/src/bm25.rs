//! Okapi BM25 over PostgreSQL `tsvector`s: the text leg of `knowledge.search`.
//!
//! A chunk's score for a query is `Σ idf(t) · tf · (k1 + 1) / (tf + k1 · (1 − b + b · len / avg))`
//! over the query's lexemes `t` the chunk holds, where `tf` is how often `t` occurs in the chunk,
//! `len` how many lexeme occurrences the chunk has and `avg` the mean of `len` over the chunk
//! config's chunks. `idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))` (Lucene's form, never
//! negative), from the config's statistics (`knowledge_internal.text_stats`), which count occurrences the
//! same way [`TsVector::lexemes`] does: a lexeme's positions, or 1 when it has none.
//!
//! The tsvector comes as PostgreSQL stores it (`TSVectorData` in `tsearch/ts_type.h`), read
//! here so that no SQL has to unnest it per row: after the varlena header, `int32 size`, then
//! `size` 32-bit entries (bit 0 `haspos`, bits 1–11 the lexeme's length, bits 12–31 its offset
//! in the string area; little-endian bit-fields), then the string area: each lexeme, followed,
//! at the next even offset, by `uint16 npos` and its positions when `haspos`. Entries are
//! sorted by lexeme in byte order. Malformed bytes never panic: what cannot be read counts as
//! absent.

/// A tsvector's bytes after the varlena header.
#[derive(Clone, Copy, Debug)]
pub struct TsVector<'a> {
    data: &'a [u8],
    size: usize,
}

const ENTRY_BYTES: usize = 4;

impl<'a> TsVector<'a> {
    /// `None` when the bytes are too short for the entry count they declare.
    pub fn new(data: &'a [u8]) -> Option<TsVector<'a>> {
        let size = usize::try_from(i32::from_le_bytes(data.get(..4)?.try_into().ok()?)).ok()?;
        (data.len() >= 4 + size.checked_mul(ENTRY_BYTES)?).then_some(TsVector { data, size })
    }

    /// Each lexeme with how often it occurs (its positions; 1 for a lexeme stored without any),
    /// in the tsvector's order (byte order of the lexemes).
    pub fn lexemes(&self) -> impl Iterator<Item = (&'a [u8], usize)> + '_ {
        let strings = 4 + self.size * ENTRY_BYTES;
        (0..self.size).filter_map(move |i| {
            let at = 4 + i * ENTRY_BYTES;
            let entry = u32::from_le_bytes(self.data.get(at..at + ENTRY_BYTES)?.try_into().ok()?);
            let (has_positions, len, pos) = (entry & 1 == 1, ((entry >> 1) & 0x7FF) as usize, (entry >> 12) as usize);
            let lexeme = self.data.get(strings + pos..strings + pos + len)?;
            let occurrences = if has_positions {
                let npos_at = strings + (pos + len).next_multiple_of(2);
                usize::from(u16::from_le_bytes(self.data.get(npos_at..npos_at + 2)?.try_into().ok()?)).max(1)
            } else {
                1
            };
            Some((lexeme, occurrences))
        })
    }
}

/// BM25's two constants and the config's mean chunk length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bm25 {
    /// How quickly repeats of a term stop adding to the score (Lucene's default 1.2).
    pub k1: f64,
    /// How much a long chunk is discounted against the mean (0: not at all; default 0.75).
    pub b: f64,
    /// Mean lexeme occurrences per chunk of the config.
    pub average_length: f64,
}

impl Bm25 {
    /// Okapi BM25's term-frequency saturation (the usual 1.2).
    pub const DEFAULT_K1: f64 = 1.2;
    /// Okapi BM25's length normalisation (the usual 0.75).
    pub const DEFAULT_B: f64 = 0.75;

    /// The score of `tsv` for query terms `(lexeme, idf)`; `terms` must be sorted by lexeme
    /// (byte order) without repeats, which [`sorted_terms`] gives. One pass over the tsvector.
    pub fn score<L: AsRef<[u8]>>(&self, tsv: &TsVector, terms: &[(L, f64)]) -> f64 {
        let mut length = 0usize;
        let mut matched: Vec<(usize, f64)> = Vec::with_capacity(terms.len());
        let mut next = 0;
        for (lexeme, occurrences) in tsv.lexemes() {
            length += occurrences;
            while next < terms.len() && terms[next].0.as_ref() < lexeme {
                next += 1;
            }
            if next < terms.len() && terms[next].0.as_ref() == lexeme {
                matched.push((occurrences, terms[next].1));
                next += 1;
            }
        }
        let relative_length = if self.average_length > 0.0 { length as f64 / self.average_length } else { 1.0 };
        let saturation = self.k1 * (1.0 - self.b + self.b * relative_length);
        matched.iter().map(|&(tf, idf)| idf * tf as f64 * (self.k1 + 1.0) / (tf as f64 + saturation)).sum()
    }
}

/// Lucene's inverse document frequency of a term found in `df` of `chunks` chunks.
pub fn idf(chunks: f64, df: f64) -> f64 {
    (1.0 + (chunks - df + 0.5) / (df + 0.5)).ln()
}

/// Pairs lexemes with their idf, sorted by lexeme with repeats dropped (the first idf kept).
pub fn sorted_terms<'a>(lexemes: &'a [String], idf: &[f64]) -> Vec<(&'a [u8], f64)> {
    let mut terms: Vec<(&[u8], f64)> = lexemes.iter().map(|l| l.as_bytes()).zip(idf.iter().copied()).collect();
    terms.sort_by(|a, b| a.0.cmp(b.0));
    terms.dedup_by(|later, earlier| later.0 == earlier.0);
    terms
}

#[cfg(test)]
#[path = "bm25_tests.rs"]
mod tests;
