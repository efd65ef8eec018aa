//! The iris schemes: the registry, which lists each scheme once, and one folder per scheme.
//!
//! Every folder has the same files: `mod.rs` (the share and database types, the client's
//! sharing, the batch check and the scheme's [`IrisScheme`](super::scheme::IrisScheme) impl),
//! `codec.rs` (its byte format after the shared header of [`codec`](super::codec)),
//! `recovery.rs` (share recovery and the database audit, [`recovery`](super::recovery)),
//! `validity.rs` (the check of a client's query shares, [`validity`](super::validity)) and
//! `mirror.rs` (the mirrored query, [`mirror`](super::mirror)). The replicated schemes over
//! Z_2^16 and Z_2^32 share `rep3`.
//!
//! The registry (`__iris_schemes!`, below) is the one list of the schemes: each entry gives the
//! scheme's type, its folder, the name a configuration and the wire use, the short name of
//! `argus bench iris`, the tag of its share format, and one line on what it is. [`Scheme`],
//! [`with_scheme!`](crate::with_scheme), [`Registered`] (whence
//! [`IrisScheme::name`](super::scheme::IrisScheme::name) and each codec's tag), the codec's
//! tag → name table and the command line's names are all made from it. Adding a scheme is its
//! folder, its `mod` line below and one entry in the registry.

use serde::{Deserialize, Serialize};

pub mod f16;
pub mod gr16;
pub mod plain_mask;
pub mod rep3;

/// The registry of the iris schemes (see [the module](self)): hands its list to the macro
/// `$then`, after `$args`. Each entry: extra attributes (`#[default]` for the default scheme),
/// then `Type in folder: "configuration-name", "bench-name", tag, "one line on it";`. A tag, once
/// used, is never given to another scheme ([`RETIRED_TAGS`]).
#[doc(hidden)]
#[macro_export]
macro_rules! __iris_schemes {
    ([$($then:tt)*] $($args:tt)*) => {
        $($then)*! { ($($args)*)
            /// The default: the fastest measured with secret masks, at the 2-byte storage bound.
            #[default]
            MpcLiftGr16 in gr16: "mpclift-GR16-shamir", "mpclift-gr16", 6,
                "Shamir over GR(2^16, 4), MPCLift-Z after the products: 2 bytes of share per code bit, one 16-bit \
                 multiply per bit (the deployed system's sharing)";
            MpcLiftF16 in f16: "mpclift-F16-shamir", "mpclift-f16", 3,
                "Shamir over F_65519, MPCLift-F: 2 bytes of share per code bit";
            MpcLiftZ16 in rep3: "mpclift-Z16-rep3", "mpclift-z16", 1,
                "replicated over Z_2^16, MPCLift-Z: 4 bytes of share per code bit";
            NoLiftZ32 in rep3: "nolift-Z32-rep3", "nolift-z32", 2,
                "replicated over Z_2^32, NoLift-Z: 8 bytes of share per code bit";
            PlainMaskZ16 in plain_mask: "plain-mask-Z16-rep3", "plain-mask-z16", 4,
                "Alg. 2: public masks, known to the nodes; secret codes replicated over Z_2^16";
        }
    };
}

/// Tags of share formats no longer read, with what a share that carries one is: refused by name,
/// and never given to another scheme.
pub const RETIRED_TAGS: [(u8, &str); 1] = [(5, "mpclift-GR16-shamir in its retired row-major layout (share again)")];

/// A scheme's entry in the registry.
pub trait Registered {
    /// The scheme, as the configuration names it.
    const SCHEME: Scheme;
}

/// What the registry makes inside this crate: the types' re-exports, [`Scheme`] and
/// [`Registered`].
macro_rules! registered {
    (() $( $(#[$attr:meta])* $ty:ident in $folder:ident: $name:literal, $short:literal, $tag:literal, $about:literal; )*) => {
        $( pub use self::$folder::$ty; )*

        /// The schemes a node can run (paper 000 section 5), as the `[iris] scheme` setting names
        /// them; all keep the masks secret except `PlainMaskZ16`. [`with_scheme!`](crate::with_scheme)
        /// turns one into its [`IrisScheme`](super::scheme::IrisScheme).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
        pub enum Scheme {
            $(
                #[doc = $about]
                $(#[$attr])*
                #[serde(rename = $name)]
                $ty,
            )*
        }

        impl Scheme {
            /// Every scheme, in the registry's order.
            pub const ALL: &[Scheme] = &[$(Scheme::$ty),*];

            /// The name the configuration and the wire use, e.g. `mpclift-GR16-shamir`.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Scheme::$ty => $name,)*
                }
            }
            /// The short name of `argus bench iris --schemes`, e.g. `mpclift-gr16`.
            pub const fn short_name(self) -> &'static str {
                match self {
                    $(Scheme::$ty => $short,)*
                }
            }
            /// The tag of its share format (byte 1 of every share, [`codec`](super::codec)).
            pub const fn tag(self) -> u8 {
                match self {
                    $(Scheme::$ty => $tag,)*
                }
            }
            /// One line on what it is.
            pub const fn about(self) -> &'static str {
                match self {
                    $(Scheme::$ty => $about,)*
                }
            }
        }

        $(
            impl Registered for $ty {
                const SCHEME: Scheme = Scheme::$ty;
            }
        )*
    };
}

