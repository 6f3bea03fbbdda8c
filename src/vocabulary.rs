//! Closed vocabularies: the words of the output (a verdict, a direction, a confidence...)
//! as enums, each word written once. [`vocabulary!`] declares the enum and, from the one
//! list of variants and words, its `as_str`, `ALL`, `Display`, `FromStr` and serde
//! (a word, as the JSON, CSV and text have always written it), so the words a program
//! compares and the words it prints cannot drift apart.

use std::fmt;

/// A word that is not one of a vocabulary's (reading JSON or a table back).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownWord {
    pub vocabulary: &'static str,
    pub word: String,
    pub expected: Vec<&'static str>,
}

impl fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a {} (one of: {})",
            self.word,
            self.vocabulary,
            self.expected.join(", ")
        )
    }
}

impl std::error::Error for UnknownWord {}

/// Declares a closed vocabulary:
///
/// ```ignore
/// vocabulary! {
///     /// Where the capture was taken.
///     #[derive(Default)]
///     pub enum Vantage {
///         Client = "client",
///         #[default]
///         Unknown = "unknown",
///     }
/// }
/// ```
///
/// The enum derives `Clone, Copy, Debug, PartialEq, Eq, Hash` (more with `#[derive]`
/// above it) and gets `as_str`, `ALL` (declaration order), `Display`, `FromStr`, and
/// serde as the word. The binary's vocabularies use it too (`bdpscope::vocabulary!`).
#[macro_export]
macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every word, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word, as every output writes it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $word ),+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::vocabulary::UnknownWord;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| $crate::vocabulary::UnknownWord {
                        vocabulary: stringify!($name),
                        word: s.to_string(),
                        expected: Self::ALL.iter().map(|v| v.as_str()).collect(),
                    })
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <String as ::serde::Deserialize>::deserialize(d)?;
                s.parse().map_err(::serde::de::Error::custom)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::vocabulary! {
        /// A test vocabulary.
        #[derive(PartialOrd, Ord, Default)]
        pub enum Size {
            Small = "small",
            #[default]
            Extra = "extra-large",
        }
    }

    #[test]
    fn a_word_round_trips_through_text_and_serde() {
        for s in Size::ALL {
            assert_eq!(s.as_str().parse::<Size>(), Ok(*s));
            let json = serde_json::to_string(s).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<Size>(&json).unwrap(), *s);
        }
        assert_eq!(Size::default(), Size::Extra);
        // Widths pad the word, as they pad a str (aligned text columns).
        assert_eq!(format!("[{:>6}]", Size::Small), "[ small]");
        assert!(Size::Small < Size::Extra);
    }

    #[test]
    fn an_unknown_word_names_the_vocabulary_and_its_words() {
        let e = "medium".parse::<Size>().unwrap_err();
        assert_eq!(e.to_string(), "\"medium\" is not a Size (one of: small, extra-large)");
        assert!(serde_json::from_str::<Size>("\"medium\"").is_err());
    }
}
