//! The comparison and reveal step that every scheme's batch check ends with (paper 000 Alg. 3
//! after the products): from shares of each comparison's `dot` and `ml`, `msb(a·ml − b·dot)`
//! (`compare`, sized by its `ComparisonPlan`; MPCLift's lift in [`mpclift_msb`]), run in
//! chunks of comparisons ([`Tuning`], [`compare_chunk`], [`auto_compare_chunk`]), then the
//! shared tail (`resolve`: OR over rotations, the eye rule, OR over targets, one revealed bit
//! per query, [`Checked`]) and the coverage step's reveal (`reveal_short`).
//!
//! Costs per comparison (one rotation of one eye against one entry): one reshared ring element,
//! sent for two thirds of the values (the MSB never reads the rest at the receiver,
//! [`rep3::ReshareFor::Msb`]); MPCLift also reshares `ml` (over that third only its top two
//! bits, all its carry count reads there) and adds its one-round carry count; then one `k`-bit
//! MSB extraction (two-operand, `k − 1` AND gates; the paper's Alg. 10 takes `2k − 3`). The
//! OR-trees add about one AND per comparison.

use argus_math::{BitVec, Modulus, Ring, Z32, Z64};
use argus_mpc::rep3::{self, Adder, Rep3, Rep3Bits, ReshareFor};
use argus_mpc::{MpcError, Party};
use std::time::{Duration, Instant};

use super::factor_of;
use crate::{EyeRule, IrisError, MatchConfig};

/// Whether shares over `ring` can run the check for codes of `len` bits under `cfg`: a ring wide
/// enough for Lemma 2 (NoLift), or Z_2^16 whose products get lifted (MPCLift); see
/// `ComparisonPlan`.
pub fn check_ring<R: Ring>(ring: &R, len: usize, cfg: &MatchConfig) -> Result<(), IrisError> {
    comparison_bits(ring, len, cfg).map(|_| ())
}

/// The width of the comparison's MSB for shares over `ring` (Z_2^k) and codes of `len` bits
/// under `cfg`: `k` without a lift, the bits the lifted value needs with one.
pub fn comparison_bits<R: Ring>(ring: &R, len: usize, cfg: &MatchConfig) -> Result<u32, IrisError> {
    match ComparisonPlan::new(ring.modulus(), len, cfg, factor_of(cfg.mask_mode)).map_err(IrisError::Unsupported)? {
        ComparisonPlan::NoLift { .. } => Ok(ring.bits()),
        ComparisonPlan::MpcLift { bits, .. } => Ok(bits),
    }
}

/// How `msb(a·ml − b·dot)` runs for codes of `len` bits over the sharing ring, with Lemma 2's
/// terms reduced ([`reduced_terms`]) and the ring sized by the exact range of the value
/// ([`crate::comparison_range`]), not the lemma's slack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ComparisonPlan {
    /// The ring holds the values of the threshold's exact terms (Z_2^32 for both layouts under
    /// the default 69/200: 22 bits): combine locally, one MSB.
    NoLift { a: i128, b: i128 },
    /// Z_2^16 products lifted to Z_2^(16+m) with `b = 2^m`, the terms of the threshold's dyadic
    /// stand-in ([`crate::Threshold::dyadic_for`], exact for every `ml ≤ len`): the values
    /// must fit Z_2^(16+m) (at most Z_2^64), and the carry count that lifts `ml` needs
    /// `ml < 2^15` (codes below 2^15 bits per-bit, 2^16 trimmed). The MSB reads the `bits ≤
    /// 16 + m` the values need. Under the default threshold m = 20 (36 bits) for 12800-bit codes.
    MpcLift { a: i128, b_bits: u32, bits: u32 },
}

impl ComparisonPlan {
    /// The plan for `len`-bit codes under `cfg` (`factor`: 2 for trimmed masks, whose products
    /// count pairs), or why there is none.
    pub(crate) fn new(ring: Modulus, len: usize, cfg: &MatchConfig, factor: i128) -> Result<Self, String> {
        let k = match ring {
            Modulus::Pow2(k) => k,
            m => return Err(format!("the iris check runs over Z_2^k, not {m}")),
        };
        let th = cfg.threshold;
        let terms = |t| {
            let (a, b) = crate::mpc_comparison_terms(t);
            let (a, b, _) = reduced_terms(a * factor, b);
            let (lo, hi) = crate::comparison_range(len, factor, a, b);
            let need = rep3::msb_ring_bits(lo, hi)
                .ok_or_else(|| format!("codes of {len} bits compare values in [{lo}, {hi}], beyond Z_2^127"))?;
            Ok::<_, String>((a, b, lo, hi, need))
        };
        let (a, b, lo, hi, need) = terms(th)?;
        if k >= need {
            return Ok(ComparisonPlan::NoLift { a, b });
        }
        let ml_max = len as i128 / factor;
        if k != 16 {
            return Err(format!(
                "codes of {len} bits under threshold {th} compare values in [{lo}, {hi}], which need Z_2^k with \
                 k >= {need}; got Z_2^{k}"
            ));
        }
        let dyadic = th.dyadic_for(len as u64).ok_or_else(|| format!("threshold {th} has no dyadic stand-in"))?;
        let (a, b, _, _, need) = terms(dyadic)?;
        let b_bits = b.trailing_zeros();
        let lifted = k + b_bits;
        if need <= lifted && lifted <= 64 && ml_max < 1 << (k - 1) {
            return Ok(ComparisonPlan::MpcLift { a, b_bits, bits: need });
        }
        Err(format!(
            "codes of {len} bits under threshold {th} (as {dyadic} for MPCLift) compare values that need \
             Z_2^{need}; lifting 16-bit products reaches Z_2^{lifted} (at most Z_2^64) and needs mask products \
             below 2^15 (up to {ml_max} here); use a scheme over Z_2^32 (nolift-Z32-rep3)"
        ))
    }
}

