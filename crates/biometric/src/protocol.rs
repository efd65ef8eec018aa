//! The two-party protocol (paper 004, section 5): party 0 is the client with the queries,
//! party 1 the server with the references (and, for Eigenfaces, the basis and average face).
//!
//! Every matrix product multiplies a matrix of the client's by one of the server's, so each is
//! an [`owned_product`] (one direction of Gilboa's product offline, one local product per party
//! online). Offline ([`offline`]): those triples and the bit triples of the threshold, from OT
//! (or from a dealer, appendix C). Online ([`identify`]): the distances
//! `D = ‖x_i‖² + ‖y_j‖² − 2·X·Yᵀ`, the norms local where their vectors are, then
//! `[D_ij ≤ threshold]` by [`less_than`], XOR-shared. For Eigenfaces the projection
//! `X̄ = X·U − ū·U` comes first (the client's `X` by the server's basis), shared; its squared
//! norms are Beaver products and `X̄·Yᵀ` is the client's share of `X̄` by the server's `Y`
//! plus the server's share of it by `Y` locally.

use std::time::Instant;

use argus_math::{Ring, Z32, Z64};
use argus_mpc::additive2::{
    self, compare, less_than, owned_product, BitTriples, Ots, OwnedTriple, SharedBits, TensorTriple, Vole,
};
use argus_mpc::local::{self, Backend};
use argus_mpc::{MpcError, Party};
use argus_net::{NetConfig, Stats};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::data::{App, Dataset, EIGENFACES};

/// Where the matrix triples come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Tensor triples from OT between the two parties (Fig. 5): no one else is trusted.
    Ot,
    /// A dealer who knows the triples (appendix C; the matrix and the bit triples), simulated
    /// in-process from this seed: for comparison only, as both parties here could compute each
    /// other's shares.
    Dealer(u64),
}

/// A batch's shape: `m` queries against `n` references of `app`, matching at distance at most
/// `threshold`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    pub app: App,
    pub m: usize,
    pub n: usize,
    pub threshold: u64,
}

impl Batch {
    /// The comparison's width: every distance and `threshold + 1` lie below `2^k`.
    pub fn compare_bits(&self) -> u32 {
        let top = self.app.max_distance().max(self.threshold as u128 + 1);
        128 - top.leading_zeros()
    }
}

/// The matrix triples of one batch: [`Offline`] without the threshold's.
pub struct Products<E> {
    distances: OwnedTriple<E>,
    projection: Option<(OwnedTriple<E>, Vec<TensorTriple<E>>)>,
}

/// One party's correlated randomness for one batch, made before the inputs are known.
pub struct Offline<E> {
    distances: OwnedTriple<E>,
    projection: Option<(OwnedTriple<E>, Vec<TensorTriple<E>>)>,
    bits: BitTriples,
}

/// This party's offline material for `batch` (both parties call it together).
pub fn offline<R: Ring>(
    ring: &R,
    p: &mut Party,
    ots: &mut Ots,
    batch: &Batch,
    source: Source,
) -> Result<Offline<R::El>, MpcError> {
    let products = offline_products(ring, p, ots, batch, source)?;
    offline_bits(p, ots, batch, source, products)
}

/// The first part of [`offline`]: the triples of the distances (and of Eigenfaces' projection),
/// the paper's whole offline phase.
pub fn offline_products<R: Ring>(
    ring: &R,
    p: &mut Party,
    ots: &mut Ots,
    batch: &Batch,
    source: Source,
) -> Result<Products<R::El>, MpcError> {
    let (app, m, n) = (batch.app, batch.m, batch.n);
    let me = p.id();
    let triple = |p: &mut Party, ots: &mut Ots, shape: (usize, usize, usize)| match dealer(source, shape.1 as u64) {
        None => OwnedTriple::generate(ring, p, ots, shape),
        Some(mut rng) => Ok(OwnedTriple::deal(ring, &mut rng, shape).into_iter().nth(me).expect("two parts")),
    };
    let projection = match app {
        App::Eigenfaces => {
            let proj = triple(p, ots, (m, app.dim(), EIGENFACES))?;
            Some((proj, additive2::generate(ring, p, ots, 1, 1, m * EIGENFACES)?))
        }
        _ => None,
    };
    let distances = triple(p, ots, (m, app.compared_dim(), n))?;
    Ok(Products { distances, projection })
}