crate::__iris_schemes!([registered]);

impl Scheme {
    /// The scheme whose share format has `tag`.
    pub fn from_tag(tag: u8) -> Option<Scheme> {
        Scheme::ALL.iter().copied().find(|s| s.tag() == tag)
    }
    /// The scheme whose configuration name is `name`, exactly.
    pub fn from_name(name: &str) -> Option<Scheme> {
        Scheme::ALL.iter().copied().find(|s| s.name() == name)
    }
    /// The scheme whose bench name is `short`, exactly.
    pub fn from_short_name(short: &str) -> Option<Scheme> {
        Scheme::ALL.iter().copied().find(|s| s.short_name() == short)
    }
    /// Every configuration name, comma-separated in the registry's order: for help and errors.
    pub fn names() -> String {
        Scheme::ALL.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
    }
}

/// Runs `$body` with `$s` bound to the scheme value of `$scheme` (a
/// [`Scheme`](crate::protocol::Scheme)), so code generic over
/// [`IrisScheme`](crate::protocol::scheme::IrisScheme) can be picked at run time: a `match` with
/// one arm per registered scheme, `$body` in each (so `?` and `return` act on the caller's
/// function).
#[macro_export]
macro_rules! with_scheme {
    ($scheme:expr, $s:ident => $body:expr) => {
        $crate::__iris_schemes!([$crate::__with_scheme_arms] $scheme, $s, $body)
    };
}

/// [`with_scheme!`](crate::with_scheme)'s `match`, from the registry's list.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_scheme_arms {
    (($scheme:expr, $s:ident, $body:expr)
     $( $(#[$attr:meta])* $ty:ident in $folder:ident: $name:literal, $short:literal, $tag:literal, $about:literal; )*) => {
        match $scheme {
            $(
                $crate::protocol::Scheme::$ty => {
                    let $s = $crate::protocol::schemes::$ty;
                    $body
                }
            )*
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::scheme::IrisScheme;
    use std::collections::HashSet;

    /// Names, short names and tags are unique (retired tags included), each name round-trips
    /// through serde and its short name, each tag names its scheme, and the scheme value that
    /// [`with_scheme!`](crate::with_scheme) binds is the one asked for.
    #[test]
    fn the_registry_is_consistent() {
        let all = Scheme::ALL;
        let unique = |v: Vec<String>| v.iter().collect::<HashSet<_>>().len() == v.len();
        assert!(unique(all.iter().map(|s| s.name().to_string()).collect()));
        assert!(unique(all.iter().map(|s| s.short_name().to_string()).collect()));
        // Short names differ by more than case: the bench takes either name in any case.
        assert!(unique(all.iter().map(|s| s.short_name().to_ascii_lowercase()).collect()));
        let tags = all.iter().map(|s| s.tag()).chain(RETIRED_TAGS.map(|(t, _)| t));
        assert!(unique(tags.map(|t| t.to_string()).collect()), "a tag is given twice");
        for &s in all {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.name()));
            assert_eq!(serde_json::from_str::<Scheme>(&json).unwrap(), s);
            assert_eq!(Scheme::from_name(s.name()), Some(s));
            assert_eq!(Scheme::from_short_name(s.short_name()), Some(s));
            assert_eq!(Scheme::from_tag(s.tag()), Some(s));
            assert!(!s.about().is_empty());
            assert_eq!(crate::with_scheme!(s, x => x.name()), s.name());
            assert_eq!(crate::with_scheme!(s, x => scheme_of(&x)), s);
        }
        assert_eq!(Scheme::default(), Scheme::MpcLiftGr16);
        assert_eq!(Scheme::names().split(", ").collect::<Vec<_>>(), all.iter().map(|s| s.name()).collect::<Vec<_>>());
        for (tag, _) in RETIRED_TAGS {
            assert_eq!(Scheme::from_tag(tag), None);
        }
    }

    fn scheme_of<S: IrisScheme>(_: &S) -> Scheme {
        S::SCHEME
    }
}
