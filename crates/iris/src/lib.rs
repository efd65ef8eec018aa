//! Argus plaintext iris model: the reference every MPC result is compared with (paper 000,
//! Algorithm 1, with rotations and both eyes).
//!
//! * [`geometry`]: [`IrisGeometry`] and the flat bit layout
//!   `((row·cols + col)·filters + filter)·parts + part`.
//! * [`code`]: [`IrisCode`] (code + per-bit mask), rotations, trimmed masks, [`Template`] (both eyes).
//! * [`matcher`]: the exact-integer matcher — [`Threshold`], [`distance`], [`match_eye`],
//!   [`match_template`], [`find_matches`], [`MatchConfig`].
//! * [`encoding`]: masked bitvectors in {−1, 0, 1}, `dot = ml − 2·hd`, and the comparison
//!   `a·ml − b·dot < 0` the MPC protocol evaluates, with the ring size of Lemma 2.
//! * [`generator`]: reproducible synthetic codes, genuine captures and impostors.
//! * [`io`]: Argus JSON templates and the `open-iris` layout.
//!
//! ```
//! use argus_iris::{find_matches, Generator, IrisGeometry, MatchConfig, Template};
//!
//! let mut gen = Generator::new(IrisGeometry::DEPLOYED, 42)?;
//! let alice = gen.random_template();
//! let db = vec![gen.impostor(), gen.genuine_template(&alice)?, gen.impostor()];
//! assert_eq!(find_matches(&alice, &db, &MatchConfig::default())?, vec![1]);
//! assert_eq!(Template::from_json(&alice.to_json()?)?, alice);
//! # Ok::<(), argus_iris::IrisError>(())
//! ```
#![deny(missing_docs)]

pub mod code;
pub mod encoding;
mod error;
pub mod generator;
pub mod geometry;
pub mod io;
pub mod matcher;
pub mod protocol;

pub use code::{expand_trimmed, IrisCode, MaskMode, Template};
pub use encoding::{
    comparison_range, dot_masked, dot_masks, encode_masked, hd_from_dot, lemma2_ring_bits, mask_vector, masked_dot,
    mpc_comparison_terms, mpc_comparison_value, mpc_match, ring_msb,
};
pub use error::IrisError;
pub use generator::Generator;
pub use geometry::{IrisGeometry, MAX_BITS};
pub use matcher::{
    best_rotation, distance, find_matches, fractional_distance, match_eye, match_template, rotations_in, EyeRule,
    EyeScore, MatchConfig, PreparedQuery, Threshold,
};
