use super::NamedSet;
use crate::config::{Fallback, Strategy};
use crate::strategy::{BlockKind, ChunkType, SplitReason};
use std::str::FromStr;

/// Every name reads back as the value it came from, and an unknown one is an error naming it.
fn round_trips<T>(all: &[T])
where
    T: Copy + PartialEq + std::fmt::Debug + std::fmt::Display + FromStr<Err = super::UnknownName>,
{
    for value in all {
        assert_eq!(T::from_str(&value.to_string()), Ok(*value));
    }
    let error = T::from_str("no such name").unwrap_err();
    assert_eq!(error.value, "no such name");
}

#[test]
fn names_round_trip() {
    round_trips(SplitReason::ALL);
    round_trips(BlockKind::ALL);
    round_trips(ChunkType::ALL);
    round_trips(Strategy::ALL);
    round_trips(Fallback::ALL);
}

#[test]
fn spellings_are_the_ones_sql_shows() {
    let reasons: Vec<&str> = SplitReason::ALL.iter().map(|r| r.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "start",
            "inline",
            "threshold",
            "merged",
            "size",
            "forced",
            "window",
            "paragraph",
            "sentence",
            "code_boundary",
            "blank_line",
            "heading",
            "block",
            "topic",
            "density"
        ]
    );
    assert_eq!(Fallback::quoted_names(), "\"error\", \"lexical\", \"fixed\"");
    assert_eq!(BlockKind::IndentedCode.as_str(), "indented_code");
    assert_eq!(ChunkType::Statement.to_string(), "statement");
}
