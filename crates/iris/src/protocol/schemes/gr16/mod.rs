//! The uniqueness check over Shamir sharing in the Galois ring GR(2^16, 4) ("MPCLift-GR", the
//! deployed system's sharing; `argus_mpc::galois`): 2 bytes of share per code bit and per mask
//! bit like F_65519, but each secret dot product costs **one plain 16-bit multiply per bit**
//! (F_65519 needs two: its products do not fit 16-bit lanes), on the ring matrix-product kernel.
//!
//! * Shares are laid out **column-major** (`[col][row][cell]`, [`column_major`]), so rotating a
//!   code by `r` angular columns is a cyclic shift of the whole row by `r · len / cols` values,
//!   and every column holds whole ring elements (checked).
//! * The database keeps every entry's unrotated code and mask shared monomially.
//! * A query carries two rows per eye: its unrotated code and mask shared in the query basis, and
//!   shared monomially — the row that later queries of the batch are compared with and that is
//!   enrolled. The rotations are made by the nodes: rotation is a public permutation of whole
//!   ring elements, so it commutes with the sharing and with the weights below.
//! * Each party turns a query row into weights (λ_i and the constant-coefficient form, once per
//!   batch), extends them cyclically by the window, and the rotations are overlapping windows of
//!   that buffer: against the database and against the batch's own rows by Karatsuba's middle
//!   product ([`argus_math::kernels::correlate_u16`], (3/4)^levels of the multiplies: 0.24 at
//!   200 columns with AVX-512 VNNI), which gives additive shares mod 2^16 of `dot` and `ml`.
//!   From there the check is
//!   MPCLift-Z16's (reshare with a zero sharing, lift `ml` to Z_2^32, ConstLift `b·dot`, one MSB).

mod codec;
mod mirror;
mod recovery;
mod validity;

use argus_math::kernels::{Correlation, Correlator};
use argus_math::Z16;
use argus_mpc::galois::{self as gr, Basis};
use argus_mpc::rep3::{Adder, Rep3Bits};
use argus_mpc::{MpcError, Party};
use rand::rngs::OsRng;
use rand_core::{CryptoRng, RngCore};
use std::time::Duration;

use crate::protocol::compare::{
    self, check_ring, resolve, reveal_short, short_of_counts, Checked, ComparisonPlan, Order, Tuning,
};
use crate::protocol::scheme::{Database, IrisScheme, ShareKind};
use crate::protocol::{mask_factor, mask_row, masked_bits, no_entry, query_window};
use crate::{encode_masked, IrisCode, IrisError, IrisGeometry, MaskMode, MatchConfig, Template};

/// One party's shares of one eye's rows: masked code values (−1, 0, 1 mod 2^16) and mask values
/// (0, 1), column-major ([`column_major`]), row after row, four values per ring element.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct GrEyeShare {
    /// Masked-bitvector encoding of the code.
    pub code: Vec<u16>,
    /// The mask.
    pub mask: Vec<u16>,
}

impl std::fmt::Debug for GrEyeShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print share contents.
        write!(f, "GrEyeShare[code {}, mask {}]", self.code.len(), self.mask.len())
    }
}

/// One party's shares of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrTemplateShare {
    /// Left and right eye: the unrotated row, shared monomially (what the database keeps).
    pub entry: [GrEyeShare; 2],
    /// Left and right eye: the unrotated row shared in the query basis; empty for an enrolment.
    pub query: [GrEyeShare; 2],
    /// Rotations per eye the nodes check: 1 for an enrolment, the window for a query.
    pub rows: usize,
    /// Which rotation is rotation 0: rotation index `k` shifts by `k − unrotated` columns.
    pub unrotated: usize,
    /// Angular columns of the codes, the unit of a rotation (0 for an enrolment).
    pub cols: usize,
    /// Left and right eye: a query's masked code bits of the unrotated row, shared monomially
    /// (empty for an enrolment; [`validity`](crate::protocol::validity)).
    pub bits: [Vec<u16>; 2],
}