/// The rest of [`offline`]: the threshold's boolean triples.
pub fn offline_bits<E>(
    p: &mut Party,
    ots: &mut Ots,
    batch: &Batch,
    source: Source,
    Products { distances, projection }: Products<E>,
) -> Result<Offline<E>, MpcError> {
    let words = compare::triple_words(batch.m * batch.n, batch.compare_bits());
    let bits = match dealer(source, u64::MAX) {
        None => BitTriples::generate(p, ots, words)?,
        Some(mut rng) => BitTriples::deal(&mut rng, words).into_iter().nth(p.id()).expect("two shares"),
    };
    Ok(Offline { distances, projection, bits })
}

/// The dealer's randomness for one kind of triple (`salt`), if a dealer makes them.
fn dealer(source: Source, salt: u64) -> Option<ChaCha20Rng> {
    match source {
        Source::Ot => None,
        Source::Dealer(seed) => Some(ChaCha20Rng::seed_from_u64(seed ^ salt << 32)),
    }
}

/// Bytes each party sends in [`offline`] from OT, IKNP's padding aside: the owned triples'
/// ([`Vole::bytes`] of the one [`OwnedTriple::generate`] picks — paper 004, Table 3, for
/// Gilboa's product), Eigenfaces' squares (both directions) and the threshold's bit triples
/// (one OT each way per triple).
pub fn offline_bytes(batch: &Batch) -> [u64; 2] {
    match batch.app.ring_bits() {
        32 => offline_bytes_over(&Z32::new(), batch),
        _ => offline_bytes_over(&Z64::new(), batch),
    }
}

fn offline_bytes_over<R: Ring>(ring: &R, batch: &Batch) -> [u64; 2] {
    let (app, m) = (batch.app, batch.m);
    let owned = |shape| Vole::cheaper(ring, shape).bytes(ring, shape);
    let mut total = owned((m, app.compared_dim(), batch.n));
    if app == App::Eigenfaces {
        let (e, ell) = (EIGENFACES as u64, u64::from(ring.bits()));
        let proj = owned((m, app.dim(), EIGENFACES));
        let squares = m as u64 * e * ell * (16 + ell / 8);
        total = [total[0] + proj[0] + squares, total[1] + proj[1] + squares];
    }
    let bits = 64 * compare::triple_words(batch.m * batch.n, batch.compare_bits()) as u64 * 16;
    total.map(|t| t + bits)
}

