//! The reference matcher: paper 000's Algorithm 1 with rotations and both eyes, in exact integers.
//!
//! For codes `a`, `b` with masks `ma`, `mb`:
//! `ml = popcount(ma & mb)` and `hd = popcount((a ^ b) & ma & mb)`. With a threshold
//! `num / den`, the pair **matches** iff `ml > 0` and `hd · den < num · ml` (strict: `hd / ml`
//! equal to the threshold is not a match; the MPC protocols compute exactly this comparison, see
//! [`crate::encoding`]).
//! An eye matches if any rotation of the *query* in the window matches the enrolled code; a
//! template matches per [`EyeRule`].

use std::ops::RangeInclusive;

use crate::{IrisCode, IrisError, IrisGeometry, MaskMode, Template};

/// The largest supported `den_log2` (so `hd · den` and `b · l` fit 128-bit integers): denominators
/// are at most `2^62`.
pub const MAX_DEN_LOG2: u32 = 62;

/// A rational threshold on the fractional Hamming distance, `num / den` in `[0, 1]`, compared
/// exactly: `hd / ml` matches iff it is strictly below.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Threshold {
    num: u64,
    den: u64,
}

impl Default for Threshold {
    /// 0.345 exactly: `69 / 200`.
    fn default() -> Self {
        Threshold::DEFAULT
    }
}

impl std::fmt::Display for Threshold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

impl Threshold {
    /// The default, 0.345 exactly (`69 / 200`).
    pub const DEFAULT: Threshold = Threshold { num: 69, den: 200 };

    /// `num / 2^den_log2` as given (not reduced); errors unless `den_log2 <= 62` and
    /// `num <= 2^den_log2`.
    pub fn new(num: u64, den_log2: u32) -> Result<Self, IrisError> {
        if den_log2 > MAX_DEN_LOG2 {
            return Err(IrisError::InvalidThreshold { reason: "den_log2 must be at most 62" });
        }
        Threshold::checked(num, 1u64 << den_log2)
    }

    /// `num / den` in lowest terms; errors unless `0 < den <= 2^62` and `num <= den`.
    pub fn ratio(num: u64, den: u64) -> Result<Self, IrisError> {
        if den == 0 {
            return Err(IrisError::InvalidThreshold { reason: "the denominator must not be 0" });
        }
        let g = gcd(num, den);
        Threshold::checked(num / g, den / g)
    }

    fn checked(num: u64, den: u64) -> Result<Self, IrisError> {
        if den == 0 || den > 1u64 << MAX_DEN_LOG2 {
            return Err(IrisError::InvalidThreshold { reason: "the denominator must be from 1 to 2^62" });
        }
        if num > den {
            return Err(IrisError::InvalidThreshold { reason: "threshold must be at most 1" });
        }
        Ok(Threshold { num, den })
    }

    /// The decimal `f` as written (its shortest representation, so `0.345` is `69 / 200`
    /// exactly, not the nearest binary fraction); errors unless `f` is a finite number in
    /// `[0, 1]` with at most 18 decimals.
    pub fn from_decimal(f: f64) -> Result<Self, IrisError> {
        if !f.is_finite() || !(0.0..=1.0).contains(&f) {
            return Err(IrisError::InvalidThreshold { reason: "fraction must be a finite number in [0, 1]" });
        }
        let text = format!("{f}"); // Rust prints floats without an exponent
        let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
        if frac.len() > 18 {
            return Err(IrisError::InvalidThreshold { reason: "a threshold has at most 18 decimals" });
        }
        let den = 10u64.pow(frac.len() as u32);
        let digits = |s: &str| s.parse::<u64>().ok();
        let num = digits(int).zip(if frac.is_empty() { Some(0) } else { digits(frac) });
        let (int, frac) = num.ok_or(IrisError::InvalidThreshold { reason: "not a decimal number" })?;
        Threshold::ratio(int * den + frac, den)
    }

