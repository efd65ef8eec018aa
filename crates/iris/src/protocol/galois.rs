//! The uniqueness check over Shamir sharing in the Galois ring GR(2^16, 4) ("MPCLift-GR", the
//! deployed system's sharing; `argus_mpc::galois`): 2 bytes of share per code bit and per mask
//! bit like F_65519, but each secret dot product costs **one plain 16-bit multiply per bit**
//! (F_65519 needs two: its products do not fit 16-bit lanes), on the ring matrix-product kernel.
//!
//! * The database keeps every entry's unrotated code and mask shared monomially.
//! * A query carries every rotation of the window shared in the query basis, plus its unrotated
//!   row shared monomially — the row that later queries of the batch are compared with and that
//!   is enrolled (1/31 more upload than the rotations alone).
//! * Each party turns its query rows into weights (λ_i and the constant-coefficient form, once per
//!   batch), and one u16 matrix product per side gives additive shares mod 2^16 of `dot` and
//!   `ml`. From there the check is MPCLift-Z16's (reshare with a zero sharing, lift `ml` to
//!   Z_2^32, ConstLift `b·dot`, one MSB).

use argus_math::{Ring, Z16};
use argus_mpc::galois::{self as gr, Basis};
use argus_mpc::{MpcError, Party};
use rand_core::{CryptoRng, RngCore};

use crate::{encode_masked, IrisCode, IrisError, MaskMode, MatchConfig, Template};

/// One party's shares of one eye's rows: masked code values (−1, 0, 1 mod 2^16) and mask values
/// (0, 1), row after row, four values per ring element.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GrEyeShare {
    /// Masked-bitvector encoding of the code.
    pub code: Vec<u16>,
    /// The mask.
    pub mask: Vec<u16>,
}

/// One party's shares of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrTemplateShare {
    /// Left and right eye: the unrotated row, shared monomially (what the database keeps).
    pub entry: [GrEyeShare; 2],
    /// Left and right eye: every rotation of the window, shared in the query basis; empty for
    /// an enrolment.
    pub query: [GrEyeShare; 2],
    /// Rows per eye: 1 for an enrolment, the rotations for a query.
    pub rows: usize,
    /// Which query row is the unrotated code (0 for an enrolment).
    pub unrotated: usize,
}

/// Whether codes of `len` bits under `cfg` can run over GR(2^16, 4): whole ring elements per row
/// (code and mask) and the MPCLift-Z16 conditions.
pub(crate) fn check_len(len: usize, cfg: &MatchConfig) -> Result<(), IrisError> {
    super::check_ring(&Z16::new(), len, cfg)?;
    let mask_len = match cfg.mask_mode {
        MaskMode::PerBit => len,
        MaskMode::Trimmed => len / 2,
    };
    if !len.is_multiple_of(4) || !mask_len.is_multiple_of(4) {
        return Err(IrisError::Unsupported(format!(
            "GR(2^16, 4) shares need code and mask rows in whole groups of 4 values; codes of {len} bits with {:?} masks give {len} and {mask_len}",
            cfg.mask_mode
        )));
    }
    Ok(())
}

fn share_eye<G: RngCore + CryptoRng>(
    codes: &[IrisCode],
    mode: MaskMode,
    basis: Basis,
    rng: &mut G,
) -> Result<[GrEyeShare; 3], IrisError> {
    let mut code = Vec::new();
    let mut mask = Vec::new();
    for c in codes {
        code.extend(encode_masked(c).into_iter().map(|v| v as i16 as u16));
        mask.extend(super::mask_row(c, mode).into_iter().map(u16::from));
    }
    let share = |v: &[u16], rng: &mut G| {
        gr::share_from_client(v, basis, rng).map_err(|e| IrisError::Unsupported(e.to_string()))
    };
    let [c0, c1, c2] = share(&code, rng)?;
    let [m0, m1, m2] = share(&mask, rng)?;
    Ok([GrEyeShare { code: c0, mask: m0 }, GrEyeShare { code: c1, mask: m1 }, GrEyeShare { code: c2, mask: m2 }])
}

