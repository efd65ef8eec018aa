//! The uniqueness check in MPC with secret codes and secret masks (paper 000 Alg. 3) over
//! replicated sharing in power-of-two rings, in two of the paper's variants, chosen by the ring
//! the shares live in:
//! * **NoLift**, shares over Z_2^32 (the Lemma 2 ring for 12800-bit codes and b = 2^16): both dot
//!   products in Z_2^32, no lifting.
//! * **MPCLift**, shares over Z_2^16: both dot products on 16-bit lanes, `ml` lifted in MPC by
//!   its carry count (our shortcut of Alg. 14 for mask products below 2^15, one round fused into
//!   the MSB's input, [`rep3::carry_count_for_msb`]) and `b·dot` by ConstLift (Alg. 13). With
//!   the terms reduced and the ring sized by the exact range of `a·ml − b·dot`
//!   (`ComparisonPlan`), this runs the deployed (12800-bit) and the open-iris (16384-bit)
//!   codes alike, in Z_2^36 under the default threshold (its dyadic stand-in 723517/2^21:
//!   ConstLift needs `b = 2^m`).
//!
//! For every query rotation `r`, eye `e` and enrolled entry `j`:
//! `v = a·ml − b·dot` with `(a, b)` from [`mpc_comparison_terms`](crate::mpc_comparison_terms), computed on the additive
//! shares of the two matrix products (eq. 6) and reshared once; `msb(v) = 1` ⟺ match. The match
//! bits are laid out `[rotation][entry]`, so an OR-tree with `groups = entries` folds the
//! rotations; the eyes are combined by the rule (AND or OR) and a last OR-tree over the entries
//! gives the one bit that is revealed: "already enrolled". No party learns a code, a mask, a
//! distance, or which entry matched.
//!
//! The comparison and the reveal after the products are the schemes' shared step,
//! [`compare`](crate::protocol::compare).

mod codec;
mod mirror;
mod recovery;
mod validity;

use argus_math::{Ring, Z16, Z32};
use argus_mpc::rep3::{self, Adder, Rep3, Rep3Pre};
use argus_mpc::{MpcError, Party};
use rand::rngs::OsRng;
use rand_core::{CryptoRng, RngCore};
use std::time::Duration;

use crate::protocol::compare::{
    check_ring, compare, in_chunks, resolve, reveal_short, short_of_counts, Checked, ComparisonPlan, Order, Tuning,
};
use crate::protocol::scheme::{Database, IrisScheme, ShareKind};
use crate::protocol::schemes::Registered;
use crate::protocol::{drain_row, mask_factor, mask_row, masked_bits, no_entry, query_window, rotated_rows};
use crate::{encode_masked, IrisCode, IrisError, IrisGeometry, MaskMode, MatchConfig, Template};

/// One party's share of one eye: the masked code rows (values −1, 0, 1) and the mask rows (0, 1),
/// each a row-major matrix of `rows × len`.
#[derive(Clone, Debug)]
pub struct EyeShare<R: Ring> {
    /// Masked-bitvector encoding of the code.
    pub code: Rep3<R>,
    /// The mask as 0/1 values.
    pub mask: Rep3<R>,
}

/// One party's share of a template (enrolled: one row per eye; query: one row per rotation).
#[derive(Clone, Debug)]
pub struct TemplateShare<R: Ring> {
    /// Left eye.
    pub left: EyeShare<R>,
    /// Right eye.
    pub right: EyeShare<R>,
    /// Rows per eye.
    pub rows: usize,
    /// Which row is the unrotated code (0 for an enrolment).
    pub unrotated: usize,
    /// A query's masked code bits β = code ∧ mask of the unrotated row, left and right eye
    /// (empty for an enrolment): what the validity check ([`validity`](crate::protocol::validity)) reads, with `c = m − 2β`.
    pub bits: Vec<Rep3<R>>,
}

fn eye_rows<R: Ring>(ring: &R, codes: &[IrisCode], mode: MaskMode) -> (Vec<R::El>, Vec<R::El>) {
    let mut code = Vec::new();
    let mut mask = Vec::new();
    for c in codes {
        code.extend(encode_masked(c).into_iter().map(|v| ring.from_i128(v as i128)));
        mask.extend(mask_row(c, mode).into_iter().map(|v| ring.from_u128(v as u128)));
    }
    (code, mask)
}