    /// The nearest `num / 2^den_log2` to `f` (ties away from zero); errors unless `f` is a
    /// finite number in `[0, 1]` and `den_log2 <= 62`.
    pub fn from_fraction(f: f64, den_log2: u32) -> Result<Self, IrisError> {
        if !f.is_finite() || !(0.0..=1.0).contains(&f) {
            return Err(IrisError::InvalidThreshold { reason: "fraction must be a finite number in [0, 1]" });
        }
        if den_log2 > MAX_DEN_LOG2 {
            return Err(IrisError::InvalidThreshold { reason: "den_log2 must be at most 62" });
        }
        let num = (f * (1u64 << den_log2) as f64).round() as u64;
        Threshold::new(num.min(1u64 << den_log2), den_log2)
    }

    /// The numerator.
    pub const fn num(&self) -> u64 {
        self.num
    }

    /// The denominator.
    pub const fn den(&self) -> u64 {
        self.den
    }

    /// The threshold as a float (for display only; matching never uses it).
    pub fn as_f64(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// Whether `(hd, ml)` is a match: `ml > 0` and `hd · den < num · ml`, exactly.
    pub fn matches(&self, hd: u64, ml: u64) -> bool {
        ml > 0 && (hd as u128) * (self.den as u128) < (self.num as u128) * (ml as u128)
    }

    /// The threshold `n / 2^d` with the smallest `d ≥ 1` that decides every `(hd, ml)` with
    /// `ml <= max_ml` exactly as this one does (for protocols whose comparison needs a power of
    /// two as denominator): `n = ⌊num·2^d / den⌋` once no fraction of denominator at most
    /// `max_ml` lies in `[n / 2^d, num / den)`, i.e. once `n / 2^d` exceeds the largest such
    /// fraction below `num / den`. `None` if that needs `d > 62`, or the search is too long
    /// (`max_ml > 2^24` below the denominator) for a denominator not already a power of two.
    pub fn dyadic_for(&self, max_ml: u64) -> Option<Threshold> {
        let g = gcd(self.num, self.den);
        let (p, q) = (self.num / g, self.den / g);
        if p == 0 || p == q {
            return Some(Threshold { num: 2 * p, den: 2 });
        }
        // 0 < p < q: the largest h/k < p/q with 1 <= k <= max_ml, then the fewest bits.
        let exact = q.is_power_of_two().then_some(Threshold { num: p, den: q }); // q >= 2 here
        let Some((h, k)) = predecessor(p, q, max_ml) else { return exact };
        (1..=MAX_DEN_LOG2).find_map(|d| {
            let n = ((p as u128) << d) / q as u128;
            (n * k as u128 > (h as u128) << d).then_some(Threshold { num: n as u64, den: 1u64 << d })
        })
    }
}
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

/// The largest fraction `h/k < p/q` with `1 <= k <= n` (`p/q` in lowest terms, `0 < p < q`), or
/// `None` when `n` is 0, or `q > n` and `n` is above 2^24 (the search is linear then). With `q <= n` it is the left Farey neighbour: `p·k − q·h
/// = 1` with `n − q < k <= n` (`k ≡ p⁻¹ mod q`); otherwise every `k` is tried.
fn predecessor(p: u64, q: u64, n: u64) -> Option<(u64, u64)> {
    if n == 0 || (q > n && n > 1 << 24) {
        return None;
    }
    if q <= n {
        let inv = mod_inverse(p, q)?;
        let k = n - (n - inv) % q;
        return Some((((p as u128 * k as u128 - 1) / q as u128) as u64, k));
    }
    let below = |k: u64| ((p as u128 * k as u128).div_ceil(q as u128) - 1) as u64; // largest h with h/k < p/q
    (1..=n).map(|k| (below(k), k)).reduce(|(h, k), (h2, k2)| {
        if h2 as u128 * k as u128 > h as u128 * k2 as u128 {
            (h2, k2)
        } else {
            (h, k)
        }
    })
}

/// `x⁻¹ mod m` for coprime `x`, `m > 1`, in `[1, m)`.
fn mod_inverse(x: u64, m: u64) -> Option<u64> {
    let (mut r0, mut r1, mut s0, mut s1) = (m as i128, x as i128, 0i128, 1i128);
    while r1 != 0 {
        let t = r0 / r1;
        (r0, r1) = (r1, r0 - t * r1);
        (s0, s1) = (s1, s0 - t * s1);
    }
    (r0 == 1).then(|| s0.rem_euclid(m as i128) as u64)
}

/// `(hd, ml)` of two codes: `ml = popcount(ma & mb)`, `hd = popcount((ca ^ cb) & ma & mb)`.
/// Errors if the geometries differ.
pub fn distance(a: &IrisCode, b: &IrisCode) -> Result<(u64, u64), IrisError> {
    a.geometry().check_same(&b.geometry())?;
    let (mut hd, mut ml) = (0u64, 0u64);
    let words = a.code().words().iter().zip(b.code().words()).zip(a.mask().words().iter().zip(b.mask().words()));
    for ((ca, cb), (ma, mb)) in words {
        let m = ma & mb;
        ml += m.count_ones() as u64;
        hd += ((ca ^ cb) & m).count_ones() as u64;
    }
    Ok((hd, ml))
}

/// The fractional Hamming distance `hd / ml`, or `None` when no bit is valid in both.
pub fn fractional_distance(a: &IrisCode, b: &IrisCode) -> Result<Option<f64>, IrisError> {
    let (hd, ml) = distance(a, b)?;
    Ok((ml > 0).then(|| hd as f64 / ml as f64))
}

/// The distinct rotations a window stands for: the window's values, or every rotation
/// `0..cols` once if the window is at least `cols` wide (so a huge window costs `cols` steps).
pub fn rotations_in(window: &RangeInclusive<i32>, cols: usize) -> Vec<i32> {
    let (lo, hi) = (*window.start() as i64, *window.end() as i64);
    if lo > hi {
        return Vec::new();
    }
    if hi - lo + 1 >= cols as i64 {
        return (0..cols.min(i32::MAX as usize) as i32).collect();
    }
    window.clone().collect()
}

/// The best rotation of one eye's comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EyeScore {
    /// The rotation applied to the query.
    pub rotation: i32,
    /// Hamming distance over the common mask.
    pub hd: u64,
    /// Size of the common mask.
    pub ml: u64,
}

