//! The uniqueness check with **public masks** (paper 000 Alg. 2, section 4): the codes stay
//! secret (replicated shares over Z_2^16 of the masked-bitvector encoding), the masks are known to
//! the parties. Each party computes `ml` in the clear, so with `c = floor(a·ml / 2^d)` (public)
//! MATCH ⟺ `dot > a·ml/2^d` ⟺ `c − dot < 0` for the integer `dot`: a 16-bit MSB (Lemma 1:
//! `c − dot ∈ [−l, 2l]` with `l < 2^14`; exactly, `[⌊a·l/2^d⌋ − l, ⌊a·l/2^d⌋ + l]`, which holds
//! open-iris's 16384 bits under the default threshold), the paper's cheapest variant (29 AND gates in Alg. 10;
//! 15 with the two-operand [`rep3::msb_two_operand`] used here).

mod codec;
mod mirror;
mod recovery;
mod validity;

use argus_math::{BitVec, Ring, Z16};
use argus_mpc::rep3::{self, Rep3, Rep3Pre};
use argus_mpc::{MpcError, Party};
use rand::rngs::OsRng;
use rand_core::{CryptoRng, RngCore};

use crate::protocol::compare::{in_chunks, resolve, Checked, Order, Tuning};
use crate::protocol::scheme::{Database, IrisScheme, ShareKind};
use crate::protocol::{drain_row, mask_factor, masked_bits, no_entry, query_window, rotated_rows};
use crate::{encode_masked, IrisCode, IrisError, IrisGeometry, MatchConfig, Template};

/// One party's view of a template: secret code rows (shares) and public masks, per eye.
#[derive(Clone, Debug)]
pub struct PlainMaskShare {
    /// Shares of the masked code rows, left then right eye (each `rows × len`).
    pub codes: [Rep3<Z16>; 2],
    /// The masks in the clear, left then right eye, one per row.
    pub masks: [Vec<BitVec>; 2],
    /// Rows per eye.
    pub rows: usize,
    /// Which row is the unrotated code.
    pub unrotated: usize,
    /// A query's masked code bits of the unrotated row, left and right (empty for an enrolment;
    /// [`validity`](crate::protocol::validity)).
    pub bits: Vec<Rep3<Z16>>,
}

/// Whether codes of `len` bits fit the 16-bit comparison under `cfg`'s threshold: `c − dot`,
/// `c = ⌊a·ml/b⌋` ([`threshold_term`]), `|dot| ≤ ml ≤ len`, has its extremes at `ml = len`,
/// `dot = ±len` (and 0 at `ml = 0`), and must keep its sign in the MSB. Lemma 1's `l < 2^14` is
/// this for `a = b`.
pub(crate) fn check_len(len: usize, cfg: &MatchConfig) -> Result<(), IrisError> {
    let c = threshold_term(cfg, len as u64);
    let (lo, hi) = ((c - len as i128).min(0), (c + len as i128).max(0));
    rep3::msb_is_sign(lo, hi, 1 << 16).map_err(|_| {
        IrisError::Unsupported(format!(
            "codes of {len} bits under threshold {} compare values in [{lo}, {hi}], beyond a 16-bit \
             comparison (public masks; Lemma 1 asks codes below 2^14 bits); use a secret-mask scheme",
            cfg.threshold
        ))
    })
}

/// The public term `c = ⌊a·ml/b⌋` of the exact terms `(a, b)` of the threshold: since `dot` is
/// an integer, MATCH ⟺ `a·ml − b·dot < 0` ⟺ `dot > a·ml/b` ⟺ `c − dot < 0`, for any
/// denominator `b`.
fn threshold_term(cfg: &MatchConfig, ml: u64) -> i128 {
    let (a, b) = crate::mpc_comparison_terms(cfg.threshold);
    (a * ml as i128).div_euclid(b)
}