/// How the MPC check runs — never what it answers, which is the plaintext model's
/// ([`MatchConfig`], shared with the reference matcher): the comparisons' adder and how many
/// comparisons go through the comparison phase at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// The binary adder of the comparisons (replicated sharing): ripple carry, the default
    /// (fewest bytes, one round per bit: for a LAN), or log depth (Kogge-Stone: a 30-bit
    /// comparison in 6 rounds instead of 29, for about 1.6 times the check's bytes: for links
    /// whose round trips cost more than the bytes). Comparisons mod a prime always ripple.
    pub adder: Adder,
    /// Comparisons per chunk of the comparison phase; 0 (the default) picks [`compare_chunk`]
    /// for the adder. The phase holds each chunk's intermediate values at once (~40 bytes per
    /// comparison and party with the ripple adder, ~90 with log depth) and runs its rounds once
    /// per chunk, so larger chunks trade memory for rounds: for nodes far apart.
    pub compare_chunk: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning { adder: Adder::Ripple, compare_chunk: 0 }
    }
}

impl Tuning {
    /// Comparisons per chunk for a comparison phase that uses `adder`: [`Self::compare_chunk`],
    /// or where that is 0 the adder's default ([`compare_chunk`]).
    pub fn comparisons_per_chunk(&self, adder: Adder) -> usize {
        match self.compare_chunk {
            0 => compare_chunk(adder),
            n => n,
        }
    }
}

/// The coverage step (refusing queries whose masks leave too few valid bits), shared by the
/// schemes: per query whether either eye is short, from the bits `[factor·count < min]` laid out
/// `[eye][query]`: their OR (one AND round), revealed. Nothing else about the counts is.
pub(crate) fn reveal_short(p: &mut Party, short: &Rep3Bits, nq: usize) -> Result<Vec<bool>, MpcError> {
    let either = rep3::or_tree(p, short, nq)?;
    Ok(rep3::reveal_bits(p, &either)?.to_bools())
}

/// `[count·factor < min]` for additive shares of each `count` over Z_2^k (`len < 2^(k−1)`):
/// party 0 subtracts `min`, then a reshare and a two-operand MSB.
pub(crate) fn short_of_counts<R: Ring>(
    p: &mut Party,
    ring: &R,
    counts: Vec<R::El>,
    factor: i128,
    min: u64,
    adder: Adder,
) -> Result<Rep3Bits, MpcError> {
    let (f, m) = (ring.from_i128(factor), ring.from_u128(if p.id() == 0 { u128::from(min) } else { 0 }));
    let v = counts.into_iter().map(|c| ring.sub(ring.mul(f, c), m)).collect();
    let v = rep3::reshare_for(p, ring, v, ReshareFor::Msb)?;
    rep3::msb_two_operand(p, &v, adder)
}

/// What a batch check reveals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Per query: whether it is unique.
    pub unique: Vec<bool>,
    /// Per query, with [`MatchConfig::reveal_matches`]: the targets it matched, ascending —
    /// database positions `0..s`, then `s + j` for query `j` of the batch (earlier queries only,
    /// and only when deduplicating). Empty lists otherwise.
    pub matches: Vec<Vec<usize>>,
}

/// The order of a batch's comparisons within each eye and rotation (the targets being the `s`
/// enrolled entries followed by the batch's queries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// `[query][target]`: the matrix products', whose rows are the queries.
    QueryTarget,
    /// `[target][query]`: the middle product's (GR), a target's queries side by side.
    TargetQuery,
}

/// From the match bits of every comparison, laid out `[eye][rotation]` then by `order`, to
/// whether each query is unique: OR over rotations, the eye rule, only entries and earlier
/// queries counted, OR over targets, reveal. With `cfg.reveal_matches` the per-target bits are
/// opened too (one more round, `nq · (s + nq)` bits). Shared by every scheme.
#[allow(clippy::too_many_arguments)]
pub(crate) fn resolve(
    p: &mut Party,
    hits: &Rep3Bits,
    rot: usize,
    nq: usize,
    s: usize,
    cfg: &MatchConfig,
    dedup: bool,
    order: Order,
) -> Result<Checked, MpcError> {
    let targets = s + nq;
    let run = nq * targets;
    // Both eyes' rotations folded in one OR tree (half its rounds): [eye][rotation][..] regrouped
    // as [rotation][eye][..], so each level's AND gates cover both eyes.
    let by_rotation = (0..rot)
        .flat_map(|k| (0..2).map(move |e| hits.slice((e * rot + k) * run, run)))
        .collect::<Result<Vec<_>, _>>()?;
    let eyes = rep3::or_tree(p, &Rep3Bits::concat(&by_rotation.iter().collect::<Vec<_>>()), 2 * run)?;
    let (left, right) = (eyes.slice(0, run)?, eyes.slice(run, run)?);
    let both = rep3::and(p, &left, &right)?;
    let entry: Rep3Bits = match cfg.rule {
        EyeRule::And => both,
        EyeRule::Or => left.xor(&right)?.xor(&both)?,
    };
    // Bit `i` is query `q`'s comparison with target `t`.
    let at = |i: usize| match order {
        Order::QueryTarget => (i / targets, i % targets),
        Order::TargetQuery => (i % nq, i / nq),
    };
    // Only database entries and (with `dedup`) *earlier* queries of the batch count.
    let counts = BitVec::from_bools(
        &(0..nq * targets).map(at).map(|(q, t)| t < s + if dedup { q } else { 0 }).collect::<Vec<_>>(),
    );
    let entry = entry.and_public(&counts)?;
    // Fold the targets: they must be the outer index.
    let dup = match order {
        Order::TargetQuery => rep3::or_tree(p, &entry, nq)?,
        Order::QueryTarget => {
            let from: Vec<usize> = (0..nq * targets).map(|i| (i % nq) * targets + i / nq).collect();
            rep3::or_tree(p, &entry.permute(&from)?, nq)?
        }
    };
    let unique = rep3::reveal_bits(p, &dup)?.to_bools().into_iter().map(|d| !d).collect();
    let matches = if cfg.reveal_matches {
        let bits = rep3::reveal_bits(p, &entry)?.to_bools();
        // In either order a query's targets come in ascending order.
        let mut m = vec![Vec::new(); nq];
        for (i, _) in bits.iter().enumerate().filter(|(_, &b)| b) {
            let (q, t) = at(i);
            m[q].push(t);
        }
        m
    } else {
        vec![Vec::new(); nq]
    };
    Ok(Checked { unique, matches })
}