impl EyeScore {
    /// `hd / ml`.
    pub fn fhd(&self) -> f64 {
        self.hd as f64 / self.ml as f64
    }
}

/// The rotation of `query` in the window with the smallest `hd / ml` (exact comparison; the first
/// one on ties; rotations with `ml = 0` are skipped), or `None` if there is none.
pub fn best_rotation(
    query: &IrisCode,
    enrolled: &IrisCode,
    rotations: &RangeInclusive<i32>,
) -> Result<Option<EyeScore>, IrisError> {
    query.geometry().check_same(&enrolled.geometry())?;
    let mut best: Option<EyeScore> = None;
    for r in rotations_in(rotations, query.geometry().cols) {
        let (hd, ml) = distance(&query.rotate(r), enrolled)?;
        let better = best.is_none_or(|b| (hd as u128) * (b.ml as u128) < (b.hd as u128) * (ml as u128));
        if ml > 0 && better {
            best = Some(EyeScore { rotation: r, hd, ml });
        }
    }
    Ok(best)
}

/// Whether any rotation of `query` in the window matches `enrolled` (per-bit masks as given).
pub fn match_eye(
    query: &IrisCode,
    enrolled: &IrisCode,
    threshold: Threshold,
    rotations: &RangeInclusive<i32>,
) -> Result<bool, IrisError> {
    query.geometry().check_same(&enrolled.geometry())?;
    for r in rotations_in(rotations, query.geometry().cols) {
        let (hd, ml) = distance(&query.rotate(r), enrolled)?;
        if threshold.matches(hd, ml) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// How the two eyes' results combine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum EyeRule {
    /// Both eyes must match (the default).
    #[default]
    And,
    /// Either eye matching is enough.
    Or,
}

impl EyeRule {
    /// Combines the two eyes' results.
    pub fn combine(self, left: bool, right: bool) -> bool {
        match self {
            EyeRule::And => left && right,
            EyeRule::Or => left || right,
        }
    }
}

/// Whether `query` matches `enrolled`: each eye against the same eye, combined by `rule`.
pub fn match_template(
    query: &Template,
    enrolled: &Template,
    threshold: Threshold,
    rule: EyeRule,
    rotations: &RangeInclusive<i32>,
) -> Result<bool, IrisError> {
    let left = match_eye(&query.left, &enrolled.left, threshold, rotations)?;
    // Evaluate both eyes' geometry checks even when the result is already decided.
    let right = match_eye(&query.right, &enrolled.right, threshold, rotations)?;
    Ok(rule.combine(left, right))
}

/// Everything that decides a match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchConfig {
    /// The threshold (default 0.345, exactly `69 / 200`).
    pub threshold: Threshold,
    /// The rotation window applied to the query (default `-15..=15`, 31 rotations).
    pub rotations: RangeInclusive<i32>,
    /// How the two eyes combine (default: both must match).
    pub rule: EyeRule,
    /// How masks are used (default: per bit).
    pub mask_mode: MaskMode,
    /// The MPC check also reveals, per query, which enrolled entries (and earlier queries of the
    /// batch) it matched — to the nodes' operators, never to the client (default: off; only
    /// "unique or not" is revealed). The plaintext matcher ignores it.
    pub reveal_matches: bool,
    /// The least fraction of an eye's code bits that must be valid (unmasked, after the mask
    /// mode) for a query to be checked at all (default 1/4); a query with an eye below it is
    /// refused ([`MatchConfig::too_few_valid_bits`]): an all-masked template would otherwise
    /// match nothing, be "unique" and enrol any number of times.
    pub min_valid: Threshold,
}