fn share<G: RngCore + CryptoRng>(
    left: &IrisCode,
    right: &IrisCode,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[PlainMaskShare; 3], IrisError> {
    check_len(left.geometry().bits(), cfg)?;
    let ring = Z16::new();
    let row = |c: &IrisCode| -> Vec<u16> { encode_masked(c).into_iter().map(|v| ring.from_i128(v as i128)).collect() };
    let (l, r) = (rep3::share_from_client(&ring, &row(left), rng), rep3::share_from_client(&ring, &row(right), rng));
    Ok(std::array::from_fn(|i| PlainMaskShare {
        codes: [l[i].clone(), r[i].clone()],
        masks: [vec![left.mask().clone()], vec![right.mask().clone()]],
        rows: 1,
        unrotated: 0,
        bits: Vec::new(),
    }))
}

/// A client shares a template for enrolment (codes secret, masks public).
pub fn share_enrollment<G: RngCore + CryptoRng>(
    t: &Template,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[PlainMaskShare; 3], IrisError> {
    share(&cfg.mask_mode.apply(&t.left), &cfg.mask_mode.apply(&t.right), cfg, rng)
}

/// A client shares a query: the unrotated row and its masked code bits, for both eyes; the
/// rotations of the window are the shares' (and masks') rotations, as the nodes make them
/// (`with_rotations`).
pub fn share_query<G: RngCore + CryptoRng>(
    t: &Template,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[PlainMaskShare; 3], IrisError> {
    let g = t.left.geometry();
    let (window, unrotated) = query_window(cfg, g.cols)?;
    let (l, r) = (cfg.mask_mode.apply(&t.left), cfg.mask_mode.apply(&t.right));
    let ring = Z16::new();
    let bits = |c: &IrisCode, rng: &mut G| {
        let v: Vec<u16> = masked_bits(c).into_iter().map(u16::from).collect();
        rep3::share_from_client(&ring, &v, rng)
    };
    let (bl, br) = (bits(&l, rng), bits(&r, rng));
    let [s0, s1, s2] = share(&l, &r, cfg, rng)?;
    let rotate = |s, i: usize| with_rotations(s, g, window.len(), unrotated, vec![bl[i].clone(), br[i].clone()]);
    Ok([rotate(s0, 0)?, rotate(s1, 1)?, rotate(s2, 2)?])
}

/// A query share from its unrotated row `s` (as on the wire) and its masked code bits: every row
/// of the window made by rotating the code shares and the public masks
/// (`rotated_rows`).
pub(crate) fn with_rotations(
    s: PlainMaskShare,
    g: IrisGeometry,
    rows: usize,
    unrotated: usize,
    bits: Vec<Rep3<Z16>>,
) -> Result<PlainMaskShare, IrisError> {
    let rot = |x: &Rep3<Z16>| {
        let (a, b) = (rotated_rows(&x.a, g, rows, unrotated), rotated_rows(&x.b, g, rows, unrotated));
        Rep3::from_parts(Z16::new(), a, b).expect("components of one length")
    };
    let masks = |m: &[BitVec]| -> Result<Vec<BitVec>, IrisError> {
        let row = m.first().ok_or_else(|| IrisError::BadShare("a query without its mask".into()))?;
        let bits = rotated_rows(&row.to_bools(), g, rows, unrotated);
        let len = row.len();
        Ok(bits.chunks(len.max(1)).map(BitVec::from_bools).collect())
    };
    Ok(PlainMaskShare {
        codes: [rot(&s.codes[0]), rot(&s.codes[1])],
        masks: [masks(&s.masks[0])?, masks(&s.masks[1])?],
        rows,
        unrotated,
        bits,
    })
}

/// One party's database: pre-processed code shares and the public masks.
#[derive(Clone, Debug)]
pub struct PlainMaskDb {
    len: usize,
    codes: [Rep3Pre<Z16>; 2],
    masks: [Vec<BitVec>; 2],
}

impl PlainMaskDb {
    /// An empty database for codes of `len` bits.
    pub fn new(len: usize) -> Self {
        PlainMaskDb { len, codes: std::array::from_fn(|_| Rep3Pre::empty(Z16::new())), masks: [Vec::new(), Vec::new()] }
    }
}

impl Database for PlainMaskDb {
    type Share = PlainMaskShare;
    /// Appends an enrolled template.
    fn push(&mut self, t: &PlainMaskShare) -> Result<(), MpcError> {
        if t.rows != 1 || t.codes[0].len() != self.len || t.masks[0][0].len() != self.len {
            return Err(MpcError::InvalidParameter(format!("an enrolment share has 1 row of {} values", self.len)));
        }
        for e in 0..2 {
            self.codes[e].extend(&Rep3Pre::new(&t.codes[e]))?;
            self.masks[e].push(t.masks[e][0].clone());
        }
        Ok(())
    }
    fn len(&self) -> usize {
        self.masks[0].len()
    }
    /// Removes entry `index`, keeping the order of the others: its code rows are drained out of
    /// the share vectors in place and its masks removed.
    fn remove(&mut self, index: usize) -> Result<(), MpcError> {
        let count = self.len();
        if index >= count {
            return Err(no_entry(index, count));
        }
        for e in 0..2 {
            drain_row(&mut self.codes[e], index, count);
            self.masks[e].remove(index);
        }
        Ok(())
    }
    /// Bytes of share data held in memory: both components of the pre-processed code shares and
    /// the packed public masks, both eyes.
    fn share_bytes(&self) -> usize {
        let codes: usize = self.codes.iter().map(|v| (v.sum.len() + v.b.len()) * std::mem::size_of::<u16>()).sum();
        let masks: usize = self.masks.iter().flatten().map(|m| std::mem::size_of_val(m.words())).sum();
        codes + masks
    }
}

/// [`IrisScheme::short_masks`] with public masks: each node counts its copy, and the nodes exchange
/// their findings and take their OR (one round), so that all three decide alike even if a client
/// sent them different masks.
pub fn short_masks(
    p: &mut Party,
    queries: &[PlainMaskShare],
    len: usize,
    cfg: &MatchConfig,
) -> Result<Vec<bool>, MpcError> {
    let min = cfg.min_valid_bits(len);
    let mine = queries
        .iter()
        .map(|q| {
            let mut short = false;
            for masks in &q.masks {
                let row = &masks[q.unrotated];
                short |= (mask_factor(len, row.len())? as u64) * (row.count_ones() as u64) < min;
            }
            Ok(short)
        })
        .collect::<Result<Vec<bool>, MpcError>>()?;
    let others: Vec<usize> = (0..p.n()).filter(|&q| q != p.id()).collect();
    for &q in &others {
        p.net().send(q, BitVec::from_bools(&mine).to_bytes())?;
    }
    let mut all = mine.clone();
    for &q in &others {
        let got = p.net().recv(q)?;
        let theirs = BitVec::from_bytes(&got, mine.len()).map_err(|_| MpcError::Malformed {
            peer: q,
            reason: format!("{} bytes of {} findings", got.len(), mine.len()),
        })?;
        all.iter_mut().zip(theirs.to_bools()).for_each(|(a, b)| *a |= b);
    }
    Ok(all)
}

/// [`IrisScheme::check`] with public masks (Alg. 2).
pub fn check_batch(
    p: &mut Party,
    queries: &[PlainMaskShare],
    db: &PlainMaskDb,
    cfg: &MatchConfig,
    tuning: &Tuning,
    dedup: bool,
) -> Result<Checked, MpcError> {
    let nq = queries.len();
    if nq == 0 {
        return Ok(Default::default());
    }
    let (len, s, ring) = (db.len, db.len(), Z16::new());
    let (rot, r0) = (queries[0].rows, queries[0].unrotated);
    if queries.iter().any(|q| q.rows != rot || q.unrotated != r0 || q.codes[0].len() != rot * len) {
        return Err(MpcError::InvalidParameter(format!("every query needs the same {rot} rotations of {len} values")));
    }
    // c = floor(a·ml / b), public; party 0 adds it to its additive share of −dot.
    let term = |qm: &BitVec, em: &BitVec| -> u16 {
        ring.from_i128(threshold_term(cfg, qm.and(em).expect("equal lengths").count_ones() as u64))
    };
    // Party 0's threshold term per comparison (zeros elsewhere) and the additive shares of dot.
    let mut cs = Vec::with_capacity(2 * rot * nq * (s + nq));
    let mut dots = Vec::with_capacity(2 * rot * nq * (s + nq));
    for e in 0..2 {
        let rows: Vec<Rep3<Z16>> = (0..rot)
            .flat_map(|r| queries.iter().map(move |q| q.codes[e].slice(r * len, len)))
            .collect::<Result<_, _>>()?;
        let code = Rep3Pre::new(&Rep3::concat(&rows.iter().collect::<Vec<_>>())?);
        let unrot: Vec<Rep3<Z16>> =
            queries.iter().map(|q| q.codes[e].slice(r0 * len, len)).collect::<Result<_, _>>()?;
        let bcode = Rep3Pre::new(&Rep3::concat(&unrot.iter().collect::<Vec<_>>())?);
        let dot_db = if s > 0 { rep3::matmul_local(&code, &db.codes[e], len)? } else { Vec::new() };
        let dot_b = rep3::matmul_local(&code, &bcode, len)?;
        for r in 0..rot {
            for (qi, q) in queries.iter().enumerate() {
                let (row, qm) = (r * nq + qi, &q.masks[e][r]);
                let targets = db.masks[e]
                    .iter()
                    .zip(&dot_db[row * s..(row + 1) * s])
                    .chain(queries.iter().map(|o| &o.masks[e][r0]).zip(&dot_b[row * nq..(row + 1) * nq]));
                for (em, &dot) in targets {
                    cs.push(if p.id() == 0 { term(qm, em) } else { 0 });
                    dots.push(dot);
                }
            }
        }
    }
    let hits = in_chunks(p, &dots, &cs, tuning.comparisons_per_chunk(tuning.adder), |p, dots, cs| {
        let v = cs.iter().zip(dots).map(|(&c, &dot)| ring.sub(c, dot)).collect();
        let v = rep3::reshare_for(p, &ring, v, rep3::ReshareFor::Msb)?;
        rep3::msb_two_operand(p, &v, tuning.adder)
    })?;
    resolve(p, &hits, rot, nq, s, cfg, dedup, Order::QueryTarget)
}

/// Public masks, secret codes over replicated Z_2^16 (Alg. 2).
pub struct PlainMaskZ16;

impl IrisScheme for PlainMaskZ16 {
    type Share = PlainMaskShare;
    type Db = PlainMaskDb;
    fn bits(&self) -> u32 {
        16
    }
    /// Codes only, like the other schemes: two 2-byte components; the public masks add 1 bit per
    /// code bit (packed).
    fn share_bytes_per_code_bit(&self) -> f64 {
        4.0
    }
    fn share_enrollment(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
        share_enrollment(t, cfg, &mut OsRng)
    }
    fn share_query(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
        share_query(t, cfg, &mut OsRng)
    }
    fn new_db(&self, len: usize) -> Self::Db {
        PlainMaskDb::new(len)
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
        mirror::mirrored(q, geometry)
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
    /// As the trait says; the public masks are stored expanded (one bit per code bit) in both
    /// mask modes, so `cfg.mask_mode` does not change the expected lengths.
    fn decode(&self, bytes: &[u8], len: usize, cfg: &MatchConfig, expect: ShareKind) -> Result<Self::Share, IrisError> {
        codec::decode(bytes, len, cfg, expect)
    }
    fn enrollment_of(&self, q: &Self::Share) -> Result<Self::Share, IrisError> {
        codec::enrollment_of(q)
    }
}