/// Comparisons per chunk of the comparison phase with the ripple adder. The phase's intermediate
/// values (reshared and lifted products, bit planes, carries) take ~40 bytes per comparison and
/// party (~90 with the log-depth adder's prefix planes), so a batch of 32 queries against 10,000
/// entries (20 M comparisons) would otherwise hold ~1–2 GB at once; chunks keep that bounded and
/// let the allocator reuse the same buffers, at the cost of the phase's rounds once per chunk.
/// With `compare_chunk = "auto"` nodes on a LAN use the chunk planned on node 0's host instead
/// ([`super::plan_compare_chunk`]); this is the default where nothing is planned.
pub const COMPARE_CHUNK: usize = 1 << 20;

/// The default comparisons per chunk for `adder` (where [`Tuning::compare_chunk`] is 0):
/// [`COMPARE_CHUNK`] with the ripple adder, twice that with the log-depth one. That adder is for
/// nodes far apart, where the rounds cost more than the cache, so it takes fewer and larger
/// chunks, for ~180 MB of comparison state per node. Far-apart nodes with memory to spare gain
/// more from a larger `compare_chunk` (docs/OPERATIONS.md).
pub const fn compare_chunk(adder: Adder) -> usize {
    match adder {
        Adder::Ripple => COMPARE_CHUNK,
        Adder::LogDepth => 2 * COMPARE_CHUNK,
    }
}

/// Rounds from this long up take [`AUTO_CHUNKS`]'s larger chunks (`[iris] compare_chunk =
/// "auto"`), the ripple adder's rounds then costing more than the cache a chunk outgrows.
pub const AUTO_CHUNK_ROUNDS: [Duration; 2] = [Duration::from_millis(2), Duration::from_millis(5)];

/// The chunks of `compare_chunk = "auto"` from each of [`AUTO_CHUNK_ROUNDS`] up: 2^22 and 2^23.
pub const AUTO_CHUNKS: [usize; 2] = [1 << 22, 1 << 23];

/// Comparisons per chunk for nodes whose rounds take `round` ([`argus_mpc::Party::round_time`]):
/// below [`AUTO_CHUNK_ROUNDS`] the chunk planned on this host (`planned`, from
/// [`super::plan_compare_chunk`]; 0: none, the adder's default), else [`AUTO_CHUNKS`]'s, with
/// the ripple adder; the log-depth adder's few rounds keep its default. The steps are where the
/// larger chunks measured faster over a simulated link (docs/BENCHMARKS.md, "Iris over a
/// simulated link"); below them they do not pay, and against large databases they cost (fewer
/// pieces overlap the products). Each step holds ~40 bytes per comparison more per node.
pub fn auto_compare_chunk(round: Duration, adder: Adder, planned: usize) -> usize {
    match adder {
        Adder::LogDepth => compare_chunk(adder),
        Adder::Ripple => match AUTO_CHUNK_ROUNDS.iter().rposition(|&r| round >= r) {
            Some(step) => AUTO_CHUNKS[step],
            None if planned > 0 => planned,
            None => COMPARE_CHUNK,
        },
    }
}

/// Trips of the token [`choose_compare_chunk`] times (the median counts).
pub const ROUND_PROBES: usize = 10;

/// `compare_chunk = "auto"`: times the parties' rounds by [`ROUND_PROBES`] trips of a token
/// around them ([`Party::round_time`]), then party 0 picks from its chunk timings (`planned`,
/// [`ChunkTimes::best_for`] that round time; none: 0) and the others learn its pick; returns
/// the round time and [`auto_compare_chunk`]'s chunk for it. All three call it at the same
/// point and learn party 0's figures, so they choose alike.
pub fn choose_compare_chunk(
    p: &Party,
    adder: Adder,
    planned: Option<&ChunkTimes>,
) -> Result<(Duration, usize), MpcError> {
    let round = p.round_time(ROUND_PROBES)?;
    let mine = planned.and_then(|t| t.best_for(round)).unwrap_or(0);
    // Party 0 picks among the candidates only; anything else is a broken peer, not a chunk.
    let planned = p.value_of_party0(mine as u64)?;
    let planned = match usize::try_from(planned) {
        Ok(c) if c == 0 || CHUNK_CANDIDATES.contains(&c) => c,
        _ => return Err(MpcError::Malformed { peer: 0, reason: format!("a planned chunk of {planned} comparisons") }),
    };
    Ok((round, auto_compare_chunk(round, adder, planned)))
}

/// Comparisons per chunk the chunk planner tries ([`super::plan_compare_chunk`]).
pub const CHUNK_CANDIDATES: [usize; 5] = [1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21];

/// Comparisons every candidate chunk is timed on (the largest candidate's).
pub const CHUNK_SAMPLE: usize = 1 << 21;

/// Timed rounds over all candidates at most (the best time of each counts).
const CHUNK_ROUNDS: usize = 3;