/// Whether codes of `len` bits under `cfg` can run over GR(2^16, 4): whole ring elements per row
/// (code and mask) and the MPCLift-Z16 conditions; with `cols` (queries), also whole ring
/// elements per angular column, so that a rotation moves whole elements.
pub(crate) fn check_len(len: usize, cols: Option<usize>, cfg: &MatchConfig) -> Result<(), IrisError> {
    check_ring(&Z16::new(), len, cfg)?;
    let mask_len = match cfg.mask_mode {
        MaskMode::PerBit => len,
        MaskMode::Trimmed => len / 2,
    };
    let (unit, what) = match cols {
        Some(c) if c > 0 && len.is_multiple_of(c) && mask_len.is_multiple_of(c) => (4 * c, "per angular column"),
        Some(c) => {
            return Err(IrisError::Unsupported(format!(
                "codes of {len} bits ({mask_len} mask values) do not split into {c} angular columns"
            )))
        }
        None => (4, "per row"),
    };
    if !len.is_multiple_of(unit) || !mask_len.is_multiple_of(unit) {
        return Err(IrisError::Unsupported(format!(
            "GR(2^16, 4) shares need code and mask values in whole groups of 4 {what}; codes of {len} bits with {:?} masks give {len} and {mask_len}",
            cfg.mask_mode
        )));
    }
    Ok(())
}

/// One row of values in the geometry's order (`[row][col][cell]`, `cell = v.len() / (rows·cols)`
/// values) rearranged column-major (`[col][row][cell]`), the order of GR shares: a rotation by `r`
/// columns is then a cyclic shift of the whole row by `r · v.len() / cols` values. The dot
/// product of two rows is the same in either order.
pub fn column_major(v: &[u16], rows: usize, cols: usize) -> Vec<u16> {
    let cell = v.len() / (rows * cols).max(1);
    let mut out = Vec::with_capacity(v.len());
    for c in 0..cols {
        for r in 0..rows {
            out.extend_from_slice(&v[(r * cols + c) * cell..][..cell]);
        }
    }
    out
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
        let (rows, cols) = (c.geometry().rows, c.geometry().cols);
        let values: Vec<u16> = encode_masked(c).into_iter().map(|v| v as i16 as u16).collect();
        code.extend(column_major(&values, rows, cols));
        let values: Vec<u16> = mask_row(c, mode).into_iter().map(u16::from).collect();
        mask.extend(column_major(&values, rows, cols));
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
    cols: usize,
) -> [GrTemplateShare; 3] {
    let [el, er] = entry;
    let [ql, qr] = query;
    let mut parts = el.into_iter().zip(er).zip(ql.into_iter().zip(qr));
    std::array::from_fn(|_| {
        let ((l, r), (ql, qr)) = parts.next().expect("three shares of each");
        GrTemplateShare { entry: [l, r], query: [ql, qr], rows, unrotated, cols, bits: Default::default() }
    })
}

/// A client shares a template for enrolment.
pub fn share_enrollment<G: RngCore + CryptoRng>(
    t: &Template,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[GrTemplateShare; 3], IrisError> {
    check_len(t.left.geometry().bits(), None, cfg)?;
    let (l, r) = (cfg.mask_mode.apply(&t.left), cfg.mask_mode.apply(&t.right));
    let entry =
        [share_eye(&[l], cfg.mask_mode, Basis::Monomial, rng)?, share_eye(&[r], cfg.mask_mode, Basis::Monomial, rng)?];
    Ok(assemble(entry, Default::default(), 1, 0, 0))
}

/// A client shares a query: the unrotated row in the query basis (the nodes make the rotations
/// of the window) and monomially, for both eyes.
pub fn share_query<G: RngCore + CryptoRng>(
    t: &Template,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[GrTemplateShare; 3], IrisError> {
    let g = t.left.geometry();
    check_len(g.bits(), Some(g.cols), cfg)?;
    let (window, u) = query_window(cfg, g.cols)?;
    let mode = cfg.mask_mode;
    let (l, r) = (mode.apply(&t.left), mode.apply(&t.right));
    let entry = [
        share_eye(std::slice::from_ref(&l), mode, Basis::Monomial, rng)?,
        share_eye(std::slice::from_ref(&r), mode, Basis::Monomial, rng)?,
    ];
    let bits = |c: &IrisCode, rng: &mut G| {
        let v: Vec<u16> = masked_bits(c).into_iter().map(u16::from).collect();
        gr::share_from_client(&column_major(&v, g.rows, g.cols), Basis::Monomial, rng)
            .map_err(|e| IrisError::Unsupported(e.to_string()))
    };
    let (bl, br) = (bits(&l, rng)?, bits(&r, rng)?);
    let query = [share_eye(&[l], mode, Basis::Query, rng)?, share_eye(&[r], mode, Basis::Query, rng)?];
    let mut shares = assemble(entry, query, window.len(), u, g.cols);
    for (s, (l, r)) in shares.iter_mut().zip(bl.into_iter().zip(br)) {
        s.bits = [l, r];
    }
    Ok(shares)
}

/// One party's shares of the enrolled population, monomial, row after row: 2 bytes per code bit
/// and per mask bit.
#[derive(Clone)]
pub struct GrDb {
    code_len: usize,
    count: usize,
    /// [left code, left mask, right code, right mask].
    rows: [Vec<u16>; 4],
}

impl std::fmt::Debug for GrDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print share contents.
        write!(f, "GrDb[{} entries of {} bits]", self.count, self.code_len)
    }
}

