//! Closed sets of names that SQL shows or takes (split reasons, block kinds, strategies, model
//! kinds, roles, ...): each is an enum whose `as_str` is the one spelling, read back with
//! `FromStr`. Both pg_chunk_core and pg_chunk_embed make theirs with [`named_enum!`].

#![warn(missing_docs)]

/// A name outside its closed set: `what` says which set (`"split reason"`), `value` is the name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} \"{value}\"")]
pub struct UnknownName {
    /// The set the name was looked up in.
    pub what: &'static str,
    /// The name as given.
    pub value: String,
}

/// A closed set of names read with `FromStr`.
pub trait NamedSet: std::str::FromStr {
    /// Every name, each in double quotes, separated by commas (`"a", "b"`): for error
    /// messages that list the choices.
    fn quoted_names() -> String;
}

/// An enum of unit variants, each with its SQL-visible name: `as_str`, `Display`, `FromStr`
/// (error [`UnknownName`]), `ALL` (in declaration order) and [`NamedSet`].
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($what:literal) {
            $($(#[$variant_meta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$variant_meta])* $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The name SQL shows and takes.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl $crate::NamedSet for $name {
            fn quoted_names() -> String {
                $name::ALL.iter().map(|v| format!("\"{}\"", v.as_str())).collect::<Vec<_>>().join(", ")
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::UnknownName;

            fn from_str(s: &str) -> Result<$name, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err($crate::UnknownName { what: $what, value: s.to_string() }),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests;