/// What timing the comparison phase at several chunk sizes found
/// ([`IrisScheme::time_compare_chunks`](super::scheme::IrisScheme::time_compare_chunks)): each
/// chunk's best seconds for [`CHUNK_SAMPLE`] comparisons with no delay between the parties, and
/// the phase's rounds per chunk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkTimes {
    /// Per candidate chunk, its best seconds.
    pub seconds: Vec<(usize, f64)>,
    /// Rounds of one chunk's comparison phase (the same for every chunk size).
    pub rounds_per_chunk: u64,
}

impl ChunkTimes {
    /// The chunk that compares [`CHUNK_SAMPLE`] values fastest where every round also takes
    /// `round`: its measured seconds plus its chunks' rounds times `round` (smaller chunks stay
    /// in cache but run the phase's rounds more often). `None` if nothing was timed.
    pub fn best_for(&self, round: Duration) -> Option<usize> {
        let cost = |&(chunk, secs): &(usize, f64)| {
            let chunks = CHUNK_SAMPLE.div_ceil(chunk.max(1)) as f64;
            secs + chunks * self.rounds_per_chunk as f64 * round.as_secs_f64()
        };
        self.seconds.iter().min_by(|x, y| cost(x).total_cmp(&cost(y))).map(|m| m.0)
    }

    /// As a line of a plan cache: `chunk:seconds` by candidate, then `rounds:` and the rounds
    /// per chunk (what [`ChunkTimes::from_line`] reads).
    pub fn to_line(&self) -> String {
        let each: Vec<String> = self.seconds.iter().map(|(c, t)| format!("{c}:{t:e}")).collect();
        format!("{} rounds:{}", each.join(" "), self.rounds_per_chunk)
    }

    /// Reads [`ChunkTimes::to_line`]'s line; `None` unless it times exactly `candidates`, in
    /// order, with finite times.
    pub fn from_line(line: &str, candidates: &[usize]) -> Option<ChunkTimes> {
        let mut words = line.split_whitespace();
        let mut seconds = Vec::with_capacity(candidates.len());
        for &want in candidates {
            let (c, t) = words.next()?.split_once(':')?;
            let (c, t) = (c.parse::<usize>().ok()?, t.parse::<f64>().ok()?);
            if c != want || !t.is_finite() || t < 0.0 {
                return None;
            }
            seconds.push((c, t));
        }
        let rounds_per_chunk = words.next()?.strip_prefix("rounds:")?.parse().ok()?;
        words.next().is_none().then_some(ChunkTimes { seconds, rounds_per_chunk })
    }
}

/// Times the comparison phase ([`compare`] by `plan`, with `adder`) of [`CHUNK_SAMPLE`] random
/// comparisons over `ring` in chunks of each of `chunks`, run by three in-memory parties on this
/// host's threads: a warm-up at the first chunk, then rounds over all of them, interleaved,
/// while `budget` lasts (one at least, [`CHUNK_ROUNDS`] at most). Returns each chunk's best
/// seconds by party 0's clock, which decides when to stop, so all three run the same rounds,
/// and the rounds per chunk (counted in the warm-up).
pub(crate) fn time_chunks<R: Ring>(
    ring: &R,
    plan: ComparisonPlan,
    adder: Adder,
    chunks: &[usize],
    budget: Duration,
) -> Result<ChunkTimes, MpcError> {
    use argus_mpc::local::{run3, Backend};
    let start = Instant::now();
    let times = run3(Backend::Memory, argus_net::NetConfig::default(), |p| {
        // Random shares from the session's own streams (timing data: the values do not matter).
        let dots = ring.sample_vec(p.prg.next(), CHUNK_SAMPLE);
        let mls = ring.sample_vec(p.prg.next(), CHUNK_SAMPLE);
        let run = |p: &mut Party, chunk: usize| {
            in_chunks(p, &dots, &mls, chunk, |p, d, m| compare(p, ring, d.to_vec(), m.to_vec(), plan, adder))
        };
        let mut rounds_per_chunk = 0;
        if let Some(&first) = chunks.first() {
            let before = p.stats();
            run(p, first)?;
            rounds_per_chunk = (p.stats() - before).rounds / CHUNK_SAMPLE.div_ceil(first.max(1)) as u64;
        }
        let mut best = vec![f64::INFINITY; chunks.len()];
        for round in 1..=CHUNK_ROUNDS {
            for (b, &chunk) in best.iter_mut().zip(chunks) {
                let t = Instant::now();
                run(p, chunk)?;
                *b = b.min(t.elapsed().as_secs_f64());
            }
            let more = round < CHUNK_ROUNDS && start.elapsed() < budget;
            if p.value_of_party0(u64::from(more))? == 0 {
                break;
            }
        }
        Ok(ChunkTimes { seconds: chunks.iter().copied().zip(best).collect(), rounds_per_chunk })
    })?;
    Ok(times.into_iter().next().unwrap_or_default())
}

/// [`crate::protocol::scheme::IrisScheme::time_compare_chunks`] for the schemes whose
/// comparison is [`compare`] over `ring` (the replicated ones and GR's, whose products are
/// additive shares over Z_2^16): [`time_chunks`] under the plan for `len`-bit codes and `cfg`.
pub(crate) fn time_compare_chunks<R: Ring>(
    ring: &R,
    len: usize,
    cfg: &MatchConfig,
    adder: Adder,
    chunks: &[usize],
    budget: Duration,
) -> Result<ChunkTimes, MpcError> {
    let plan =
        ComparisonPlan::new(ring.modulus(), len, cfg, factor_of(cfg.mask_mode)).map_err(MpcError::InvalidParameter)?;
    time_chunks(ring, plan, adder, chunks, budget)
}