impl GrDb {
    /// An empty database for codes of `len` bits.
    pub fn new(len: usize) -> Self {
        GrDb { code_len: len, count: 0, rows: Default::default() }
    }
}

impl Database for GrDb {
    type Share = GrTemplateShare;
    /// Appends an enrolled template's share (its monomial unrotated rows).
    fn push(&mut self, t: &GrTemplateShare) -> Result<(), MpcError> {
        let [l, r] = &t.entry;
        if l.code.len() != self.code_len || r.code.len() != self.code_len {
            return Err(MpcError::InvalidParameter(format!(
                "an enrolment share has 1 row of {} values",
                self.code_len
            )));
        }
        mask_factor(self.code_len, l.mask.len())?;
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
    fn remove(&mut self, index: usize) -> Result<(), MpcError> {
        if index >= self.count {
            return Err(no_entry(index, self.count));
        }
        for v in &mut self.rows {
            let width = v.len() / self.count;
            v.drain(index * width..(index + 1) * width);
        }
        self.count -= 1;
        Ok(())
    }
    fn len(&self) -> usize {
        self.count
    }
    /// Bytes of share data held in memory (codes and masks of both eyes).
    fn share_bytes(&self) -> usize {
        self.rows.iter().map(|v| std::mem::size_of_val(v.as_slice())).sum()
    }
}

/// Every query's weights for one eye and part, each extended cyclically to `cols + rot − 1`
/// columns so that its `rot` rotations are overlapping windows (the signals of [`EyeQueries`]).
///
/// Rotation index `k` shifts by `r = k − unrotated` columns, so with `hi = rot − 1 − unrotated`
/// (the largest shift) extended column `e` holds weight column `(e − hi) mod cols`, and the
/// window of `r` starts at extended column `hi − r = rot − 1 − k`.
fn rotation_windows<'a>(
    id: usize,
    rows: impl Iterator<Item = &'a [u16]>,
    cols: usize,
    rot: usize,
    unrotated: usize,
) -> Result<Vec<u16>, MpcError> {
    let hi = rot - 1 - unrotated;
    let mut buf = Vec::new();
    for row in rows {
        let w = gr::dot_weights(id, row)?;
        let width = w.len() / cols;
        for e in 0..cols + rot - 1 {
            let c = (e + cols - hi % cols) % cols;
            buf.extend_from_slice(&w[c * width..(c + 1) * width]);
        }
    }
    Ok(buf)
}

