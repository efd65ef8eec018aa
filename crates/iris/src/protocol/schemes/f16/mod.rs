//! The uniqueness check over Shamir sharing in F_65519 (paper 000 sections 4.3.2 and 5.1,
//! "MPCLift-F"): one 16-bit share per code bit and per mask bit (the storage of the deployed
//! system), one plain matrix product per secret one (deferred reduction, degree 2), conversion to
//! replicated shares mod p (one element per product), `ml` lifted to Z_{p·2^16} (`u64` elements) in MPC (Alg. 15),
//! `b·dot` by ConstLift (b = 2^16, Alg. 13), and the MSB of `a·ml − b·dot` mod p·2^16.

mod codec;
mod mirror;
mod recovery;
mod validity;

use argus_math::{Ring, Zt64, F65519};
use argus_mpc::rep3::{self, Adder, Rep3};
use argus_mpc::shamir::{self, Degree, Shamir};
use argus_mpc::{MpcError, Party};
use rand::rngs::OsRng;
use rand_core::{CryptoRng, RngCore};

use crate::protocol::compare::{in_chunks, reduced_terms, resolve, reveal_short, Checked, Order, Tuning};
use crate::protocol::scheme::{Database, IrisScheme, ShareKind};
use crate::protocol::{factor_of, mask_factor, mask_row, masked_bits, no_entry, query_window, rotated_rows};
use crate::{encode_masked, IrisCode, IrisError, IrisGeometry, MaskMode, MatchConfig, Template};

/// One party's Shamir shares of one eye: masked code rows (−1, 0, 1 mod p) and mask rows (0, 1).
#[derive(Clone, Debug)]
pub struct FieldEyeShare {
    /// Masked-bitvector encoding of the code.
    pub code: Shamir<F65519>,
    /// The mask.
    pub mask: Shamir<F65519>,
}

/// One party's Shamir shares of a template (one row per eye when enrolled, one per rotation when
/// queried).
#[derive(Clone, Debug)]
pub struct FieldTemplateShare {
    /// Left eye.
    pub left: FieldEyeShare,
    /// Right eye.
    pub right: FieldEyeShare,
    /// Rows per eye.
    pub rows: usize,
    /// Which row is the unrotated code.
    pub unrotated: usize,
    /// A query's masked code bits of the unrotated row, left and right (empty for an enrolment;
    /// [`validity`](crate::protocol::validity)).
    pub bits: Vec<Shamir<F65519>>,
}

/// The lifted ring Z_{p·2^m}, `m` and `a` (times the mask factor) of the terms `(a, 2^m)` of
/// the threshold's dyadic stand-in ([`crate::Threshold::dyadic_for`], exact for every
/// `ml ≤ len`; reduced by [`reduced_terms`]), and the check that the ring's MSB is the
/// sign of every `a·ml − 2^m·dot` of codes of `len` bits (their exact range,
/// [`crate::comparison_range`]). Under the default threshold m = 20.
pub(crate) fn lifted_ring(len: usize, cfg: &MatchConfig) -> Result<(Zt64, u32, i128), IrisError> {
    let th = cfg.threshold;
    let dyadic = th
        .dyadic_for(len as u64)
        .ok_or_else(|| IrisError::Unsupported(format!("threshold {th} has no dyadic stand-in for {len} bits")))?;
    let factor = factor_of(cfg.mask_mode);
    let (a, b) = crate::mpc_comparison_terms(dyadic);
    let (a, b, _) = reduced_terms(a * factor, b);
    let m = b.trailing_zeros();
    let t = (m <= 48)
        .then(|| Zt64::new((F65519::P as u128) << m).ok())
        .flatten()
        .ok_or_else(|| IrisError::Unsupported(format!("threshold {th} needs Z_(p·2^{m}), beyond 64 bits")))?;
    let (lo, hi) = crate::comparison_range(len, factor, a, b);
    rep3::msb_is_sign(lo, hi, t.t()).map_err(|e| IrisError::Unsupported(format!("{e} (codes of {len} bits)")))?;
    if 2 * len >= F65519::P as usize {
        return Err(IrisError::Unsupported(format!("codes of {len} bits do not fit F_65519 dot products")));
    }
    Ok((t, m, a))
}