/// Runs a comparison phase `f` over chunks of at most `chunk` comparisons (the same range of
/// `dots` and `mls`) and concatenates the match bits in order.
pub(crate) fn in_chunks<E: Copy>(
    p: &mut Party,
    dots: &[E],
    mls: &[E],
    chunk: usize,
    mut f: impl FnMut(&mut Party, &[E], &[E]) -> Result<Rep3Bits, MpcError>,
) -> Result<Rep3Bits, MpcError> {
    if dots.len() != mls.len() {
        return Err(MpcError::InvalidParameter(format!("{} dot products but {} mask products", dots.len(), mls.len())));
    }
    let chunk = chunk.max(1);
    let mut hits = Vec::with_capacity(dots.len().div_ceil(chunk));
    for (d, m) in dots.chunks(chunk).zip(mls.chunks(chunk)) {
        hits.push(f(p, d, m)?);
    }
    Ok(Rep3Bits::concat(&hits.iter().collect::<Vec<_>>()))
}

/// `msb(a·ml − b·dot)` for every comparison, from additive shares of the two dot products over
/// the sharing ring `R`, by its [`ComparisonPlan`]:
/// * **NoLift** when `R` is already wide enough (Z_2^32 for 12800- and 16384-bit codes):
///   combine locally, reshare once, one MSB.
/// * **MPCLift** when `R` is Z_2^16 (mask products below 2^15): reshare both products (16 bits
///   each), lift `ml` to Z_2^(16+m) in MPC by its carry count (fused into the MSB's input by
///   [`mpclift_msb`]), lift `b·dot` for free by ConstLift (b = 2^m, Alg. 13: the terms of the
///   threshold's dyadic stand-in), combine, one MSB over the bits the values need. With the
///   terms reduced ([`reduced_terms`]) the default threshold has m = 20 and both layouts need
///   Z_2^36. The dot products run on 16-bit lanes.
///
/// The MSBs are two-operand decompositions ([`rep3::msb_of`]: `k − 1` AND gates).
pub(crate) fn compare<R: Ring>(
    p: &mut Party,
    ring: &R,
    dots: Vec<R::El>,
    mls: Vec<R::El>,
    plan: ComparisonPlan,
    adder: Adder,
) -> Result<Rep3Bits, MpcError> {
    let (a, b_bits, bits) = match plan {
        ComparisonPlan::NoLift { a, b } => {
            let (a, b) = (ring.from_i128(a), ring.from_i128(b));
            let v = mls.iter().zip(&dots).map(|(&m, &d)| ring.sub(ring.mul(a, m), ring.mul(b, d))).collect();
            let v = rep3::reshare_for(p, ring, v, ReshareFor::Msb)?;
            return rep3::msb_two_operand(p, &v, adder);
        }
        ComparisonPlan::MpcLift { a, b_bits, bits } => (a, b_bits, bits),
    };
    // `dot` only enters the MSB (through ConstLift, per component); `ml` goes through the carry
    // count first.
    let [dot, ml]: [Rep3<R>; 2] =
        rep3::reshare_parts_for(p, ring, vec![dots, mls], &[ReshareFor::Msb, ReshareFor::CarryCountThenMsb])?
            .try_into()
            .expect("one per part");
    mpclift_msb(p, &dot, &ml, a as u64, b_bits, bits, adder)
}

/// Lemma 2's terms `(a, b)` without their common power of two `2^t` (keeping `b` even), and `t`.
/// The match bit is the sign of `a·ml − b·dot`, so the decision is the same, and the comparison
/// needs `t` fewer bits: with the paper's threshold 22610/2^16 (a = 20316, b = 2^16) MPCLift's
/// MSB runs in Z_2^30, not Z_2^32 (two AND gates and two transposed planes fewer per comparison).
pub fn reduced_terms(a: i128, b: i128) -> (i128, i128, u32) {
    let t = a.trailing_zeros().min(b.trailing_zeros().saturating_sub(1));
    (a >> t, b >> t, t)
}

/// MPCLift-Z16's last two steps for replicated shares of `dot` and `ml` in Z_2^16 with
/// `0 ≤ ml < 2^15` and `a·ml − 2^m·dot` in Z_2^bits's signed range (`ComparisonPlan`),
/// `bits ≤ 16 + m`: `msb(a·ml − 2^m·dot)` in Z_2^bits (`1 ≤ m ≤ 48`), the match bit of Lemma 2 with `b = 2^m`
/// (`dot` enters only as `2^m·dot mod 2^(16+m)`, which its 16-bit shares determine). `ml` is
/// lifted by its carry count `j`, shared in Z_2^16 for `m ≤ 16` and Z_2^32 or Z_2^64 beyond
/// (`2^16·j` must be exact mod 2^(16+m)): `ml = Σ ml_i − 2^16·j`, so per component
/// `v_i = a·ml_i − 2^16·a·j_i − 2^m·dot_i` mod 2^(16+m) (ConstLift of `j` by 2^16 and of `dot`
/// by 2^m, Alg. 13), and those components go into the two-operand MSB ([`rep3::msb_of_u32`] up
/// to 32 bits, [`rep3::msb_of_u64`] beyond, with `adder`). The carry count is
/// [`rep3::carry_count_for_msb`]: its OT's receiver is the MSB's adder, so its second round
/// (giving the helper a component the MSB never reads) is skipped: 1 round and a third of an
/// element per comparison fewer than [`rep3::carry_count_small`]. Shared by the service's
/// comparison and `bench iris`'s `mpclift-Z`. Besides full sharings it takes what the service's
/// comparison passes: `dot` reshared for the MSB only ([`rep3::ReshareFor::Msb`]) and `ml` for
/// its carry count and the MSB ([`rep3::ReshareFor::CarryCountThenMsb`]).
pub fn mpclift_msb<R: Ring>(
    p: &mut Party,
    dot: &Rep3<R>,
    ml: &Rep3<R>,
    a: u64,
    m: u32,
    bits: u32,
    adder: Adder,
) -> Result<Rep3Bits, MpcError> {
    let ring = ml.ring();
    let fits = (1..=48).contains(&m) && (2..=16 + m).contains(&bits);
    if ring.modulus() != Modulus::Pow2(16) || dot.ring() != ring || dot.len() != ml.len() || !fits {
        return Err(MpcError::InvalidParameter(format!(
            "MPCLift-Z16 needs equally long Z_2^16 sharings, a ConstLift by 2^m, 1 ≤ m ≤ 48, and an MSB of at most \
             16 + m bits; got {} ({}), {} ({}), m = {m}, {bits} bits",
            dot.ring().modulus(),
            dot.len(),
            ring.modulus(),
            ml.len()
        )));
    }
    // `2^16·j` must be exact mod 2^(16+m): j in Z_2^16 up to m = 16, wider beyond.
    let lift = Lift { a, m, bits, adder };
    match m {
        0..=16 => lift.msb(p, ring, dot, ml),
        17..=32 => lift.msb(p, &Z32::new(), dot, ml),
        _ => lift.msb(p, &Z64::new(), dot, ml),
    }
}