/// [`IrisScheme::check`] over Shamir shares in GR(2^16, 4) (MPCLift-GR).
pub fn check_batch(
    p: &mut Party,
    queries: &[GrTemplateShare],
    db: &GrDb,
    cfg: &MatchConfig,
    tuning: &Tuning,
    dedup: bool,
) -> Result<Checked, MpcError> {
    let nq = queries.len();
    if nq == 0 {
        return Ok(Default::default());
    }
    let (len, s) = (db.code_len, db.count);
    let (rot, r0, cols) = (queries[0].rows, queries[0].unrotated, queries[0].cols);
    let mlen = queries[0].entry[0].mask.len();
    let factor = mask_factor(len, mlen)?;
    let well_formed = |q: &GrTemplateShare| {
        q.rows == rot
            && q.unrotated == r0
            && q.cols == cols
            && q.entry.iter().chain(&q.query).all(|e| e.code.len() == len && e.mask.len() == mlen)
    };
    if !queries.iter().all(well_formed) {
        return Err(MpcError::InvalidParameter(format!(
            "every query needs its row of {len} values in both bases and the same {rot} rotations"
        )));
    }
    check_len(len, Some(cols), cfg).map_err(|e| MpcError::InvalidParameter(e.to_string()))?;
    if r0 >= rot || rot > cols {
        return Err(MpcError::InvalidParameter(format!(
            "a window of {rot} rotations with rotation 0 at {r0}, over {cols} columns"
        )));
    }
    if s > 0 && db.rows[1].len() != s * mlen {
        return Err(MpcError::InvalidParameter("queries and database use different mask modes".into()));
    }
    // Additive shares of both dot products, per eye laid out [rotation][target][query], in
    // pieces: each eye's database rows in `split` parts. Each piece's comparison phase (rounds of
    // little work each, then waiting on the peers) runs while a second thread computes the next
    // piece's products, so this party's cores stay busy; only the last piece's comparison runs
    // alone. Smaller batches, where both eyes fit one comparison chunk, run them in one
    // phase (so a phase never holds more than a chunk). Splitting by rotations instead was
    // slower: every piece streams the whole database through the kernel again.
    let shape = (rot, r0, cols);
    let eyes = [EyeQueries::new(p.id(), queries, 0, shape)?, EyeQueries::new(p.id(), queries, 1, shape)?];
    let ring = Z16::new();
    let plan =
        ComparisonPlan::new(argus_math::Ring::modulus(&ring), len, cfg, factor).map_err(MpcError::InvalidParameter)?;
    let compare = |p: &mut Party, chunks: EyeChunks| -> Result<Rep3Bits, MpcError> {
        let hits = chunks
            .into_iter()
            .map(|(d, m)| compare::compare(p, &ring, d, m, plan, tuning.adder))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Rep3Bits::concat(&hits.iter().collect::<Vec<_>>()))
    };
    let whole = Piece { eye: 0, rows: 0..s, batch: true };
    let chunk = tuning.comparisons_per_chunk(tuning.adder);
    if 2 * rot * nq * (s + nq) <= chunk {
        // Both eyes fit one comparison chunk: one phase (half the rounds).
        let mut left = eyes[0].products(queries, db, &whole, chunk)?;
        let mut right = eyes[1].products(queries, db, &Piece { eye: 1, ..whole }, chunk)?;
        let both = match (left.pop(), right.pop()) {
            (Some((ld, lm)), Some((rd, rm))) => vec![([ld, rd].concat(), [lm, rm].concat())],
            _ => Vec::new(),
        };
        let hits = compare(p, both)?;
        return resolve(p, &hits, rot, nq, s, cfg, dedup, Order::TargetQuery);
    }
    let split = pieces_per_eye(rot * nq, s, nq, chunk);
    let pieces: Vec<Piece> = (0..2)
        .flat_map(|eye| {
            (0..split).map(move |h| Piece { eye, rows: s * h / split..s * (h + 1) / split, batch: h + 1 == split })
        })
        .collect();
    let products = |pc: &Piece| eyes[pc.eye].products(queries, db, pc, chunk);
    let mut hits = Vec::with_capacity(pieces.len());
    let mut next = products(&pieces[0]);
    for i in 0..pieces.len() {
        let chunks = next?;
        let (h, n) = std::thread::scope(|scope| {
            let n = pieces.get(i + 1).map(|pc| scope.spawn(move || products(pc)));
            let h = compare(p, chunks);
            // The product thread does not panic; if it did, its panic is re-raised here.
            (h, n.map(|j| j.join().unwrap_or_else(|e| std::panic::resume_unwind(e))))
        });
        hits.push(h?);
        next = n.unwrap_or_else(|| Ok(Vec::new()));
    }
    // [eye][piece][rotation][piece's targets][query] -> [eye][rotation][target][query].
    let mut parts = Vec::with_capacity(2 * rot * split);
    for e in 0..2 {
        for k in 0..rot {
            for (pc, h) in pieces.iter().zip(&hits).filter(|(pc, _)| pc.eye == e) {
                let run = pc.targets(nq) * nq;
                parts.push(h.slice(k * run, run)?);
            }
        }
    }
    let hits = Rep3Bits::concat(&parts.iter().collect::<Vec<_>>());
    resolve(p, &hits, rot, nq, s, cfg, dedup, Order::TargetQuery)
}