impl Default for MatchConfig {
    fn default() -> Self {
        MatchConfig {
            threshold: Threshold::DEFAULT,
            rotations: -15..=15,
            rule: EyeRule::And,
            mask_mode: MaskMode::PerBit,
            reveal_matches: false,
            min_valid: Threshold { num: 1, den: 4 },
        }
    }
}

impl MatchConfig {
    /// The fewest valid code bits an eye of `len` bits must keep: `⌈min_valid · len⌉`.
    pub fn min_valid_bits(&self, len: usize) -> u64 {
        let (num, den) = (u128::from(self.min_valid.num()), u128::from(self.min_valid.den()));
        (num * len as u128).div_ceil(den) as u64
    }

    /// Whether an eye of `t` keeps fewer valid code bits (after the mask mode) than
    /// [`min_valid_bits`](Self::min_valid_bits): such a query is refused, not checked (the
    /// plaintext twin of the MPC check's coverage step).
    pub fn too_few_valid_bits(&self, t: &Template) -> bool {
        [&t.left, &t.right].into_iter().any(|c| {
            let valid = self.mask_mode.apply(c).mask().count_ones() as u64;
            valid < self.min_valid_bits(c.geometry().bits())
        })
    }

    /// [`match_eye`] with this configuration's threshold, window and mask mode.
    pub fn match_eye(&self, query: &IrisCode, enrolled: &IrisCode) -> Result<bool, IrisError> {
        let (q, e) = (self.mask_mode.apply(query), self.mask_mode.apply(enrolled));
        match_eye(&q, &e, self.threshold, &self.rotations)
    }

    /// [`match_template`] with this configuration.
    pub fn match_template(&self, query: &Template, enrolled: &Template) -> Result<bool, IrisError> {
        let left = self.match_eye(&query.left, &enrolled.left)?;
        let right = self.match_eye(&query.right, &enrolled.right)?;
        Ok(self.rule.combine(left, right))
    }
}

/// A query's rotations under a [`MatchConfig`], computed once, to test against many enrolled
/// templates ([`MatchConfig::prepare`]). `Sync`: one prepared query can be scanned in parallel.
pub struct PreparedQuery<'a> {
    cfg: &'a MatchConfig,
    geometry: (IrisGeometry, IrisGeometry),
    left: Vec<IrisCode>,
    right: Vec<IrisCode>,
}