/// One component (`a` or `b`) of the dot products, mask products and carry counts.
type Shares<'a, E, J> = (&'a [E], &'a [E], &'a [J]);

/// [`mpclift_msb`]'s public terms: `a`, `b = 2^m`, the MSB's width and adder.
struct Lift {
    a: u64,
    m: u32,
    bits: u32,
    adder: Adder,
}

impl Lift {
    /// The MSB with the carry count shared in `jring`, on 32- or 64-bit lanes by `bits`.
    fn msb<R: Ring, S: Ring>(
        &self,
        p: &mut Party,
        jring: &S,
        dot: &Rep3<R>,
        ml: &Rep3<R>,
    ) -> Result<Rep3Bits, MpcError> {
        let j = rep3::carry_count_for_msb(p, ml, jring)?;
        let (k, ring) = (self.bits as usize, ml.ring());
        let a_of = (&dot.a[..], &ml.a[..], &j.a[..]);
        let b_of = (&dot.b[..], &ml.b[..], &j.b[..]);
        if self.bits <= 32 {
            let (mut ca, mut cb) = (vec![0u32; ml.len()], vec![0u32; ml.len()]);
            self.components_into(ring, jring, a_of, 0, &mut ca, |v| v as u32);
            self.components_into(ring, jring, b_of, 0, &mut cb, |v| v as u32);
            rep3::msb_of_u32(p, k, &ca, &cb, self.adder)
        } else {
            // A block at a time into the MSB's bit planes: no vector of all the components.
            rep3::msb_of_u64_with(p, ml.len(), k, self.adder, |at, prev, out| {
                self.components_into(ring, jring, if prev { b_of } else { a_of }, at, out, |v| v)
            })
        }
    }