/// [`IrisScheme::short_masks`] over GR shares: each party's additive share of a count comes from its
/// share of the query's monomial row ([`gr::sum_share`]).
pub fn short_masks(
    p: &mut Party,
    queries: &[GrTemplateShare],
    len: usize,
    cfg: &MatchConfig,
    tuning: &Tuning,
) -> Result<Vec<bool>, MpcError> {
    let Some(first) = queries.first() else { return Ok(Vec::new()) };
    let factor = mask_factor(len, first.entry[0].mask.len())?;
    let id = p.id();
    let counts = (0..2)
        .flat_map(|e| queries.iter().map(move |q| gr::sum_share(id, &q.entry[e].mask)))
        .collect::<Result<Vec<u16>, _>>()?;
    let short = short_of_counts(p, &Z16::new(), counts, factor, cfg.min_valid_bits(len), tuning.adder)?;
    reveal_short(p, &short, queries.len())
}

/// Most pieces an eye's check is split into (see [`check_batch`]).
const PIECES_PER_EYE: usize = 2;

/// Pieces per eye for `rows` comparisons per target (rotations × queries), `s` entries and `nq`
/// batch rows (in the last piece): the most, up to [`PIECES_PER_EYE`], that keep every piece's
/// entries non-empty and need no more comparison chunks of `chunk` (so no more rounds) than one
/// piece.
fn pieces_per_eye(rows: usize, s: usize, nq: usize, chunk: usize) -> usize {
    let chunks = |split: usize| -> usize {
        (0..split)
            .map(|h| {
                let targets = s * (h + 1) / split - s * h / split + if h + 1 == split { nq } else { 0 };
                (rows * targets).div_ceil(chunk)
            })
            .sum()
    };
    (1..=PIECES_PER_EYE.min(s.max(1))).rev().find(|&split| chunks(split) <= chunks(1)).unwrap_or(1)
}

/// A piece of the check: one eye's products against database entries `rows` and, for the eye's
/// last piece, the batch's own rows.
#[derive(Clone, Debug)]
struct Piece {
    eye: usize,
    rows: std::ops::Range<usize>,
    batch: bool,
}

impl Piece {
    /// Targets compared: the entries, then the batch's rows.
    fn targets(&self, nq: usize) -> usize {
        self.rows.len() + if self.batch { nq } else { 0 }
    }
}

/// The correlations of a batch check on geometry `g` (the same for both eyes): the code's and,
/// if its shape differs (trimmed), the mask's — `cols` positions of a row's values per column,
/// the rotation window's lags, as [`EyeQueries`] prepares them.
pub(crate) fn correlations(g: IrisGeometry, cfg: &MatchConfig) -> Vec<Correlation> {
    let Ok((window, _)) = query_window(cfg, g.cols) else { return Vec::new() };
    let (len, cols) = (g.bits(), g.cols.max(1));
    let mask_len = match cfg.mask_mode {
        MaskMode::PerBit => len,
        MaskMode::Trimmed => len / 2,
    };
    let code = Correlation { positions: cols, width: len / cols, lags: window.len() };
    let mask = Correlation { width: mask_len / cols, ..code };
    if mask == code {
        vec![code]
    } else {
        vec![code, mask]
    }
}

/// One eye's queries prepared once for the middle product, code and mask, for all of the eye's
/// pieces: each query's weights extended to its rotation windows (see [`rotation_windows`]),
/// transformed and packed by [`Correlator`] (Karatsuba's middle product: 0.24–0.42 of the
/// multiplies of the windowed matrix product at the iris shape, by kernel level).
struct EyeQueries {
    code: Correlator,
    mask: Correlator,
    rot: usize,
    nq: usize,
}