/// One party's private input.
#[derive(Clone, Copy)]
pub enum Input<'a> {
    /// Party 0: `m` queries, row-major.
    Client { queries: &'a [u8] },
    /// Party 1: its database as it keeps it — the `n` references' compared vectors, row-major
    /// (the templates, or for Eigenfaces their projections: [`crate::data::project`], made once
    /// when a reference is stored) — and for Eigenfaces the basis and average face.
    Server { y: &'a [i64], basis: &'a [i64], mean: &'a [u8] },
}

/// XOR shares of `[D_ij ≤ threshold]`, row-major m × n: [`distances`], then the threshold.
/// Rounds: those of [`distances`] and [`compare::comparison_rounds`].
pub fn identify<R: Ring>(
    ring: &R,
    p: &mut Party,
    batch: &Batch,
    pre: &mut Offline<R::El>,
    input: Input<'_>,
) -> Result<SharedBits, MpcError> {
    let dist = distances(ring, p, batch, pre, input)?;
    threshold(ring, p, batch, pre, &dist)
}

/// XOR shares of `[D_ij ≤ threshold]` for shared distances `D`.
pub fn threshold<R: Ring>(
    ring: &R,
    p: &mut Party,
    batch: &Batch,
    pre: &mut Offline<R::El>,
    dist: &[R::El],
) -> Result<SharedBits, MpcError> {
    less_than(ring, p, &mut pre.bits, dist, batch.threshold as u128 + 1, batch.compare_bits())
}

/// Shares of the squared distances `D`, row-major m × n. Rounds: one per matrix product (two
/// for Eigenfaces, three with its squares).
pub fn distances<R: Ring>(
    ring: &R,
    p: &mut Party,
    batch: &Batch,
    pre: &Offline<R::El>,
    input: Input<'_>,
) -> Result<Vec<R::El>, MpcError> {
    let (app, m, n) = (batch.app, batch.m, batch.n);
    let (dim, d) = (app.dim(), app.compared_dim());
    let me0 = p.id() == 0;
    let lens = match input {
        Input::Client { queries } => me0 && queries.len() == m * dim,
        Input::Server { y, basis, mean } => {
            !me0 && y.len() == n * d
                && (app != App::Eigenfaces || (basis.len() == dim * EIGENFACES && mean.len() == dim))
        }
    };
    if !lens {
        return Err(MpcError::InvalidParameter(format!(
            "party {} of a {} batch of {m} × {n} got the other role's input or the wrong number of entries",
            p.id(),
            app.name()
        )));
    }
    let el = |v: i64| ring.from_i128(v as i128);
    let zeros = |len: usize| vec![ring.zero(); len];
    // the server's compared vectors Y (n × d) and their squared norms
    let server = match input {
        Input::Client { .. } => None,
        Input::Server { y, basis, mean } => {
            let norms: Vec<R::El> = y.chunks_exact(d).map(|r| el(r.iter().map(|&v| v * v).sum())).collect();
            Some((y.iter().map(|&v| el(v)).collect::<Vec<_>>(), norms, basis, mean))
        }
    };
    // the client's queries as ring elements
    let x: Vec<R::El> = match input {
        Input::Client { queries } => queries.iter().map(|&v| el(v as i64)).collect(),
        Input::Server { .. } => Vec::new(),
    };
    let (cross, norms) = match (&pre.projection, input, &server) {
        (None, Input::Client { queries }, _) => {
            let norms = queries.chunks_exact(d).map(|q| el(q.iter().map(|&v| (v as i64).pow(2)).sum())).collect();
            (owned_product(ring, p, &x, &pre.distances)?, norms)
        }
        (None, Input::Server { .. }, Some((y, ..))) => (owned_product(ring, p, y, &pre.distances)?, zeros(m)),
        (Some((proj, squares)), input, server) => {
            // X̄ = X·U − ū·U, the client's X by the server's basis (Uᵀ: one eigenface per row)
            let xbar = match (input, server) {
                (Input::Client { .. }, _) => owned_product(ring, p, &x, proj)?,
                (_, Some((_, _, basis, mean))) => {
                    let ut: Vec<R::El> =
                        (0..EIGENFACES).flat_map(|e| (0..dim).map(move |j| el(basis[j * EIGENFACES + e]))).collect();
                    let mut xbar = owned_product(ring, p, &ut, proj)?;
                    let mean_proj: Vec<i64> = (0..EIGENFACES)
                        .map(|e| (0..dim).map(|j| mean[j] as i64 * basis[j * EIGENFACES + e]).sum())
                        .collect();
                    for row in xbar.chunks_exact_mut(EIGENFACES) {
                        for (x, &mp) in row.iter_mut().zip(&mean_proj) {
                            *x = ring.sub(*x, el(mp));
                        }
                    }
                    xbar
                }
                _ => unreachable!("the server has its part"),
            };
            let sq = additive2::mul(ring, p, &xbar, &xbar, squares)?;
            let norms = sq.chunks_exact(d).map(|r| r.iter().fold(ring.zero(), |s, &v| ring.add(s, v))).collect();
            // X̄·Yᵀ: the client's share by the server's Y, plus the server's share by Y locally
            let c = match &server {
                None => owned_product(ring, p, &xbar, &pre.distances)?,
                Some((y, ..)) => {
                    let mut c = owned_product(ring, p, y, &pre.distances)?;
                    let mut local = zeros(m * n);
                    ring.gemm(&xbar, y, d, &mut local);
                    for (c, l) in c.iter_mut().zip(local) {
                        *c = ring.add(*c, l);
                    }
                    c
                }
            };
            (c, norms)
        }
        _ => unreachable!("the server has its part"),
    };
    let no_norms;
    let ref_norms: &[R::El] = match &server {
        Some((_, norms, ..)) => norms,
        None => {
            no_norms = zeros(n);
            &no_norms
        }
    };
    let two = ring.from_u128(2);
    Ok(cross
        .iter()
        .enumerate()
        .map(|(ij, &c)| ring.sub(ring.add(norms[ij / n], ref_norms[ij % n]), ring.mul(two, c)))
        .collect())
}

/// One party's measurements of a batch run by [`run_local`].
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// The offline phase's matrix triples alone (the paper's measure).
    pub offline_distance_seconds: f64,
    /// The whole offline phase, the threshold's triples included.
    pub offline_seconds: f64,
    /// The online phase's distances alone (the paper's measure).
    pub distance_seconds: f64,
    /// The whole online phase, the threshold included.
    pub online_seconds: f64,
    pub offline: Stats,
    pub online: Stats,
}