fn share_rows<R: Ring, G: RngCore + CryptoRng>(
    ring: &R,
    left: &IrisCode,
    right: &IrisCode,
    mode: MaskMode,
    rng: &mut G,
) -> [TemplateShare<R>; 3] {
    let (lc, lm) = eye_rows(ring, std::slice::from_ref(left), mode);
    let (rc, rm) = eye_rows(ring, std::slice::from_ref(right), mode);
    let [lc, lm, rc, rm] = [lc, lm, rc, rm].map(|v| rep3::share_from_client(ring, &v, rng));
    std::array::from_fn(|i| TemplateShare {
        left: EyeShare { code: lc[i].clone(), mask: lm[i].clone() },
        right: EyeShare { code: rc[i].clone(), mask: rm[i].clone() },
        rows: 1,
        unrotated: 0,
        bits: Vec::new(),
    })
}

/// A client shares a template for enrolment (mask mode applied first): one share per party.
pub fn share_enrollment<R: Ring, G: RngCore + CryptoRng>(
    ring: &R,
    t: &Template,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[TemplateShare<R>; 3], IrisError> {
    check_ring(ring, t.left.geometry().bits(), cfg)?;
    let (l, r) = (cfg.mask_mode.apply(&t.left), cfg.mask_mode.apply(&t.right));
    Ok(share_rows(ring, &l, &r, cfg.mask_mode, rng))
}

/// A client shares a query: the unrotated row and its masked code bits, for both eyes; the
/// rotations of the window are the shares' rotations (`rotated_rows`), as the nodes make them
/// from the one row a query carries on the wire.
pub fn share_query<R: Ring, G: RngCore + CryptoRng>(
    ring: &R,
    t: &Template,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[TemplateShare<R>; 3], IrisError> {
    let g = t.left.geometry();
    check_ring(ring, g.bits(), cfg)?;
    let (window, unrotated) = query_window(cfg, g.cols)?;
    let (l, r) = (cfg.mask_mode.apply(&t.left), cfg.mask_mode.apply(&t.right));
    let bits = [&l, &r].map(|c| {
        let v: Vec<R::El> = masked_bits(c).into_iter().map(|b| ring.from_u128(u128::from(b))).collect();
        rep3::share_from_client(ring, &v, rng)
    });
    let rows = share_rows(ring, &l, &r, cfg.mask_mode, rng);
    let mut i = 0;
    Ok(rows.map(|s| {
        let q = with_rotations(s, g, window.len(), unrotated, vec![bits[0][i].clone(), bits[1][i].clone()]);
        i += 1;
        q
    }))
}

/// A query share from its unrotated row `s` (one row per eye, as on the wire) and its masked
/// code bits: every row of the window made by rotating the shares (a public permutation).
pub(crate) fn with_rotations<R: Ring>(
    s: TemplateShare<R>,
    g: IrisGeometry,
    rows: usize,
    unrotated: usize,
    bits: Vec<Rep3<R>>,
) -> TemplateShare<R> {
    let rot = |x: &Rep3<R>| {
        let (a, b) = (rotated_rows(&x.a, g, rows, unrotated), rotated_rows(&x.b, g, rows, unrotated));
        Rep3::from_parts(x.ring().clone(), a, b).expect("components of one length")
    };
    let eye = |e: &EyeShare<R>| EyeShare { code: rot(&e.code), mask: rot(&e.mask) };
    TemplateShare { left: eye(&s.left), right: eye(&s.right), rows, unrotated, bits }
}

/// One party's shares of the enrolled population, kept in the pre-processed form of eq. 6 and
/// row after row (the layout the matrix-product kernels want).
#[derive(Clone, Debug)]
pub struct SharedDb<R: Ring> {
    ring: R,
    /// Bits of each code.
    code_len: usize,
    count: usize,
    /// [left code, left mask, right code, right mask]
    rows: [Rep3Pre<R>; 4],
}

impl<R: Ring> SharedDb<R> {
    /// An empty database for codes of `len` bits.
    pub fn new(ring: R, len: usize) -> Self {
        SharedDb { code_len: len, count: 0, rows: std::array::from_fn(|_| Rep3Pre::empty(ring.clone())), ring }
    }
}

impl<R: Ring> Database for SharedDb<R> {
    type Share = TemplateShare<R>;
    /// Appends an enrolled template's share (one row per eye).
    fn push(&mut self, t: &TemplateShare<R>) -> Result<(), MpcError> {
        if t.rows != 1 || t.left.code.len() != self.code_len {
            return Err(MpcError::InvalidParameter(format!(
                "an enrolment share has 1 row of {} values",
                self.code_len
            )));
        }
        mask_factor(self.code_len, t.left.mask.len())?;
        if self.count > 0 && t.left.mask.len() != self.rows[1].len() / self.count {
            return Err(MpcError::InvalidParameter("all entries must use the same mask mode".into()));
        }
        for (dst, src) in self.rows.iter_mut().zip([&t.left.code, &t.left.mask, &t.right.code, &t.right.mask]) {
            dst.extend(&Rep3Pre::new(src))?;
        }
        self.count += 1;
        Ok(())
    }
    /// Removes entry `index`, keeping the order of the others (rows stay in the canonical order
    /// every party shares): the entry's rows are drained out of each of the four vectors in place.
    fn remove(&mut self, index: usize) -> Result<(), MpcError> {
        if index >= self.count {
            return Err(no_entry(index, self.count));
        }
        for v in &mut self.rows {
            drain_row(v, index, self.count);
        }
        self.count -= 1;
        Ok(())
    }
    fn len(&self) -> usize {
        self.count
    }
    /// Bytes of share data held in memory (both components of the pre-processed form, codes and
    /// masks of both eyes).
    fn share_bytes(&self) -> usize {
        self.rows.iter().map(|v| (v.sum.len() + v.b.len()) * std::mem::size_of::<R::El>()).sum()
    }
}

/// Rows `r·n + q` = rotation `r` of query `q`: the batch's rotations, rotation-major, so that the
/// match bits come out as `[rotation][query][target]` and an OR-tree folds the rotations.
fn rotation_major<R: Ring>(parts: Vec<&Rep3<R>>, rot: usize, len: usize) -> Result<Rep3<R>, MpcError> {
    let mut pieces = Vec::with_capacity(rot * parts.len());
    for r in 0..rot {
        for q in &parts {
            pieces.push(q.slice(r * len, len)?);
        }
    }
    Rep3::concat(&pieces.iter().collect::<Vec<_>>())
}

/// Checks a batch of queries against the database and, with `dedup`, against each other (paper
/// 000 Alg. 3 with secret masks). Returns, revealed to all parties, whether each query is
/// **unique**: it matches no enrolled entry and (with `dedup`) no earlier query of the same batch (so two captures of one person in one
/// batch are not both enrolled; a query that matches an earlier, itself refused, query of the
/// batch is refused too — the conservative choice). Rounds do not depend on the batch or
/// database size, except that the comparison phase runs once per chunk of comparisons
/// ([`Tuning::comparisons_per_chunk`]).
pub fn check_batch<R: Ring>(
    p: &mut Party,
    queries: &[TemplateShare<R>],
    db: &SharedDb<R>,
    cfg: &MatchConfig,
    tuning: &Tuning,
    dedup: bool,
) -> Result<Checked, MpcError> {
    let nq = queries.len();
    if nq == 0 {
        return Ok(Default::default());
    }
    let (len, ring) = (db.code_len, &db.ring);
    let rot = queries[0].rows;
    let r0 = queries[0].unrotated;
    let mlen = queries[0].left.mask.len() / rot.max(1);
    let factor = mask_factor(len, mlen)?;
    if db.count > 0 && db.rows[1].len() != db.count * mlen {
        return Err(MpcError::InvalidParameter("queries and database use different mask modes".into()));
    }
    if queries.iter().any(|q| q.rows != rot || q.unrotated != r0 || q.left.code.len() != rot * len) {
        return Err(MpcError::InvalidParameter(format!("every query needs the same {rot} rotations of {len} values")));
    }
    // The unrotated row of each query (`r0`) is what later queries of the batch are compared with.
    let (s, targets) = (db.count, db.count + nq);
    // Additive shares of both dot products, laid out [eye][rotation][query][target].
    let mut dots = Vec::with_capacity(2 * rot * nq * targets);
    let mut mls = Vec::with_capacity(2 * rot * nq * targets);
    let eyes = [(|q: &TemplateShare<R>| &q.left) as fn(&TemplateShare<R>) -> &EyeShare<R>, |q| &q.right];
    for (e, eye) in eyes.iter().enumerate() {
        let code = Rep3Pre::new(&rotation_major(queries.iter().map(|q| &eye(q).code).collect(), rot, len)?);
        let mask = Rep3Pre::new(&rotation_major(queries.iter().map(|q| &eye(q).mask).collect(), rot, mlen)?);
        let unrotated = |f: fn(&EyeShare<R>) -> &Rep3<R>| -> Result<Rep3Pre<R>, MpcError> {
            let w = f(eye(&queries[0])).len() / rot;
            let rows: Vec<Rep3<R>> = queries.iter().map(|q| f(eye(q)).slice(r0 * w, w)).collect::<Result<_, _>>()?;
            Ok(Rep3Pre::new(&Rep3::concat(&rows.iter().collect::<Vec<_>>())?))
        };
        let (bcode, bmask) = (unrotated(|e| &e.code)?, unrotated(|e| &e.mask)?);
        // Against the database and against the batch.
        let (dot_db, ml_db) = if s > 0 {
            (rep3::matmul_local(&code, &db.rows[2 * e], len)?, rep3::matmul_local(&mask, &db.rows[2 * e + 1], mlen)?)
        } else {
            (Vec::new(), Vec::new())
        };
        let dot_b = rep3::matmul_local(&code, &bcode, len)?;
        let ml_b = rep3::matmul_local(&mask, &bmask, mlen)?;
        for row in 0..rot * nq {
            dots.extend_from_slice(&dot_db[row * s..(row + 1) * s]);
            dots.extend_from_slice(&dot_b[row * nq..(row + 1) * nq]);
            mls.extend_from_slice(&ml_db[row * s..(row + 1) * s]);
            mls.extend_from_slice(&ml_b[row * nq..(row + 1) * nq]);
        }
    }
    let chunk = tuning.comparisons_per_chunk(tuning.adder);
    let plan = ComparisonPlan::new(ring.modulus(), len, cfg, factor).map_err(MpcError::InvalidParameter)?;
    let hits =
        in_chunks(p, &dots, &mls, chunk, |p, d, m| compare(p, ring, d.to_vec(), m.to_vec(), plan, tuning.adder))?;
    resolve(p, &hits, rot, nq, s, cfg, dedup, Order::QueryTarget)
}

/// Per query, whether an eye's mask leaves fewer than [`MatchConfig::min_valid_bits`] valid code
/// bits (replicated masks: the unrotated row's own components summed are additive shares of
/// the count), revealing only that bit per query.
pub fn short_masks<R: Ring>(
    p: &mut Party,
    queries: &[TemplateShare<R>],
    len: usize,
    cfg: &MatchConfig,
    tuning: &Tuning,
) -> Result<Vec<bool>, MpcError> {
    let Some(first) = queries.first() else { return Ok(Vec::new()) };
    let ring = first.left.mask.ring().clone();
    let mlen = first.left.mask.len() / first.rows.max(1);
    let factor = mask_factor(len, mlen)?;
    let mut counts = Vec::with_capacity(2 * queries.len());
    for e in 0..2 {
        for q in queries {
            let row = [&q.left, &q.right][e].mask.slice(q.unrotated * mlen, mlen)?;
            counts.push(row.a.iter().fold(ring.zero(), |acc, &x| ring.add(acc, x)));
        }
    }
    let short = short_of_counts(p, &ring, counts, factor, cfg.min_valid_bits(len), tuning.adder)?;
    reveal_short(p, &short, queries.len())
}

/// Alg. 3 for one query: whether it matches any enrolled entry.
pub fn is_enrolled<R: Ring>(
    p: &mut Party,
    q: &TemplateShare<R>,
    db: &SharedDb<R>,
    cfg: &MatchConfig,
) -> Result<bool, MpcError> {
    Ok(!check_batch(p, std::slice::from_ref(q), db, cfg, &Tuning::default(), false)?.unique[0])
}

/// Secret masks over replicated Z_2^16 (MPCLift-Z).
pub struct MpcLiftZ16;
/// Secret masks over replicated Z_2^32 (NoLift-Z).
pub struct NoLiftZ32;

/// The ring of a replicated scheme.
pub trait RingOf {
    /// The ring.
    type R: argus_math::Ring;
}
impl RingOf for MpcLiftZ16 {
    type R = Z16;
}
impl RingOf for NoLiftZ32 {
    type R = Z32;
}

/// [`IrisScheme`] for a replicated scheme over `$ring`: the same code for both rings.
macro_rules! rep3_scheme {
    ($t:ty, $ring:expr, $bits:literal) => {
        impl IrisScheme for $t {
            type Share = TemplateShare<<$t as RingOf>::R>;
            type Db = SharedDb<<$t as RingOf>::R>;
            fn bits(&self) -> u32 {
                $bits
            }
            fn share_bytes_per_code_bit(&self) -> f64 {
                // Two components (pre-processed: x_i + x_{i-1} and x_{i-1}) of one element each.
                2.0 * $ring.byte_len() as f64
            }
            fn share_enrollment(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
                share_enrollment(&$ring, t, cfg, &mut OsRng)
            }
            fn share_query(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
                share_query(&$ring, t, cfg, &mut OsRng)
            }
            fn new_db(&self, len: usize) -> Self::Db {
                SharedDb::new($ring, len)
            }
            fn check(
                &self,
                p: &mut Party,
                q: &[Self::Share],
                db: &Self::Db,
                cfg: &MatchConfig,
                tuning: &Tuning,
                dedup: bool,
            ) -> Result<Checked, MpcError> {
                check_batch(p, q, db, cfg, tuning, dedup)
            }
            fn invalid(&self, p: &mut Party, q: &[Self::Share], len: usize) -> Result<Vec<bool>, MpcError> {
                validity::invalid(p, q, len)
            }
            fn mirrored(
                &self,
                _p: &mut Party,
                q: &[Self::Share],
                geometry: IrisGeometry,
            ) -> Result<Vec<Self::Share>, MpcError> {
                Ok(mirror::mirrored(q, geometry))
            }
            fn short_masks(
                &self,
                p: &mut Party,
                q: &[Self::Share],
                len: usize,
                cfg: &MatchConfig,
                tuning: &Tuning,
            ) -> Result<Vec<bool>, MpcError> {
                short_masks(p, q, len, cfg, tuning)
            }
            fn encode(&self, s: &Self::Share) -> Vec<u8> {
                codec::encode(Self::SCHEME.tag(), s)
            }
            fn decode(
                &self,
                bytes: &[u8],
                len: usize,
                cfg: &MatchConfig,
                expect: ShareKind,
            ) -> Result<Self::Share, IrisError> {
                codec::decode(&$ring, Self::SCHEME.tag(), bytes, len, cfg, expect)
            }
            fn enrollment_of(&self, q: &Self::Share) -> Result<Self::Share, IrisError> {
                codec::enrollment_of(q)
            }
            fn time_compare_chunks(
                &self,
                len: usize,
                cfg: &MatchConfig,
                adder: Adder,
                chunks: &[usize],
                budget: Duration,
            ) -> Option<Result<crate::protocol::ChunkTimes, MpcError>> {
                Some(crate::protocol::compare::time_compare_chunks(&$ring, len, cfg, adder, chunks, budget))
            }
        }
    };
}

rep3_scheme!(MpcLiftZ16, Z16::new(), 16);
rep3_scheme!(NoLiftZ32, Z32::new(), 32);
