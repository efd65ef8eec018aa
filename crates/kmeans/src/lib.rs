//! Argus k-means, the data side and the plaintext reference (Sharemind paper, section 8.4, Table 3).
//!
//! * [`data`]: [`Dataset`], numeric CSV read with exact decimal scaling, [`Dataset::unsigned`] for the
//!   MPC ring, and [`unscale`] to print results in the file's units.
//! * [`generate`]: the UCI synthetic control chart data from its definition ([`control_chart`]) and a
//!   synthetic stand-in shaped like the UCI plants data ([`plants_like`]).
//! * [`protocol`]: private k-means against the engine's scheme seam (the Sharemind scheme, its
//!   plaintext twin, the cost counter).
//! * [`run`]: data brought into the ring ([`run::prepare`]) and three local parties
//!   ([`run::run_local`]).
//! * [`reference`](mod@reference): [`kmeans`] in exact integer arithmetic, the oracle for the MPC protocol, and
//!   [`check_ring_fits`].
//!
//! ```
//! use argus_kmeans::{kmeans, unscale, Dataset};
//!
//! let data = Dataset::parse_csv("example", "x,y\n0,0\n0,1\n10,10\n10,11.5\n")?;
//! assert_eq!((data.rows, data.cols, data.scale), (4, 2, 1));
//! let points = data.unsigned(32)?;
//! let outcome = kmeans(&points.values, points.rows, points.cols, 2, None)?;
//! assert!(outcome.converged);
//! assert_eq!(outcome.assignment, vec![0, 0, 1, 1]);
//! // The second centroid's y: floor((100 + 115) / 2) = 107, i.e. 10.7 in the file's units.
//! assert_eq!(unscale(points.signed(outcome.centroids[3]), data.scale), "10.7");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod data;
pub mod generate;
pub mod protocol;
pub mod reference;
pub mod run;

pub use data::{unscale, DataError, Dataset, Unsigned, MAX_SCALE};
pub use generate::{control_chart, control_chart_labels, plants_like, CONTROL_CHART_CLASSES};
pub use reference::{assign, centroids, check_ring_fits, kmeans, sizes, KmeansError, Outcome};