impl EyeQueries {
    fn new(
        id: usize,
        queries: &[GrTemplateShare],
        e: usize,
        (rot, r0, cols): (usize, usize, usize),
    ) -> Result<Self, MpcError> {
        let err = |e: argus_math::kernels::KernelError| MpcError::InvalidParameter(e.to_string());
        let prepare = |part: fn(&GrEyeShare) -> &Vec<u16>| -> Result<Correlator, MpcError> {
            let len = part(&queries[0].query[e]).len();
            let signals = rotation_windows(id, queries.iter().map(|q| part(&q.query[e]).as_slice()), cols, rot, r0)?;
            Correlator::new(Correlation { positions: cols, width: len / cols, lags: rot }, None, &signals).map_err(err)
        };
        Ok(EyeQueries { code: prepare(|x| &x.code)?, mask: prepare(|x| &x.mask)?, rot, nq: queries.len() })
    }

    /// The additive shares of the code and mask dot products of every rotation of every query
    /// against the piece's targets, in comparison order (`[rotation][target][query]`), in
    /// comparison chunks of `chunk`: local work only.
    fn products(
        &self,
        queries: &[GrTemplateShare],
        db: &GrDb,
        pc: &Piece,
        chunk: usize,
    ) -> Result<EyeChunks, MpcError> {
        let (rot, nq, e) = (self.rot, self.nq, pc.eye);
        let correlate = |c: &Correlator, rows: &[u16], len: usize| -> Result<Vec<u16>, MpcError> {
            let mut out = vec![0u16; rot * nq * (rows.len() / len)];
            c.correlate(rows, &mut out).map_err(|e| MpcError::InvalidParameter(e.to_string()))?;
            Ok(out)
        };
        let (len, mlen) = (db.code_len, queries[0].entry[0].mask.len());
        let r = &pc.rows;
        let dot_db = correlate(&self.code, &db.rows[2 * e][r.start * len..r.end * len], len)?;
        let ml_db = correlate(&self.mask, &db.rows[2 * e + 1][r.start * mlen..r.end * mlen], mlen)?;
        // The batch's own rows are a small second database for the same prepared queries.
        let batch = |part: fn(&GrEyeShare) -> &Vec<u16>| -> Vec<u16> {
            if pc.batch {
                queries.iter().flat_map(|q| part(&q.entry[e]).iter().copied()).collect()
            } else {
                Vec::new()
            }
        };
        let dot_b = correlate(&self.code, &batch(|x| &x.code), len)?;
        let ml_b = correlate(&self.mask, &batch(|x| &x.mask), mlen)?;
        // Each lag's results are `[target][query]` runs: the entries', then the batch's; rotation
        // index k is lag rot − 1 − k (the correlation's lag ℓ is the window starting at extended
        // column ℓ).
        let (n_db, n_b) = (r.len() * nq, dot_b.len() / rot);
        let mut out = Chunker::new(rot * nq * pc.targets(nq), chunk);
        for k in 0..rot {
            let lag = rot - 1 - k;
            out.extend(&dot_db[lag * n_db..][..n_db], &ml_db[lag * n_db..][..n_db]);
            out.extend(&dot_b[lag * n_b..][..n_b], &ml_b[lag * n_b..][..n_b]);
        }
        Ok(out.chunks)
    }
}

/// One eye's `(dots, mls)` in comparison order, cut into chunks of at most
/// [`Tuning::comparisons_per_chunk`](Tuning::comparisons_per_chunk) comparisons (each chunk goes through the comparison
/// phase on its own, which takes the vectors over without copying them).
type EyeChunks = Vec<(Vec<u16>, Vec<u16>)>;

/// Appends pieces of `dots` and `mls` to [`EyeChunks`], starting a new chunk when one is full.
struct Chunker {
    chunks: EyeChunks,
    left: usize,
    chunk: usize,
}

impl Chunker {
    fn new(total: usize, chunk: usize) -> Self {
        Chunker { chunks: Vec::new(), left: total, chunk: chunk.max(1) }
    }
    fn extend(&mut self, mut d: &[u16], mut m: &[u16]) {
        while !d.is_empty() {
            let full = self.chunks.last().is_none_or(|(c, _)| c.len() == self.chunk);
            if full {
                let cap = self.left.min(self.chunk);
                self.chunks.push((Vec::with_capacity(cap), Vec::with_capacity(cap)));
            }
            let (cd, cm) = self.chunks.last_mut().expect("a chunk with room");
            let take = (self.chunk - cd.len()).min(d.len());
            cd.extend_from_slice(&d[..take]);
            cm.extend_from_slice(&m[..take]);
            (d, m) = (&d[take..], &m[take..]);
            self.left -= take;
        }
    }
}