/// The revealed decisions (row-major m × n) and each party's measurements.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub matches: Vec<bool>,
    pub parties: [Measured; 2],
}

/// Runs `data`'s batch with both parties as threads of this process over `backend` (the
/// offline phase from `source`, then the online phase, each timed between barriers) and opens
/// the decisions to both.
pub fn run_local(data: &Dataset, backend: Backend, cfg: NetConfig, source: Source) -> Result<Outcome, MpcError> {
    let got = local::run(2, backend, cfg, |p| run_party(p, data, source))?;
    let mut got = got.into_iter();
    let ((matches, a), (other, b)) = (got.next().expect("party 0"), got.next().expect("party 1"));
    // both opened the same XOR shares
    debug_assert_eq!(matches, other);
    Ok(Outcome { matches, parties: [a, b] })
}

/// Runs this party of `data`'s batch over its session (the offline phase from `source`, then
/// the online phase, each timed between barriers), using only its own role's part of `data`,
/// and opens the decisions to both parties.
pub fn run_party(p: &mut Party, data: &Dataset, source: Source) -> Result<(Vec<bool>, Measured), MpcError> {
    match data.app.ring_bits() {
        32 => party(&Z32::new(), p, data, source),
        _ => party(&Z64::new(), p, data, source),
    }
}