fn share_rows<G: RngCore + CryptoRng>(
    left: &IrisCode,
    right: &IrisCode,
    mode: MaskMode,
    rng: &mut G,
) -> Result<[FieldTemplateShare; 3], IrisError> {
    let f = F65519;
    let rows = |c: &IrisCode| {
        let code: Vec<u16> = encode_masked(c).into_iter().map(|v| f.from_i128(v as i128)).collect();
        let mask: Vec<u16> = mask_row(c, mode).into_iter().map(u16::from).collect();
        (code, mask)
    };
    let (lc, lm) = rows(left);
    let (rc, rm) = rows(right);
    let (lc, lm, rc, rm) = (share(lc, rng)?, share(lm, rng)?, share(rc, rng)?, share(rm, rng)?);
    Ok(std::array::from_fn(|i| FieldTemplateShare {
        left: FieldEyeShare { code: lc[i].clone(), mask: lm[i].clone() },
        right: FieldEyeShare { code: rc[i].clone(), mask: rm[i].clone() },
        rows: 1,
        unrotated: 0,
        bits: Vec::new(),
    }))
}

fn share<G: RngCore + CryptoRng>(v: Vec<u16>, rng: &mut G) -> Result<[Shamir<F65519>; 3], IrisError> {
    shamir::share_from_client(&F65519, &v, rng).map_err(|e| IrisError::Unsupported(e.to_string()))
}

