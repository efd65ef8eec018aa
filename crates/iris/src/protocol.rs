//! The uniqueness check in MPC with secret codes and secret masks (paper 000 Alg. 3), first
//! variant: **NoLift** over a power-of-two ring Z_2^k (k = 32 for 12800-bit codes, chosen by
//! Lemma 2). Both dot products (masked codes and masks) are computed directly in Z_2^k, so no
//! lifting is needed.
//!
//! For every query rotation `r`, eye `e` and enrolled entry `j`:
//! `v = a·ml − b·dot` with `(a, b)` from [`mpc_comparison_terms`], computed on the additive
//! shares of the two matrix products (eq. 6) and reshared once; `msb(v) = 1` ⟺ match. The match
//! bits are laid out `[rotation][entry]`, so an OR-tree with `groups = entries` folds the
//! rotations; the eyes are combined by the rule (AND or OR) and a last OR-tree over the entries
//! gives the one bit that is revealed: "already enrolled". No party learns a code, a mask, a
//! distance, or which entry matched.
//!
//! Costs per comparison (one rotation of one eye against one entry): one reshared ring element
//! and one `k`-bit MSB extraction (`2k − 3` AND gates); the OR-trees add about one AND per
//! comparison.

use argus_math::{Modulus, Ring};
use argus_mpc::rep3::{self, Adder, Rep3, Rep3Bits, Rep3Pre};
use argus_mpc::{MpcError, Party};
use rand_core::{CryptoRng, RngCore};

use crate::matcher::rotations_in;
use crate::{encode_masked, lemma2_ring_bits, mask_vector, EyeRule, IrisCode, IrisError, MatchConfig, Template};

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
}

/// The ring the comparison needs for codes of `len` bits under `cfg` (Lemma 2), or an error if it
/// is wider than `ring`.
pub fn check_ring<R: Ring>(ring: &R, len: usize, cfg: &MatchConfig) -> Result<(), IrisError> {
    let need = lemma2_ring_bits(len, cfg.threshold);
    match ring.modulus() {
        Modulus::Pow2(k) if k >= need => Ok(()),
        m => Err(IrisError::Unsupported(format!("codes of {len} bits need Z_2^k with k >= {need} (Lemma 2), got {m}"))),
    }
}

fn eye_rows<R: Ring>(ring: &R, codes: &[IrisCode]) -> (Vec<R::El>, Vec<R::El>) {
    let mut code = Vec::new();
    let mut mask = Vec::new();
    for c in codes {
        code.extend(encode_masked(c).into_iter().map(|v| ring.from_i128(v as i128)));
        mask.extend(mask_vector(c).into_iter().map(|v| ring.from_u128(v as u128)));
    }
    (code, mask)
}

fn share_rows<R: Ring, G: RngCore + CryptoRng>(
    ring: &R,
    left: &[IrisCode],
    right: &[IrisCode],
    rng: &mut G,
) -> [TemplateShare<R>; 3] {
    let (lc, lm) = eye_rows(ring, left);
    let (rc, rm) = eye_rows(ring, right);
    let [lc, lm, rc, rm] = [lc, lm, rc, rm].map(|v| rep3::share_from_client(ring, &v, rng));
    std::array::from_fn(|i| TemplateShare {
        left: EyeShare { code: lc[i].clone(), mask: lm[i].clone() },
        right: EyeShare { code: rc[i].clone(), mask: rm[i].clone() },
        rows: left.len(),
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
    Ok(share_rows(ring, &[l], &[r], rng))
}

/// A client shares a query: every rotation of the window, for both eyes.
pub fn share_query<R: Ring, G: RngCore + CryptoRng>(
    ring: &R,
    t: &Template,
    cfg: &MatchConfig,
    rng: &mut G,
) -> Result<[TemplateShare<R>; 3], IrisError> {
    check_ring(ring, t.left.geometry().bits(), cfg)?;
    let rots = |c: &IrisCode| {
        let c = cfg.mask_mode.apply(c);
        rotations_in(&cfg.rotations, c.geometry().cols).into_iter().map(|r| c.rotate(r)).collect::<Vec<_>>()
    };
    Ok(share_rows(ring, &rots(&t.left), &rots(&t.right), rng))
}

/// One party's shares of the enrolled population, row after row (the layout the kernels want).
#[derive(Clone, Debug)]
pub struct SharedDb<R: Ring> {
    ring: R,
    len: usize,
    count: usize,
    left: EyeShare<R>,
    right: EyeShare<R>,
}

impl<R: Ring> SharedDb<R> {
    /// An empty database for codes of `len` bits.
    pub fn new(ring: R, len: usize) -> Self {
        let eye = || EyeShare { code: Rep3::zeros(ring.clone(), 0), mask: Rep3::zeros(ring.clone(), 0) };
        SharedDb { len, count: 0, left: eye(), right: eye(), ring }
    }
    /// Enrolled entries.
    pub fn len(&self) -> usize {
        self.count
    }
    /// Whether nothing is enrolled.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Appends an enrolled template's share (one row per eye).
    pub fn push(&mut self, t: &TemplateShare<R>) -> Result<(), MpcError> {
        if t.rows != 1 || t.left.code.len() != self.len {
            return Err(MpcError::InvalidParameter(format!("an enrolment share has 1 row of {} values", self.len)));
        }
        for (dst, src) in [(&mut self.left, &t.left), (&mut self.right, &t.right)] {
            for (d, s) in [(&mut dst.code, &src.code), (&mut dst.mask, &src.mask)] {
                *d = Rep3::concat(&[&*d, s])?;
            }
        }
        self.count += 1;
        Ok(())
    }
}

/// Alg. 3: whether the query matches any enrolled entry (revealed to all three parties as one bit).
pub fn is_enrolled<R: Ring>(
    p: &mut Party,
    q: &TemplateShare<R>,
    db: &SharedDb<R>,
    cfg: &MatchConfig,
) -> Result<bool, MpcError> {
    let (s, rot, len) = (db.count, q.rows, db.len);
    if s == 0 || rot == 0 {
        return Ok(false);
    }
    let ring = &db.ring;
    let (a, b) = crate::mpc_comparison_terms(cfg.threshold);
    let (a, b) = (ring.from_i128(a), ring.from_i128(b));
    // v = a·ml − b·dot for both eyes, on additive shares, reshared once.
    let mut v = Vec::with_capacity(2 * rot * s);
    for (qe, de) in [(&q.left, &db.left), (&q.right, &db.right)] {
        let dot = rep3::matmul_local(&Rep3Pre::new(&qe.code), &Rep3Pre::new(&de.code), len)?;
        let ml = rep3::matmul_local(&Rep3Pre::new(&qe.mask), &Rep3Pre::new(&de.mask), len)?;
        v.extend(ml.into_iter().zip(dot).map(|(m, d)| ring.sub(ring.mul(a, m), ring.mul(b, d))));
    }
    let v = rep3::reshare(p, ring, v)?;
    let hits = rep3::msb(p, &v, Adder::Ripple)?;
    // [eye][rotation][entry]: fold the rotations of each eye, then combine the eyes.
    let left = rep3::or_tree(p, &hits.slice(0, rot * s)?, s)?;
    let right = rep3::or_tree(p, &hits.slice(rot * s, rot * s)?, s)?;
    let both = rep3::and(p, &left, &right)?;
    let entry: Rep3Bits = match cfg.rule {
        EyeRule::And => both,
        EyeRule::Or => left.xor(&right)?.xor(&both)?,
    };
    let any = rep3::or_tree(p, &entry, 1)?;
    Ok(rep3::reveal_bits(p, &any)?.get(0))
}
