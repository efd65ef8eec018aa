//! The applications' shapes, synthetic datasets and the plaintext twin.
//!
//! Every template entry is 8 bits (the paper's truncation). Half of the queries are noisy
//! copies of a reference (genuine), the rest fresh (impostors); the threshold sits between the
//! genuine distances and the others.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// One of paper 004's three applications.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum App {
    /// Fingerprints: 640 entries, 32-bit distances.
    FingerCode,
    /// Faces of 92 × 112 pixels projected on [`EIGENFACES`] eigenfaces in MPC, 64-bit distances.
    Eigenfaces,
    /// 128-dimensional embeddings, 32-bit distances.
    FaceNet,
}

/// Eigenfaces of the [`App::Eigenfaces`] basis (the projected dimension).
pub const EIGENFACES: usize = 12;

/// Largest magnitude of an eigenface entry: the basis is scaled to 7-bit signed integers so
/// that every projected distance of 8-bit faces fits below 2^61 (see [`App::distance_bits`]).
pub const BASIS_MAX: i64 = 63;

/// Largest noise added to an entry of a genuine query.
const NOISE: i64 = 8;

impl App {
    /// Every application, in the paper's order.
    pub const ALL: [App; 3] = [App::FingerCode, App::Eigenfaces, App::FaceNet];

    /// The name the command line and the bench records use.
    pub fn name(self) -> &'static str {
        match self {
            App::FingerCode => "fingercode",
            App::Eigenfaces => "eigenfaces",
            App::FaceNet => "facenet",
        }
    }

    /// The application called `name`.
    pub fn from_name(name: &str) -> Option<App> {
        App::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Entries of a template (the paper's dimensions).
    pub fn dim(self) -> usize {
        match self {
            App::FingerCode => 640,
            App::Eigenfaces => 92 * 112,
            App::FaceNet => 128,
        }
    }

    /// Entries of the vectors whose distances are taken: the template's, or the projection's.
    pub fn compared_dim(self) -> usize {
        match self {
            App::Eigenfaces => EIGENFACES,
            _ => self.dim(),
        }
    }

    /// The ring's width: the smallest of 32 and 64 bits that holds every distance exactly —
    /// the paper's 32 for FingerCode; 32 for FaceNet too (the paper takes 64, but 8-bit
    /// embeddings' distances stay below 2^23); 64 for Eigenfaces, whose projected distances do
    /// not fit 32 bits.
    pub fn ring_bits(self) -> u32 {
        if self.distance_bits() < 32 {
            32
        } else {
            64
        }
    }

    /// The paper's batch: (queries, references).
    pub fn paper_sizes(self) -> (usize, usize) {
        match self {
            App::FingerCode => (128, 1024),
            App::Eigenfaces => (80, 1000),
            App::FaceNet => (1024, 1024),
        }
    }

    /// The largest distance any 8-bit inputs give.
    pub fn max_distance(self) -> u128 {
        let d = self.compared_dim() as u128;
        match self {
            App::Eigenfaces => {
                let coord = 2 * self.dim() as u128 * 255 * BASIS_MAX as u128;
                d * coord * coord
            }
            _ => d * 255 * 255,
        }
    }

    /// `k` with every distance and threshold below `2^k`: the comparison's width.
    pub fn distance_bits(self) -> u32 {
        128 - self.max_distance().leading_zeros()
    }
}

/// A batch of queries and the references they are checked against, row-major `u8` templates.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// The application (dimensions, ring).
    pub app: App,
    /// The client's `m` queries.
    pub queries: Vec<u8>,
    /// The server's `n` references (raw faces for Eigenfaces).
    pub refs: Vec<u8>,
    /// Eigenfaces only: the server's basis (`dim × EIGENFACES`, row-major) and average face.
    pub basis: Vec<i64>,
    /// Eigenfaces only: the server's average face.
    pub mean: Vec<u8>,
    /// A query matches a reference at distance at most this.
    pub threshold: u64,
    /// For each query, the reference it is a noisy copy of (`None`: an impostor).
    pub genuine: Vec<Option<usize>>,
}

