use super::*;
use std::fmt;
use std::str::FromStr;

fn round_trips<T>(all: &[T])
where
    T: Copy + PartialEq + fmt::Debug + fmt::Display + FromStr<Err = UnknownName>,
{
    for value in all {
        assert_eq!(value.to_string().parse::<T>(), Ok(*value));
    }
    assert_eq!("nope".parse::<T>().unwrap_err().value, "nope");
}

#[test]
fn names_round_trip() {
    round_trips(ModelKind::ALL);
    round_trips(Pooling::ALL);
    round_trips(Role::ALL);
    round_trips(ModelFile::ALL);
    assert_eq!(ModelKind::Static.as_str(), "static");
    assert_eq!(Pooling::Cls.as_str(), "cls");
    assert_eq!(Role::Query.as_str(), "query");
    assert_eq!("mean".parse(), Ok(Pooling::Mean));
    assert_eq!("transformers".parse::<ModelKind>().unwrap_err().to_string(), "unknown kind \"transformers\"");
}