    /// The components `a·ml_i − 2^16·a·j_i − 2^m·dot_i` (mod 2^64, narrowed by `narrow`) of
    /// values `at..at + out.len()`, from one component (`a` or `b` of the replicated sharing) of
    /// `dot`, `ml` and `j`.
    fn components_into<R: Ring, S: Ring, W>(
        &self,
        ring: &R,
        jring: &S,
        (dot, ml, j): Shares<'_, R::El, S::El>,
        at: usize,
        out: &mut [W],
        narrow: impl Fn(u64) -> W,
    ) {
        let (a, m, r) = (self.a, self.m, at..at + out.len());
        let w = |e: R::El| ring.to_u128(e) as u64;
        let wj = |e: S::El| jring.to_u128(e) as u64;
        let values = ml[r.clone()].iter().zip(&j[r.clone()]).zip(&dot[r]);
        for (o, ((&ml, &j), &d)) in out.iter_mut().zip(values) {
            *o = narrow(a.wrapping_mul(w(ml)).wrapping_sub(a.wrapping_mul(wj(j)) << 16).wrapping_sub(w(d) << m));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use argus_math::Z16;
    use argus_mpc::local::{run3, Backend};
    use argus_net::NetConfig;

    /// `"auto"` takes the planned chunk (or without one the default) on one machine or a LAN,
    /// and 2^22 from 2 ms rounds and 2^23 from 5 ms with the ripple adder; the log-depth adder
    /// keeps its default.
    #[test]
    fn auto_chunks_grow_with_the_round_time() {
        let ms = |m: f64| Duration::from_secs_f64(m / 1000.0);
        for planned in [0, 1 << 19] {
            let ripple = |m| auto_compare_chunk(ms(m), Adder::Ripple, planned);
            let local = if planned == 0 { COMPARE_CHUNK } else { planned };
            assert_eq!([ripple(0.0), ripple(0.05), ripple(1.999)], [local; 3]);
            assert_eq!([ripple(2.0), ripple(2.7), ripple(4.99)], [1 << 22; 3]);
            assert_eq!([ripple(5.0), ripple(20.0), ripple(1000.0)], [1 << 23; 3]);
            for m in [0.0, 5.0, 50.0] {
                assert_eq!(auto_compare_chunk(ms(m), Adder::LogDepth, planned), compare_chunk(Adder::LogDepth));
            }
        }
    }

    /// Every party takes party 0's planned chunk (its own is ignored); a value that is no
    /// candidate is refused as malformed.
    #[test]
    fn the_planned_chunk_is_party_0s_and_a_candidate() {
        let times = |best: usize| ChunkTimes {
            seconds: CHUNK_CANDIDATES.iter().map(|&c| (c, if c == best { 0.05 } else { 0.06 })).collect(),
            rounds_per_chunk: 0,
        };
        let run = |planned: [Option<ChunkTimes>; 3]| {
            run3(Backend::Memory, NetConfig::default(), |p| {
                choose_compare_chunk(p, Adder::Ripple, planned[p.id()].as_ref())
            })
        };
        for (planned, want) in
            [([Some(times(1 << 18)), None, Some(times(1 << 21))], 1 << 18), ([None, Some(times(1 << 18)), None], 0)]
        {
            let out = run(planned).unwrap();
            for &(round, chunk) in &out {
                // The round time decides between the plan and the far-apart steps.
                assert_eq!(chunk, auto_compare_chunk(round, Adder::Ripple, want));
            }
        }
        let bad = ChunkTimes { seconds: vec![(12345, 0.01)], rounds_per_chunk: 0 };
        let e = run([Some(bad), None, None]).unwrap_err().to_string();
        assert!(e.contains("a planned chunk of 12345 comparisons"), "{e}");
    }

    /// The planned chunk weighs the rounds: with none the fastest measured wins; as rounds get
    /// dearer, larger chunks (fewer rounds) do. The cache line reads back, and only for the
    /// same candidates.
    #[test]
    fn chunk_times_weigh_rounds_and_read_back() {
        let t = ChunkTimes {
            seconds: vec![(1 << 17, 0.065), (1 << 18, 0.058), (1 << 19, 0.060), (1 << 20, 0.068), (1 << 21, 0.080)],
            rounds_per_chunk: 32,
        };
        let ms = |m: f64| Duration::from_secs_f64(m / 1000.0);
        assert_eq!(t.best_for(Duration::ZERO), Some(1 << 18));
        // 0.01 ms rounds: 2^18 60.6 ms against 2^19's 61.3; 0.1 ms: 2^19 72.8 against 2^20's
        // 74.4; 1 ms: 2^21 112 against 2^20's 132.
        assert_eq!(t.best_for(ms(0.01)), Some(1 << 18));
        assert_eq!(t.best_for(ms(0.1)), Some(1 << 19));
        assert_eq!(t.best_for(ms(1.0)), Some(1 << 21));
        assert_eq!(ChunkTimes::default().best_for(Duration::ZERO), None);
        let line = t.to_line();
        assert_eq!(ChunkTimes::from_line(&line, &t.seconds.iter().map(|s| s.0).collect::<Vec<_>>()), Some(t.clone()));
        assert_eq!(ChunkTimes::from_line(&line, &CHUNK_CANDIDATES), Some(t.clone()));
        assert_eq!(ChunkTimes::from_line(&line, &CHUNK_CANDIDATES[1..]), None);
        for bad in ["", "131072", "rounds:3", &line.replace("rounds:32", "rounds:x"), &format!("{line} more")] {
            assert_eq!(ChunkTimes::from_line(bad, &CHUNK_CANDIDATES), None, "{bad}");
        }
    }

    /// Chunking is invisible: the MPCLift-Z16 comparison of random shares over chunks of 7 (not
    /// dividing the length) opens to the same bits as one run, and to the plaintext MSB.
    #[test]
    fn chunks_give_the_same_match_bits() {
        let (ring, n, len) = (Z16::new(), 50usize, 12800);
        let cfg = MatchConfig::default();
        let out = run3(Backend::Memory, NetConfig::default(), |p| {
            // Additive shares: party 0 holds the values, the others zeros (reshared inside).
            let dots: Vec<u16> =
                (0..n).map(|i| if p.id() == 0 { (i as u16).wrapping_mul(977) % 1000 } else { 0 }).collect();
            let mls: Vec<u16> = (0..n).map(|i| if p.id() == 0 { 2000 + (i as u16 * 37) % 500 } else { 0 }).collect();
            let run = |p: &mut Party, chunk| {
                let bits = in_chunks(p, &dots, &mls, chunk, |p, d, m| {
                    let plan = ComparisonPlan::new(ring.modulus(), len, &cfg, 1).map_err(MpcError::InvalidParameter)?;
                    compare(p, &ring, d.to_vec(), m.to_vec(), plan, Adder::Ripple)
                })?;
                rep3::reveal_bits(p, &bits)
            };
            Ok((run(p, n)?, run(p, 7)?))
        })
        .unwrap();
        let (a, b) = (compare_plain(n, &cfg), &out[0]);
        for (whole, chunked) in &out {
            assert_eq!(whole, chunked);
        }
        assert_eq!(b.0.to_bools(), a);
    }

    /// `msb(a·ml − b·dot)` in plaintext for the values of the test above.
    fn compare_plain(n: usize, cfg: &MatchConfig) -> Vec<bool> {
        let (a, b) = crate::mpc_comparison_terms(cfg.threshold);
        (0..n)
            .map(|i| {
                let dot = ((i as u16).wrapping_mul(977) % 1000) as i128;
                let ml = (2000 + (i as u16 * 37) % 500) as i128;
                a * ml - b * dot < 0
            })
            .collect()
    }

    /// `resolve` against its plaintext twin, for both eye rules, with and without deduplication,
    /// and in the rounds of its circuit: one OR tree over both eyes' rotations, the eye rule's AND,
    /// the OR tree over targets, the reveal.
    #[test]
    fn resolve_matches_the_plaintext_rule_in_its_rounds() {
        use rand::{rngs::StdRng, Rng, SeedableRng};
        let (rot, nq, s) = (31usize, 3usize, 5usize);
        let targets = s + nq;
        let run = nq * targets;
        let mut rng = StdRng::seed_from_u64(7);
        // [eye][rotation][target][query], sparse enough that both outcomes occur.
        let plain: Vec<bool> = (0..2 * rot * run).map(|_| rng.gen_ratio(1, 100)).collect();
        let shares = rep3::share_bits_from_client(&BitVec::from_bools(&plain), &mut rng);
        let clog2 = |n: usize| n.next_power_of_two().trailing_zeros() as u64;
        let mut seen = [false; 2];
        for rule in [EyeRule::And, EyeRule::Or] {
            for dedup in [false, true] {
                let cfg = MatchConfig { rule, ..MatchConfig::default() };
                let out = run3(Backend::Memory, NetConfig::default(), |p| {
                    let before = p.stats();
                    let checked = resolve(p, &shares[p.id()], rot, nq, s, &cfg, dedup, Order::TargetQuery)?;
                    Ok((checked.unique, (p.stats() - before).rounds))
                })
                .unwrap();
                let expected: Vec<bool> = (0..nq)
                    .map(|q| {
                        let eye = |e: usize, t: usize| (0..rot).any(|k| plain[((e * rot + k) * targets + t) * nq + q]);
                        let hit = |t: usize| match rule {
                            EyeRule::And => eye(0, t) && eye(1, t),
                            EyeRule::Or => eye(0, t) || eye(1, t),
                        };
                        !(0..s + if dedup { q } else { 0 }).any(hit)
                    })
                    .collect();
                for (unique, _) in &out {
                    assert_eq!(unique, &expected, "{rule:?}, dedup {dedup}");
                }
                // The busiest party's count (one whose set-up ended on a send counts its first
                // round there).
                let rounds = out.iter().map(|(_, r)| *r).max();
                assert_eq!(rounds, Some(clog2(rot) + 1 + clog2(targets) + 1));
                expected.iter().for_each(|&u| seen[u as usize] = true);
            }
        }
        assert_eq!(seen, [true, true], "both outcomes drawn");
    }
}

#[cfg(test)]
mod reduced_terms_tests {
    use super::*;
    use crate::Threshold;
    use argus_math::Z16;
    use argus_mpc::local::{run3, Backend};
    use argus_net::NetConfig;

    #[test]
    fn reduced_terms_keep_the_ratio_and_an_even_b() {
        assert_eq!(reduced_terms(20316, 1 << 16), (5079, 1 << 14, 2));
        assert_eq!(reduced_terms(20317, 1 << 16), (20317, 1 << 16, 0));
        assert_eq!(reduced_terms(0, 1 << 16), (0, 2, 15));
        assert_eq!(reduced_terms(-4, 1 << 16), (-1, 1 << 14, 2));
    }

    /// MPCLift with the reduced terms decides exactly as the plaintext rule `a·ml − b·dot < 0`
    /// of the threshold's exact terms, at and beside the decision boundary, for the default
    /// 69/200 (its dyadic stand-in 723517/2^21: a 36-bit MSB) and dyadic thresholds whose terms
    /// share 2^1, 2^2 (the paper's 22610/2^16: a 30-bit MSB), 2^3 and 2^15 (`a = 0` at 0.5;
    /// `a = b` at 0).
    #[test]
    fn mpclift_decides_like_the_plaintext_rule_at_the_boundary() {
        let len = 12800usize;
        let dyadic = |num| Threshold::new(num, 16).unwrap();
        for th in [
            Threshold::DEFAULT,
            dyadic(22610),
            dyadic(22611),
            dyadic(22612),
            dyadic(1 << 15),
            dyadic(1 << 14),
            dyadic(0),
        ] {
            let cfg = MatchConfig { threshold: th, ..MatchConfig::default() };
            let (a, b) = crate::mpc_comparison_terms(cfg.threshold);
            // (ml, dot) with |dot| ≤ ml ≤ len: the boundary dot = a·ml / b and its neighbours.
            let mut pairs = Vec::new();
            for ml in [0i128, 1, 2, 3, 100, 200, 6399, 6400, 12629, 12799, 12800] {
                let edge = (a * ml).div_euclid(b);
                for dot in [edge - 1, edge, edge + 1, -ml, ml, 0] {
                    if dot.abs() <= ml {
                        pairs.push((ml, dot));
                    }
                }
            }
            let n = pairs.len();
            let want: Vec<bool> = pairs.iter().map(|&(ml, dot)| a * ml - b * dot < 0).collect();
            for adder in [Adder::Ripple, Adder::LogDepth] {
                let out = run3(Backend::Memory, NetConfig::default(), |p| {
                    let (dots, mls): (Vec<u16>, Vec<u16>) = pairs
                        .iter()
                        .map(|&(ml, dot)| if p.id() == 0 { (dot as i16 as u16, ml as u16) } else { (0, 0) })
                        .unzip();
                    let before = p.stats();
                    let plan =
                        ComparisonPlan::new(Z16::new().modulus(), len, &cfg, 1).map_err(MpcError::InvalidParameter)?;
                    let bits = compare(p, &Z16::new(), dots, mls, plan, adder)?;
                    let rounds = (p.stats() - before).rounds;
                    Ok((rep3::reveal_bits(p, &bits)?, rounds))
                })
                .unwrap();
                for (bits, _) in &out {
                    assert_eq!(bits.len(), n);
                    assert_eq!(bits.to_bools(), want, "threshold {th}, {adder:?}");
                }
                // The reshare, the carry count's OT and the sharing of the MSB's operand, then
                // k − 1 ripple rounds or Kogge-Stone's 1 + ⌈log2(k − 1)⌉.
                let k = match th {
                    _ if th == Threshold::DEFAULT => Some(36),
                    _ if th == dyadic(22610) => Some(30),
                    _ => None,
                };
                if let Some(k) = k {
                    let rounds = out.iter().map(|(_, r)| *r).max();
                    let adder_rounds =
                        if adder == Adder::Ripple { k - 1 } else { 1 + (k as u32 - 2).ilog2() as u64 + 1 };
                    assert_eq!(rounds, Some(3 + adder_rounds), "{th}, {adder:?}");
                }
            }
        }
    }
}