/// A client shares a template for enrolment (mask mode applied first).
pub fn share_enrollment<G: RngCore + CryptoRng>(
    t: &Template,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[FieldTemplateShare; 3], IrisError> {
    lifted_ring(t.left.geometry().bits(), cfg)?;
    share_rows(&cfg.mask_mode.apply(&t.left), &cfg.mask_mode.apply(&t.right), cfg.mask_mode, rng)
}

/// A client shares a query: the unrotated row and its masked code bits, for both eyes; the
/// rotations of the window are the shares' rotations, as the nodes make them
/// (`with_rotations`).
pub fn share_query<G: RngCore + CryptoRng>(
    t: &Template,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[FieldTemplateShare; 3], IrisError> {
    let g = t.left.geometry();
    lifted_ring(g.bits(), cfg)?;
    let (window, unrotated) = query_window(cfg, g.cols)?;
    let (l, r) = (cfg.mask_mode.apply(&t.left), cfg.mask_mode.apply(&t.right));
    let bits = |c: &IrisCode, rng: &mut G| share(masked_bits(c).into_iter().map(u16::from).collect(), rng);
    let (bl, br) = (bits(&l, rng)?, bits(&r, rng)?);
    let rows = share_rows(&l, &r, cfg.mask_mode, rng)?;
    let mut i = 0;
    Ok(rows.map(|s| {
        let q = with_rotations(s, g, window.len(), unrotated, vec![bl[i].clone(), br[i].clone()]);
        i += 1;
        q
    }))
}

/// A query share from its unrotated row `s` (as on the wire) and its masked code bits: every row
/// of the window made by rotating the shares (`rotated_rows`).
pub(crate) fn with_rotations(
    s: FieldTemplateShare,
    g: IrisGeometry,
    rows: usize,
    unrotated: usize,
    bits: Vec<Shamir<F65519>>,
) -> FieldTemplateShare {
    let rot = |x: &Shamir<F65519>| {
        Shamir::from_parts(F65519, Degree::One, rotated_rows(x.shares(), g, rows, unrotated)).expect("degree-1 shares")
    };
    let eye = |e: &FieldEyeShare| FieldEyeShare { code: rot(&e.code), mask: rot(&e.mask) };
    FieldTemplateShare { left: eye(&s.left), right: eye(&s.right), rows, unrotated, bits }
}

/// One party's Shamir shares of the enrolled population: 2 bytes per code bit and per mask bit.
#[derive(Clone, Debug)]
pub struct FieldDb {
    /// Bits of each code.
    code_len: usize,
    count: usize,
    /// [left code, left mask, right code, right mask], row after row.
    rows: [Shamir<F65519>; 4],
}

impl FieldDb {
    /// An empty database for codes of `len` bits.
    pub fn new(len: usize) -> Self {
        FieldDb { code_len: len, count: 0, rows: std::array::from_fn(|_| Shamir::zeros(F65519, Degree::One, 0)) }
    }
    /// Bytes of shares held per enrolled identity (both eyes, codes and masks).
    pub fn bytes_per_identity(&self) -> usize {
        let mask_len = self.rows[1].len().checked_div(self.count).unwrap_or(self.code_len);
        2 * 2 * (self.code_len + mask_len)
    }
}

impl Database for FieldDb {
    type Share = FieldTemplateShare;
    /// Appends an enrolled template's share.
    fn push(&mut self, t: &FieldTemplateShare) -> Result<(), MpcError> {
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
            dst.extend(src)?;
        }
        self.count += 1;
        Ok(())
    }
    /// Removes entry `index`, keeping the order of the others: its rows are drained out of each
    /// of the four share vectors in place.
    fn remove(&mut self, index: usize) -> Result<(), MpcError> {
        if index >= self.count {
            return Err(no_entry(index, self.count));
        }
        for v in &mut self.rows {
            let width = v.len() / self.count;
            let mut shares = std::mem::replace(v, Shamir::zeros(F65519, Degree::One, 0)).into_shares();
            shares.drain(index * width..(index + 1) * width);
            *v = Shamir::from_parts(F65519, Degree::One, shares)?;
        }
        self.count -= 1;
        Ok(())
    }
    fn len(&self) -> usize {
        self.count
    }
    /// Bytes of share data held in memory (codes and masks of both eyes).
    fn share_bytes(&self) -> usize {
        self.rows.iter().map(|v| v.len() * std::mem::size_of::<u16>()).sum()
    }
}

fn rotation_major(parts: Vec<&Shamir<F65519>>, rot: usize, len: usize) -> Result<Shamir<F65519>, MpcError> {
    let mut pieces = Vec::with_capacity(rot * parts.len());
    for r in 0..rot {
        for q in &parts {
            pieces.push(q.slice(r * len, len)?);
        }
    }
    Shamir::concat(&pieces.iter().collect::<Vec<_>>())
}

/// [`IrisScheme::short_masks`] over Shamir shares in F_65519: a count's degree-1 share is the sum of
/// the unrotated row's, `factor·count − min` goes to replicated shares and its MSB mod p says
/// whether it is negative (`|v| ≤ len < p/2`).
pub fn short_masks(
    p: &mut Party,
    queries: &[FieldTemplateShare],
    len: usize,
    cfg: &MatchConfig,
) -> Result<Vec<bool>, MpcError> {
    let Some(first) = queries.first() else { return Ok(Vec::new()) };
    let f = F65519;
    let mlen = first.left.mask.len() / first.rows.max(1);
    let factor = f.from_i128(mask_factor(len, mlen)?);
    let min = f.from_u128(u128::from(cfg.min_valid_bits(len)));
    let mut v = Vec::with_capacity(2 * queries.len());
    for e in 0..2 {
        for q in queries {
            let row = [&q.left, &q.right][e].mask.slice(q.unrotated * mlen, mlen)?;
            let count = row.shares().iter().fold(f.zero(), |acc, &x| f.add(acc, x));
            v.push(f.sub(f.mul(factor, count), min));
        }
    }
    let v = shamir::to_rep3(p, &Shamir::from_parts(f, Degree::One, v)?)?;
    let short = shamir::msb_p(p, &v)?;
    reveal_short(p, &short, queries.len())
}

/// [`IrisScheme::check`] over Shamir shares in F_65519 (MPCLift-F).
pub fn check_batch(
    p: &mut Party,
    queries: &[FieldTemplateShare],
    db: &FieldDb,
    cfg: &MatchConfig,
    tuning: &Tuning,
    dedup: bool,
) -> Result<Checked, MpcError> {
    let nq = queries.len();
    if nq == 0 {
        return Ok(Default::default());
    }
    let (len, s, f) = (db.code_len, db.count, F65519);
    let (rot, r0) = (queries[0].rows, queries[0].unrotated);
    if queries.iter().any(|q| q.rows != rot || q.unrotated != r0 || q.left.code.len() != rot * len) {
        return Err(MpcError::InvalidParameter(format!("every query needs the same {rot} rotations of {len} values")));
    }
    let (t, m, a) = lifted_ring(len, cfg).map_err(|e| MpcError::InvalidParameter(e.to_string()))?;
    let mlen = queries[0].left.mask.len() / rot.max(1);
    if mask_factor(len, mlen)? != factor_of(cfg.mask_mode) {
        return Err(MpcError::InvalidParameter(format!(
            "queries' masks are not in the configured {:?} mode",
            cfg.mask_mode
        )));
    }
    if s > 0 && db.rows[1].len() != s * mlen {
        return Err(MpcError::InvalidParameter("queries and database use different mask modes".into()));
    }
    // Degree-2 shares of both dot products, laid out [eye][rotation][query][target].
    let mut dots = Vec::with_capacity(2 * rot * nq * (s + nq));
    let mut mls = Vec::with_capacity(2 * rot * nq * (s + nq));
    let eyes = [(|q: &FieldTemplateShare| &q.left) as fn(&FieldTemplateShare) -> &FieldEyeShare, |q| &q.right];
    for (e, eye) in eyes.iter().enumerate() {
        let code = rotation_major(queries.iter().map(|q| &eye(q).code).collect(), rot, len)?;
        let mask = rotation_major(queries.iter().map(|q| &eye(q).mask).collect(), rot, mlen)?;
        let unrotated = |x: fn(&FieldEyeShare) -> &Shamir<F65519>| -> Result<Shamir<F65519>, MpcError> {
            let w = x(eye(&queries[0])).len() / rot;
            let rows: Vec<_> = queries.iter().map(|q| x(eye(q)).slice(r0 * w, w)).collect::<Result<_, _>>()?;
            Shamir::concat(&rows.iter().collect::<Vec<_>>())
        };
        let (bcode, bmask) = (unrotated(|e| &e.code)?, unrotated(|e| &e.mask)?);
        let (dot_db, ml_db) = if s > 0 {
            (shamir::matmul(&code, &db.rows[2 * e], len)?, shamir::matmul(&mask, &db.rows[2 * e + 1], mlen)?)
        } else {
            (Shamir::zeros(f, Degree::Two, 0), Shamir::zeros(f, Degree::Two, 0))
        };
        let (dot_b, ml_b) = (shamir::matmul(&code, &bcode, len)?, shamir::matmul(&mask, &bmask, mlen)?);
        for row in 0..rot * nq {
            dots.extend_from_slice(&dot_db.shares()[row * s..(row + 1) * s]);
            dots.extend_from_slice(&dot_b.shares()[row * nq..(row + 1) * nq]);
            mls.extend_from_slice(&ml_db.shares()[row * s..(row + 1) * s]);
            mls.extend_from_slice(&ml_b.shares()[row * nq..(row + 1) * nq]);
        }
    }

    // The MSBs mod p always ripple: chunks of the ripple adder's size unless configured.
    let chunk = tuning.comparisons_per_chunk(Adder::Ripple);
    let hits = in_chunks(p, &dots, &mls, chunk, |p, dots, mls| {
        // Degree 2 -> additive -> replicated mod p, both products in one round.
        let n = dots.len();
        let both = shamir::to_rep3(p, &Shamir::from_parts(f, Degree::Two, [dots, mls].concat())?)?;
        let (dot, ml): (Rep3<F65519>, Rep3<F65519>) = (both.slice(0, n)?, both.slice(n, n)?);
        // dot in [-l, l] with l < p/2: ConstLift by b = 2^m gives b·dot mod p·2^m; ml is lifted in MPC.
        let bdot = rep3::const_lift(&dot, 1u128 << m, &t)?;
        let ml_t = shamir::lift_p(p, &ml, m, &t)?;
        let v = ml_t.mul_scalar(t.from_i128(a)).sub(&bdot)?;
        shamir::msb_p(p, &v)
    })?;
    resolve(p, &hits, rot, nq, s, cfg, dedup, Order::QueryTarget)
}

/// Secret masks over Shamir F_65519 (MPCLift-F): 2 bytes of share per code bit.
pub struct MpcLiftF16;

impl IrisScheme for MpcLiftF16 {
    type Share = FieldTemplateShare;
    type Db = FieldDb;
    fn bits(&self) -> u32 {
        16
    }
    fn share_bytes_per_code_bit(&self) -> f64 {
        2.0
    }
    fn share_enrollment(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
        share_enrollment(t, cfg, &mut OsRng)
    }
    fn share_query(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
        share_query(t, cfg, &mut OsRng)
    }
    fn new_db(&self, len: usize) -> Self::Db {
        FieldDb::new(len)
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
        _tuning: &Tuning,
    ) -> Result<Vec<bool>, MpcError> {
        short_masks(p, q, len, cfg)
    }
    fn encode(&self, s: &Self::Share) -> Vec<u8> {
        codec::encode(s)
    }
    fn decode(&self, bytes: &[u8], len: usize, cfg: &MatchConfig, expect: ShareKind) -> Result<Self::Share, IrisError> {
        codec::decode(bytes, len, cfg, expect)
    }
    fn enrollment_of(&self, q: &Self::Share) -> Result<Self::Share, IrisError> {
        codec::enrollment_of(q)
    }
}