impl Dataset {
    /// `m` queries against `n` references of `app`, drawn from `seed`.
    pub fn synthetic(app: App, m: usize, n: usize, seed: u64) -> Dataset {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let dim = app.dim();
        let refs: Vec<u8> = (0..n * dim).map(|_| rng.gen()).collect();
        let (basis, mean) = match app {
            App::Eigenfaces => {
                let basis = (0..dim * EIGENFACES).map(|_| rng.gen_range(-BASIS_MAX..=BASIS_MAX)).collect();
                let mean = (0..dim)
                    .map(|j| (0..n).map(|i| refs[i * dim + j] as usize).sum::<usize>() / n.max(1))
                    .map(|v| v as u8)
                    .collect();
                (basis, mean)
            }
            _ => (Vec::new(), Vec::new()),
        };
        let mut queries = Vec::with_capacity(m * dim);
        let mut genuine = Vec::with_capacity(m);
        for _ in 0..m {
            if n > 0 && rng.gen_bool(0.5) {
                let r = rng.gen_range(0..n);
                let noisy = refs[r * dim..(r + 1) * dim]
                    .iter()
                    .map(|&v| (v as i64 + rng.gen_range(-NOISE..=NOISE)).clamp(0, 255) as u8);
                queries.extend(noisy);
                genuine.push(Some(r));
            } else {
                queries.extend((0..dim).map(|_| rng.gen::<u8>()));
                genuine.push(None);
            }
        }
        let mut data = Dataset { app, queries, refs, basis, mean, threshold: 0, genuine };
        data.threshold = data.genuine_threshold();
        data
    }

    /// Queries (`m`).
    pub fn m(&self) -> usize {
        self.queries.len() / self.app.dim()
    }

    /// References (`n`).
    pub fn n(&self) -> usize {
        self.refs.len() / self.app.dim()
    }

    /// Halfway between the largest genuine distance and the smallest other one (the synthetic
    /// population's calibration): the twin then matches each genuine query to its reference
    /// alone, if the two ranges do not overlap.
    fn genuine_threshold(&self) -> u64 {
        let (d, n) = (self.distances(), self.n());
        let (mut genuine, mut other) = (0u128, self.app.max_distance());
        for (i, g) in self.genuine.iter().enumerate() {
            for (j, &x) in d[i * n..(i + 1) * n].iter().enumerate() {
                if *g == Some(j) {
                    genuine = genuine.max(x);
                } else {
                    other = other.min(x);
                }
            }
        }
        (genuine + other.saturating_sub(genuine) / 2) as u64
    }

    /// The vectors whose distances are taken (see [`project`]).
    pub fn project(&self, templates: &[u8]) -> Vec<i64> {
        project(self.app, templates, &self.basis, &self.mean)
    }

    /// The plaintext twin: every query's squared distance to every reference (m × n).
    pub fn distances(&self) -> Vec<u128> {
        let d = self.app.compared_dim();
        let (x, y) = (self.project(&self.queries), self.project(&self.refs));
        x.chunks_exact(d)
            .flat_map(|q| {
                y.chunks_exact(d).map(move |r| q.iter().zip(r).map(|(&a, &b)| ((a - b) as i128).pow(2) as u128).sum())
            })
            .collect()
    }

    /// The plaintext twin's decisions: `D_ij ≤ threshold`, row-major m × n.
    pub fn decide(&self) -> Vec<bool> {
        self.distances().into_iter().map(|d| d <= self.threshold as u128).collect()
    }
}

/// The vectors whose distances are taken, as exact integers: the templates themselves, or for
/// Eigenfaces their projections `(x − ū)·U` on the server's `basis` (`dim × EIGENFACES`).
pub fn project(app: App, templates: &[u8], basis: &[i64], mean: &[u8]) -> Vec<i64> {
    let dim = app.dim();
    match app {
        App::Eigenfaces => templates
            .chunks_exact(dim)
            .flat_map(|t| {
                (0..EIGENFACES)
                    .map(move |e| (0..dim).map(|j| (t[j] as i64 - mean[j] as i64) * basis[j * EIGENFACES + e]).sum())
            })
            .collect(),
        _ => templates.iter().map(|&v| v as i64).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_distance_fits_the_comparison_and_the_ring() {
        for app in App::ALL {
            let k = app.distance_bits();
            assert!(k < app.ring_bits(), "{app:?}: {k} bits");
            // the extreme templates (all 0 against all 255) reach the bound
            let mut d = Dataset::synthetic(app, 1, 1, 1);
            d.queries.fill(0);
            d.refs.fill(255);
            if app == App::Eigenfaces {
                d.mean.fill(0);
                d.basis.iter_mut().for_each(|b| *b = BASIS_MAX);
            }
            assert!(d.distances()[0] <= app.max_distance());
        }
    }

    #[test]
    fn genuine_queries_match_their_reference_and_impostors_do_not() {
        for app in App::ALL {
            let d = Dataset::synthetic(app, 12, 20, 3);
            let got = d.decide();
            assert!((d.threshold as u128) < 1 << app.distance_bits());
            for (i, g) in d.genuine.iter().enumerate() {
                let row = &got[i * d.n()..(i + 1) * d.n()];
                match g {
                    Some(r) => assert!(row[*r], "{app:?}: query {i} matches reference {r}"),
                    None => assert!(row.iter().all(|&b| !b), "{app:?}: impostor {i}"),
                }
            }
            assert!(d.genuine.iter().any(Option::is_some) && d.genuine.iter().any(Option::is_none));
        }
    }
}