/// Secret masks over Shamir GR(2^16, 4), the deployed system's sharing (MPCLift-GR): 2 bytes of
/// share per code bit and one 16-bit multiply per bit of a secret dot product.
pub struct MpcLiftGr16;

impl IrisScheme for MpcLiftGr16 {
    type Share = GrTemplateShare;
    type Db = GrDb;
    fn bits(&self) -> u32 {
        16
    }
    fn share_bytes_per_code_bit(&self) -> f64 {
        2.0
    }
    fn correlations(&self, geometry: IrisGeometry, cfg: &MatchConfig) -> Vec<Correlation> {
        correlations(geometry, cfg)
    }
    fn time_compare_chunks(
        &self,
        len: usize,
        cfg: &MatchConfig,
        adder: Adder,
        chunks: &[usize],
        budget: Duration,
    ) -> Option<Result<crate::protocol::ChunkTimes, MpcError>> {
        Some(compare::time_compare_chunks(&Z16::new(), len, cfg, adder, chunks, budget))
    }
    fn share_enrollment(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
        share_enrollment(t, cfg, &mut OsRng)
    }
    fn share_query(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
        share_query(t, cfg, &mut OsRng)
    }
    fn new_db(&self, len: usize) -> Self::Db {
        GrDb::new(len)
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
    fn mirrored(&self, p: &mut Party, q: &[Self::Share], geometry: IrisGeometry) -> Result<Vec<Self::Share>, MpcError> {
        mirror::mirrored(p, q, geometry)
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
        codec::encode(s)
    }
    /// As the trait says, except that a query carries its unrotated row twice — in the query
    /// basis and monomially — and no rotations: the nodes make those (module [`gr16`](self)).
    fn decode(&self, bytes: &[u8], len: usize, cfg: &MatchConfig, expect: ShareKind) -> Result<Self::Share, IrisError> {
        codec::decode(bytes, len, cfg, expect)
    }
    fn enrollment_of(&self, q: &Self::Share) -> Result<Self::Share, IrisError> {
        codec::enrollment_of(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Generator, IrisGeometry};
    use rand::{rngs::StdRng, SeedableRng};

    /// Debug output never shows share values, only sizes.
    #[test]
    fn debug_hides_shares() {
        let e = GrEyeShare { code: vec![4242; 8], mask: vec![4243; 8] };
        let mut db = GrDb::new(8);
        db.push(&GrTemplateShare {
            entry: [e.clone(), e.clone()],
            query: Default::default(),
            rows: 1,
            unrotated: 0,
            cols: 0,
            bits: Default::default(),
        })
        .unwrap();
        let shown = format!("{e:?} {db:?}");
        assert!(!shown.contains("4242") && !shown.contains("4243"), "{shown}");
        assert_eq!(shown, "GrEyeShare[code 8, mask 8] GrDb[1 entries of 8 bits]");
    }

    /// An eye is split into pieces only where that costs no extra comparison chunk (rounds).
    #[test]
    fn pieces_keep_the_chunk_count() {
        let chunk = crate::protocol::COMPARE_CHUNK;
        // The bench's batch: 31 rotations × 32 queries against 4000 entries, 4 chunks either way.
        assert_eq!(pieces_per_eye(31 * 32, 4000, 32, chunk), 2);
        // With the log-depth adder's chunks of 2^21: 2 chunks either way.
        assert_eq!(
            pieces_per_eye(31 * 32, 4000, 32, crate::protocol::compare_chunk(argus_mpc::rep3::Adder::LogDepth)),
            2
        );
        // An eye of 1.5 chunks: two pieces of 0.75 would still take 2 chunks.
        assert_eq!(pieces_per_eye(1, chunk + chunk / 2 - 8, 8, chunk), 2);
        // An eye of 2.5 chunks: halves of 1.25 would take 4 chunks instead of 3.
        assert_eq!(pieces_per_eye(1, 2 * chunk + chunk / 2, 0, chunk), 1);
        assert_eq!(pieces_per_eye(31 * 32, 1, 32, chunk), 1);
        assert_eq!(pieces_per_eye(31 * 32, 0, 32, chunk), 1);
    }

    /// A geometry whose angular columns do not hold whole ring elements cannot be rotated by the
    /// nodes: the client is told why, before anything is shared.
    #[test]
    fn columns_must_hold_whole_ring_elements() {
        let g = IrisGeometry::new(2, 8, 1, 2).unwrap(); // 4 code values per column, 2 trimmed mask values
        let t = Generator::new(g, 1).unwrap().random_template();
        let mut rng = StdRng::seed_from_u64(1);
        let trimmed = MatchConfig { mask_mode: MaskMode::Trimmed, ..MatchConfig::default() };
        let e = share_query(&t, &trimmed, &mut rng).unwrap_err().to_string();
        assert!(e.contains("whole groups of 4 per angular column"), "{e}");
        assert!(share_query(&t, &MatchConfig::default(), &mut rng).is_ok());
    }

    /// The nodes' products (rotation windows, middle product, comparison order) give, summed over
    /// the parties, the plain dot product of every rotation of the query with an entry —
    /// asymmetric windows (where a wrong direction would show), the full window of a narrow
    /// geometry, and both mask modes.
    #[test]
    fn rotation_windows_open_to_rotated_dot_products() {
        let mut rng = StdRng::seed_from_u64(5);
        for (geometry, window) in [
            (IrisGeometry::new(4, 32, 2, 2).unwrap(), -3..=2),
            (IrisGeometry::new(4, 32, 2, 2).unwrap(), 0..=4),
            (IrisGeometry::new(4, 8, 1, 2).unwrap(), -15..=15),
        ] {
            for mask_mode in [MaskMode::PerBit, MaskMode::Trimmed] {
                let cfg = MatchConfig { rotations: window.clone(), mask_mode, ..MatchConfig::default() };
                let mut g = Generator::new(geometry, 3).unwrap();
                let (q, d) = (g.random_template(), g.random_template());
                let qs = share_query(&q, &cfg, &mut rng).unwrap();
                let ds = share_enrollment(&d, &cfg, &mut rng).unwrap();
                let (rotations, _) = crate::protocol::query_window(&cfg, geometry.cols).unwrap();
                let dq = mask_mode.apply(&d.left);
                let rows = |c: &IrisCode| {
                    let code: Vec<u16> = encode_masked(c).into_iter().map(|v| v as i16 as u16).collect();
                    let mask: Vec<u16> = crate::protocol::mask_row(c, mask_mode).into_iter().map(u16::from).collect();
                    (code, mask)
                };
                let (dc, dm) = rows(&dq);
                for (k, &r) in rotations.iter().enumerate() {
                    let (qc, qm) = rows(&mask_mode.apply(&q.left).rotate(r));
                    let plain = |a: &[u16], b: &[u16]| {
                        a.iter().zip(b).fold(0u16, |s, (x, y)| s.wrapping_add(x.wrapping_mul(*y)))
                    };
                    let mut sums = [0u16; 2];
                    for id in 0..3 {
                        let x = &qs[id];
                        assert_eq!((x.rows, x.cols), (rotations.len(), geometry.cols));
                        let mut db = GrDb::new(geometry.bits());
                        db.push(&ds[id]).unwrap();
                        let eye =
                            EyeQueries::new(id, std::slice::from_ref(x), 0, (x.rows, x.unrotated, x.cols)).unwrap();
                        let piece = Piece { eye: 0, rows: 0..1, batch: false };
                        // One target and one query: comparison k is rotation index k.
                        let [(dots, mls)]: [_; 1] = eye
                            .products(std::slice::from_ref(x), &db, &piece, crate::protocol::COMPARE_CHUNK)
                            .unwrap()
                            .try_into()
                            .unwrap();
                        sums[0] = sums[0].wrapping_add(dots[k]);
                        sums[1] = sums[1].wrapping_add(mls[k]);
                    }
                    assert_eq!(
                        sums,
                        [plain(&qc, &dc), plain(&qm, &dm)],
                        "{geometry:?} {window:?} {mask_mode:?} rotation {r}"
                    );
                }
            }
        }
    }
}