/// Three parties' shares from the shares of each eye's entry and query rows.
fn assemble(
    entry: [[GrEyeShare; 3]; 2],
    query: [[GrEyeShare; 3]; 2],
    rows: usize,
    unrotated: usize,
) -> [GrTemplateShare; 3] {
    let [el, er] = entry;
    let [ql, qr] = query;
    let mut parts = el.into_iter().zip(er).zip(ql.into_iter().zip(qr));
    std::array::from_fn(|_| {
        let ((l, r), (ql, qr)) = parts.next().expect("three shares of each");
        GrTemplateShare { entry: [l, r], query: [ql, qr], rows, unrotated }
    })
}

/// A client shares a template for enrolment.
pub fn share_enrollment<G: RngCore + CryptoRng>(
    t: &Template,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[GrTemplateShare; 3], IrisError> {
    check_len(t.left.geometry().bits(), cfg)?;
    let (l, r) = (cfg.mask_mode.apply(&t.left), cfg.mask_mode.apply(&t.right));
    let entry =
        [share_eye(&[l], cfg.mask_mode, Basis::Monomial, rng)?, share_eye(&[r], cfg.mask_mode, Basis::Monomial, rng)?];
    Ok(assemble(entry, Default::default(), 1, 0))
}

/// A client shares a query: every rotation of the window in the query basis, and the unrotated
/// row monomially, for both eyes.
pub fn share_query<G: RngCore + CryptoRng>(
    t: &Template,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[GrTemplateShare; 3], IrisError> {
    check_len(t.left.geometry().bits(), cfg)?;
    let (left, right, u) = super::query_rows(t, cfg)?;
    let mode = cfg.mask_mode;
    let entry =
        [share_eye(&left[u..=u], mode, Basis::Monomial, rng)?, share_eye(&right[u..=u], mode, Basis::Monomial, rng)?];
    let query = [share_eye(&left, mode, Basis::Query, rng)?, share_eye(&right, mode, Basis::Query, rng)?];
    Ok(assemble(entry, query, left.len(), u))
}

/// One party's shares of the enrolled population, monomial, row after row: 2 bytes per code bit
/// and per mask bit.
#[derive(Clone, Debug)]
pub struct GrDb {
    code_len: usize,
    count: usize,
    /// [left code, left mask, right code, right mask].
    rows: [Vec<u16>; 4],
}

impl GrDb {
    /// An empty database for codes of `len` bits.
    pub fn new(len: usize) -> Self {
        GrDb { code_len: len, count: 0, rows: Default::default() }
    }
    /// Enrolled entries.
    pub fn len(&self) -> usize {
        self.count
    }
    /// Whether nothing is enrolled.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Appends an enrolled template's share (its monomial unrotated rows).
    pub fn push(&mut self, t: &GrTemplateShare) -> Result<(), MpcError> {
        let [l, r] = &t.entry;
        if l.code.len() != self.code_len || r.code.len() != self.code_len {
            return Err(MpcError::InvalidParameter(format!(
                "an enrolment share has 1 row of {} values",
                self.code_len
            )));
        }
        super::mask_factor(self.code_len, l.mask.len())?;
        let width = self.rows[1].len().checked_div(self.count);
        if r.mask.len() != l.mask.len() || width.is_some_and(|w| w != l.mask.len()) {
            return Err(MpcError::InvalidParameter("all entries must use the same mask mode".into()));
        }
        for (dst, src) in self.rows.iter_mut().zip([&l.code, &l.mask, &r.code, &r.mask]) {
            dst.extend_from_slice(src);
        }
        self.count += 1;
        Ok(())
    }
    /// Removes entry `index`, keeping the order of the others.
    pub fn remove(&mut self, index: usize) -> Result<(), MpcError> {
        if index >= self.count {
            return Err(super::no_entry(index, self.count));
        }
        for v in &mut self.rows {
            let width = v.len() / self.count;
            v.drain(index * width..(index + 1) * width);
        }
        self.count -= 1;
        Ok(())
    }
    /// Bytes of share data held in memory (codes and masks of both eyes).
    pub fn share_bytes(&self) -> usize {
        self.rows.iter().map(|v| std::mem::size_of_val(v.as_slice())).sum()
    }
}

/// `a · bᵀ` mod 2^16 for row-major `a` (rows of `len`) and `b`: the ring's blocked SIMD `gemm`
/// (shapes are checked by the caller: whole rows of `len`).
fn products(a: &[u16], b: &[u16], len: usize) -> Vec<u16> {
    let mut out = vec![0u16; (a.len() / len) * (b.len() / len)];
    if !out.is_empty() {
        Z16::new().gemm(a, b, len, &mut out);
    }
    out
}

/// [`super::check_batch`] over Shamir shares in GR(2^16, 4) (MPCLift-GR).
pub fn check_batch(
    p: &mut Party,
    queries: &[GrTemplateShare],
    db: &GrDb,
    cfg: &MatchConfig,
    dedup: bool,
) -> Result<Vec<bool>, MpcError> {
    let nq = queries.len();
    if nq == 0 {
        return Ok(Vec::new());
    }
    let (len, s) = (db.code_len, db.count);
    let (rot, r0) = (queries[0].rows, queries[0].unrotated);
    let mlen = queries[0].entry[0].mask.len();
    let factor = super::mask_factor(len, mlen)?;
    let well_formed = |q: &GrTemplateShare| {
        q.rows == rot
            && q.unrotated == r0
            && q.entry.iter().all(|e| e.code.len() == len && e.mask.len() == mlen)
            && q.query.iter().all(|e| e.code.len() == rot * len && e.mask.len() == rot * mlen)
    };
    if !queries.iter().all(well_formed) {
        return Err(MpcError::InvalidParameter(format!(
            "every query needs the same {rot} rotations of {len} values and its unrotated row"
        )));
    }
    if s > 0 && db.rows[1].len() != s * mlen {
        return Err(MpcError::InvalidParameter("queries and database use different mask modes".into()));
    }
    // Additive shares of both dot products, laid out [eye][rotation][query][target].
    let mut dots = Vec::with_capacity(2 * rot * nq * (s + nq));
    let mut mls = Vec::with_capacity(2 * rot * nq * (s + nq));
    for e in 0..2 {
        // Weights of every query row, rotation-major (rows r·nq + q).
        let weights = |part: fn(&GrEyeShare) -> &Vec<u16>, width: usize| -> Result<Vec<u16>, MpcError> {
            let mut w = Vec::with_capacity(rot * nq * width);
            for r in 0..rot {
                for q in queries {
                    w.extend(gr::dot_weights(p.id(), &part(&q.query[e])[r * width..(r + 1) * width])?);
                }
            }
            Ok(w)
        };
        let (wcode, wmask) = (weights(|x| &x.code, len)?, weights(|x| &x.mask, mlen)?);
        let batch = |part: fn(&GrEyeShare) -> &Vec<u16>| {
            queries.iter().flat_map(|q| part(&q.entry[e]).iter().copied()).collect::<Vec<u16>>()
        };
        let (dot_db, ml_db) = (products(&wcode, &db.rows[2 * e], len), products(&wmask, &db.rows[2 * e + 1], mlen));
        let (dot_b, ml_b) = (products(&wcode, &batch(|x| &x.code), len), products(&wmask, &batch(|x| &x.mask), mlen));
        for row in 0..rot * nq {
            dots.extend_from_slice(&dot_db[row * s..(row + 1) * s]);
            dots.extend_from_slice(&dot_b[row * nq..(row + 1) * nq]);
            mls.extend_from_slice(&ml_db[row * s..(row + 1) * s]);
            mls.extend_from_slice(&ml_b[row * nq..(row + 1) * nq]);
        }
    }
    let ring = Z16::new();
    let hits = super::in_chunks(p, &dots, &mls, |p, d, m| super::compare(p, &ring, d, m, factor, cfg, len))?;
    super::resolve(p, &hits, rot, nq, s, cfg, dedup)
}