fn party<R: Ring>(ring: &R, p: &mut Party, data: &Dataset, source: Source) -> Result<(Vec<bool>, Measured), MpcError> {
    let batch = Batch { app: data.app, m: data.m(), n: data.n(), threshold: data.threshold };
    let mut ots = Ots::setup(p)?;
    // the server's database as stored: its references' compared vectors
    let y = if p.id() == 1 { data.project(&data.refs) } else { Vec::new() };
    let barrier = |p: &mut Party| additive2::reveal(&Z32::new(), p, &[]).map(|_| ());
    barrier(p)?;
    let (start, before) = (Instant::now(), p.stats());
    let products = offline_products(ring, p, &mut ots, &batch, source)?;
    let offline_distance_seconds = start.elapsed().as_secs_f64();
    let mut pre = offline_bits(p, &mut ots, &batch, source, products)?;
    let (offline_seconds, offline) = (start.elapsed().as_secs_f64(), p.stats() - before);
    barrier(p)?;
    let (start, before) = (Instant::now(), p.stats());
    let input = if p.id() == 0 {
        Input::Client { queries: &data.queries }
    } else {
        Input::Server { y: &y, basis: &data.basis, mean: &data.mean }
    };
    let dist = distances(ring, p, &batch, &pre, input)?;
    let distance_seconds = start.elapsed().as_secs_f64();
    let bits = threshold(ring, p, &batch, &mut pre, &dist)?;
    let (online_seconds, online) = (start.elapsed().as_secs_f64(), p.stats() - before);
    let matches = additive2::reveal_bits(p, &bits)?;
    Ok((
        matches,
        Measured { offline_distance_seconds, offline_seconds, distance_seconds, online_seconds, offline, online },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every application's secure decisions equal the twin's, from OT and from a dealer, with
    /// the online rounds of the products and the comparison.
    #[test]
    fn secure_decisions_equal_the_twins() {
        for (app, m, n) in [(App::FingerCode, 5, 9), (App::Eigenfaces, 3, 4), (App::FaceNet, 7, 70)] {
            let data = Dataset::synthetic(app, m, n, 11);
            let want = data.decide();
            assert!(want.iter().any(|&b| b), "{app:?}: some match");
            for source in [Source::Ot, Source::Dealer(5)] {
                let got = run_local(&data, Backend::Memory, NetConfig::default(), source).unwrap();
                assert_eq!(got.matches, want, "{app:?} {source:?}");
                let batch = Batch { app, m, n, threshold: data.threshold };
                let products = if app == App::Eigenfaces { 3 } else { 1 };
                let rounds = products + compare::comparison_rounds(batch.compare_bits());
                assert_eq!(got.parties[0].online.rounds as usize, rounds, "{app:?}");
            }
        }
    }

    /// The offline phase sends what [`offline_bytes`] says, up to IKNP's padding of each call.
    #[test]
    fn offline_bytes_are_the_papers() {
        // the last shape's distances come from the silent VOLE
        assert_eq!(Vole::cheaper(&Z32::new(), (2, 128, 1000)), Vole::Silent);
        for (app, m, n) in [
            (App::FingerCode, 4, 30),
            (App::FingerCode, 7, 3),
            (App::Eigenfaces, 2, 3),
            (App::FaceNet, 9, 64),
            (App::FaceNet, 2, 1000),
        ] {
            let data = Dataset::synthetic(app, m, n, 1);
            let got = run_local(&data, Backend::Memory, NetConfig::default(), Source::Ot).unwrap();
            let want = offline_bytes(&Batch { app, m, n, threshold: data.threshold });
            for (party, want) in got.parties.iter().zip(want) {
                let sent = party.offline.bytes_sent;
                assert!(sent >= want && sent - want <= 8 * 128 * 16, "{app:?}: sent {sent}, formula {want}");
            }
        }
    }

    /// A threshold at the largest distance matches everything, 0 only equal templates; a party
    /// given the other's role is refused.
    #[test]
    fn thresholds_at_the_edges_and_wrong_roles() {
        let mut data = Dataset::synthetic(App::FaceNet, 3, 4, 2);
        data.queries[..128].copy_from_slice(&data.refs[..128]);
        for t in [0, App::FaceNet.max_distance() as u64, data.threshold] {
            data.threshold = t;
            let got = run_local(&data, Backend::Memory, NetConfig::default(), Source::Dealer(1)).unwrap();
            assert_eq!(got.matches, data.decide(), "threshold {t}");
        }
        let batch = Batch { app: App::FaceNet, m: 3, n: 4, threshold: 9 };
        let err = local::run(2, Backend::Memory, NetConfig::default(), |p| {
            let mut ots = Ots::setup(p)?;
            let mut pre = offline(&Z64::new(), p, &mut ots, &batch, Source::Dealer(1))?;
            identify(&Z64::new(), p, &batch, &mut pre, Input::Client { queries: &data.queries })
        });
        assert!(err.is_err());
    }
}