impl MatchConfig {
    /// Prepares `query` for many [`PreparedQuery::matches`] calls.
    pub fn prepare(&self, query: &Template) -> PreparedQuery<'_> {
        let rots = |c: &IrisCode| {
            let c = self.mask_mode.apply(c);
            rotations_in(&self.rotations, c.geometry().cols).into_iter().map(|r| c.rotate(r)).collect::<Vec<_>>()
        };
        PreparedQuery {
            cfg: self,
            geometry: (query.left.geometry(), query.right.geometry()),
            left: rots(&query.left),
            right: rots(&query.right),
        }
    }
}

impl PreparedQuery<'_> {
    /// Whether the query matches `enrolled` (the eye rule over both eyes; the right eye is not
    /// compared when the left one already decides). Errors on a geometry mismatch.
    pub fn matches(&self, enrolled: &Template) -> Result<bool, IrisError> {
        self.geometry.0.check_same(&enrolled.left.geometry())?;
        self.geometry.1.check_same(&enrolled.right.geometry())?;
        let eye = |rotated: &[IrisCode], enrolled: &IrisCode| -> Result<bool, IrisError> {
            // Per-bit masks compare the entry as stored: no copy per entry on this hot path.
            let e = match self.cfg.mask_mode {
                MaskMode::PerBit => std::borrow::Cow::Borrowed(enrolled),
                MaskMode::Trimmed => std::borrow::Cow::Owned(MaskMode::Trimmed.apply(enrolled)),
            };
            for q in rotated {
                let (hd, ml) = distance(q, &e)?;
                if self.cfg.threshold.matches(hd, ml) {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        let left = eye(&self.left, &enrolled.left)?;
        match (self.cfg.rule, left) {
            (EyeRule::And, false) => Ok(false),
            (EyeRule::Or, true) => Ok(true),
            _ => eye(&self.right, &enrolled.right),
        }
    }
}

/// Indices of the templates in `db` that `query` matches under `cfg` (the query's rotations are
/// computed once). Errors on the first geometry mismatch.
pub fn find_matches(query: &Template, db: &[Template], cfg: &MatchConfig) -> Result<Vec<usize>, IrisError> {
    let q = cfg.prepare(query);
    let mut out = Vec::new();
    for (i, t) in db.iter().enumerate() {
        if q.matches(t)? {
            out.push(i);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    use argus_math::BitVec;

    #[test]
    fn default_threshold() {
        assert_eq!(Threshold::from_decimal(0.345).unwrap(), Threshold::DEFAULT);
        assert_eq!((Threshold::DEFAULT.num(), Threshold::DEFAULT.den()), (69, 200));
        assert_eq!(Threshold::DEFAULT.to_string(), "69/200");
        // hd/ml exactly 0.345 is not a match; a hair below is.
        assert!(!Threshold::DEFAULT.matches(69, 200) && !Threshold::DEFAULT.matches(4416, 12800));
        assert!(Threshold::DEFAULT.matches(4415, 12800) && Threshold::DEFAULT.matches(4357, 12629));
        for (f, num, den) in [(0.0, 0, 1), (1.0, 1, 1), (0.5, 1, 2), (0.375, 3, 8), (0.1, 1, 10), (0.3333, 3333, 10000)]
        {
            assert_eq!(Threshold::from_decimal(f).unwrap(), Threshold::ratio(num, den).unwrap(), "{f}");
        }
        assert!(Threshold::from_decimal(1e-19).is_err(), "more than 18 decimals");
        assert_eq!(Threshold::from_fraction(0.345, 16).unwrap().num(), 22610);
        assert_eq!(Threshold::from_fraction(1.0, 62).unwrap().num(), 1 << 62);
        assert_eq!(Threshold::from_fraction(0.0, 0).unwrap().num(), 0);
        for f in [f64::NAN, 1.5, -0.1, f64::INFINITY] {
            assert!(Threshold::from_fraction(f, 16).is_err() && Threshold::from_decimal(f).is_err());
        }
        assert!(Threshold::from_fraction(0.3, 63).is_err());
        assert!(Threshold::new(65537, 16).is_err());
        assert!(Threshold::new(65536, 16).is_ok());
        assert!(Threshold::ratio(3, 2).is_err() && Threshold::ratio(0, 0).is_err());
        assert_eq!(Threshold::ratio(10, 20).unwrap(), Threshold::new(1, 1).unwrap());
    }

    /// The dyadic stand-in decides every `(hd, ml)` with `ml` up to its bound as the rational
    /// does, with the fewest denominator bits: exhaustively for small thresholds and bounds
    /// (both the Farey-neighbour case `den <= max_ml` and the search beyond it).
    #[test]
    fn dyadic_stand_in_decides_like_the_rational() {
        for den in 1..=24u64 {
            for num in 0..=den {
                let t = Threshold::ratio(num, den).unwrap();
                for max_ml in [1u64, 5, 17, 40] {
                    let same =
                        |d: Threshold| (1..=max_ml).all(|ml| (0..=ml).all(|hd| d.matches(hd, ml) == t.matches(hd, ml)));
                    let d = t.dyadic_for(max_ml).unwrap();
                    assert!(d.den().is_power_of_two() && same(d), "{t} up to {max_ml}: {d}");
                    // No smaller power of two works.
                    let bits = d.den().trailing_zeros();
                    for e in 1..bits {
                        let n = ((t.num() as u128) << e) / t.den() as u128;
                        assert!(!same(Threshold::new(n as u64, e).unwrap()), "{t} up to {max_ml}: 2^{e} works");
                    }
                }
            }
        }
        // The default over the deployed codes' 12 800 bits needs 2^21: 723517 / 2^21.
        assert_eq!(Threshold::DEFAULT.dyadic_for(12_800), Threshold::new(723_517, 21).ok());
        assert_eq!(Threshold::new(3, 3).unwrap().dyadic_for(12_800), Threshold::new(3, 3).ok());
    }

    #[test]
    fn strict_comparison() {
        let t = Threshold::new(1, 1).unwrap(); // 1/2
        assert!(!t.matches(5, 10)); // exactly at the threshold: no match
        assert!(t.matches(4, 10));
        assert!(!t.matches(0, 0)); // nothing in common: never a match
        assert!(t.matches(0, 1));
        assert!(!Threshold::new(0, 16).unwrap().matches(0, 10));
        assert!(Threshold::new(1 << 62, 62).unwrap().matches(u64::MAX - 1, u64::MAX));
    }

    #[test]
    fn distance_counts() {
        let g = IrisGeometry::new(1, 2, 1, 2).unwrap();
        let a = IrisCode::new(
            g,
            BitVec::from_bools(&[true, true, false, false]),
            BitVec::from_bools(&[true, true, true, false]),
        )
        .unwrap();
        let b = IrisCode::new(
            g,
            BitVec::from_bools(&[true, false, true, true]),
            BitVec::from_bools(&[false, true, true, true]),
        )
        .unwrap();
        assert_eq!(distance(&a, &b).unwrap(), (2, 2));
        let c = IrisCode::unmasked(IrisGeometry::DEPLOYED, BitVec::zeros(12800)).unwrap();
        assert!(matches!(distance(&a, &c), Err(IrisError::GeometryMismatch { .. })));
        assert!(matches!(match_eye(&a, &c, Threshold::DEFAULT, &(-1..=1)), Err(IrisError::GeometryMismatch { .. })));
    }

    #[test]
    fn rotation_windows() {
        assert_eq!(rotations_in(&(-15..=15), 200).len(), 31);
        assert_eq!(rotations_in(&(i32::MIN..=i32::MAX), 200).len(), 200);
        #[allow(clippy::reversed_empty_ranges)]
        let empty = 1..=0;
        assert!(rotations_in(&empty, 200).is_empty());
        assert_eq!(rotations_in(&(0..=2), 2), vec![0, 1]);
    }
}
