//! Cross-correlations at many lags mod 2^16 — every rotation of every query against every
//! database row — by Karatsuba's transposed algorithm (the "middle product", Hanrot, Quercia and
//! Zimmermann 2004), on top of the matrix-product kernel.
//!
//! A signal `a` (one query, `n + L − 1` positions) against taps `b` (one database row, `n`
//! positions) at lags `0..L` is `y_ℓ = Σ_c ⟨a[c + ℓ], b[c]⟩`, each position a vector of `width`
//! values. Done directly that is `L · n · width` multiplies per pair. For two lags and two taps,
//!
//! ```text
//! y_0 = a_0 b_0 + a_1 b_1 = m1 + m2      m1 = a_1 (b_0 + b_1)
//! y_1 = a_1 b_0 + a_2 b_1 = m1 + m3      m2 = (a_0 − a_1) b_0     m3 = (a_2 − a_1) b_1
//! ```
//!
//! three multiplies instead of four, with no division, so it is exact in any ring. Applied to
//! even/odd lags and taps, one level turns the problem into three of half the lags and half the
//! taps: taps `S = b_even + b_odd`, `E = b_even`, `O = b_odd`; signals `a_odd`, `a_even − a_odd`
//! and `a_even(+1) − a_odd`; then `y_{2s} = P_S[s] + P_E[s]` and `y_{2s+1} = P_S[s] + P_O[s]`.
//! `levels` levels cost `(3/4)^levels` of the multiplies (0.42 at 3 levels, 0.32 at 4, 0.24 at
//! 5) and leave `3^levels` small matrix products: the backend's kernel with overlapping query
//! windows, or at the AVX-512 VNNI and AVX2 levels the packed-queries kernels of `packed.rs`. The taps are
//! transformed block by block of database rows, in cache, so the database keeps its plain
//! layout; odd tap counts are padded with a zero tap, lags are padded to a multiple of
//! `2^levels` and the extra ones dropped. On the packed path the taps are walked depth first
//! and only the S children are written (E and O are strided views of their parent; the last
//! level's S is summed by the kernel as it reads), so the transform costs little next to the
//! products; each node combines its children's results as soon as they are done, so only the
//! current path's results are live.

use super::dispatch::Kernels;

/// The shape of a many-lag correlation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Correlation {
    /// Tap positions per database row (for iris codes: angular columns).
    pub positions: usize,
    /// Values per position (an angular column's cells), summed in each position's inner product.
    pub width: usize,
    /// Lags `0..lags` (rotations).
    pub lags: usize,
}

impl Correlation {
    /// Positions of one signal: `positions + lags − 1`.
    pub fn signal_positions(&self) -> usize {
        (self.positions + self.lags).saturating_sub(1)
    }

    /// Values of one signal.
    pub fn signal_len(&self) -> usize {
        self.signal_positions() * self.width
    }

    /// Values of one database row.
    pub fn row_len(&self) -> usize {
        self.positions * self.width
    }

    /// The levels [`super::correlate_u16`] uses when it is not told and nothing was planned, on
    /// this CPU: see [`Correlation::default_levels_at`].
    pub fn default_levels(&self) -> usize {
        self.default_levels_at(super::detected())
    }

    /// The unplanned levels at kernel level `isa` (the planner's first guess,
    /// [`super::plan_correlation`]): as many as halve the lags while every leaf product keeps
    /// enough tap positions — 7 with the packed kernels (AVX-512 VNNI, AVX2), 16 with the row
    /// kernels, whose horizontal sum per dot product weighs on short products.
    pub fn default_levels_at(&self, isa: super::Isa) -> usize {
        let min = if Packing::of(isa).is_some() { 7 } else { 16 };
        self.levels_while(min)
    }

    /// Halvings of the lags while the lags are at least 2 and every leaf keeps `min` tap
    /// positions (at most [`MAX_LEVELS`]).
    pub(crate) fn levels_while(&self, min: usize) -> usize {
        let mut levels = 0;
        let (mut n, mut lags) = (self.positions, self.lags);
        while lags >= 2 && n.div_ceil(2) >= min && levels < MAX_LEVELS {
            (n, lags) = (n.div_ceil(2), lags.div_ceil(2));
            levels += 1;
        }
        levels
    }
}

/// Most levels accepted (3^8 leaf products is far past any saving).
pub const MAX_LEVELS: usize = 8;

/// Database rows per block on the row kernels when nothing was planned: their leaf taps
/// (`(3/2)^levels` of the rows' size) stay in cache while the leaf products read them. A
/// multiple of the AVX-512 tile's 6 rows (the kernel pads a partial panel by repeating rows).
pub(crate) const BLOCK_ROWS: usize = 24;

/// Packed leaf signals up to this size are expected to stay in the last-level cache between
/// blocks of database rows (the unplanned guess; the planner measures block sizes).
const SIGNALS_IN_CACHE: usize = 8 << 20;

/// Database rows per block on the packed path when nothing was planned. Every block reads all
/// the leaves' packed signals, so small blocks pay off only while those stay in the last-level
/// cache: then one tile's rows (8 when the leaves' query windows pair up, 16 for a lone
/// window's 16-row tile; AVX2's tile reads a window once per 4 rows, so 32), else 128, to read
/// them from memory once per 128 rows.
#[cfg(target_arch = "x86_64")]
pub(crate) fn packed_block_rows(plan: &Plan, packing: Packing) -> usize {
    let windows = plan.nq.div_ceil(super::packed::GROUP) * plan.l[plan.levels()];
    if plan.packed_signal_bytes() > SIGNALS_IN_CACHE {
        128
    } else if packing == Packing::Avx2 {
        32
    } else if windows.is_multiple_of(2) {
        8
    } else {
        16
    }
}

/// [`packed_block_rows`] where packed kernels exist, else `fallback`.
pub(crate) fn packed_block_rows_or(plan: &Plan, packing: Packing, fallback: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let _ = fallback;
        packed_block_rows(plan, packing)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (plan, packing);
        fallback
    }
}

/// Sizes at every level, root (0) to leaves (`levels`).
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    width: usize,
    nq: usize,
    lags: usize,
    /// Tap positions at each level (an odd count is padded by one zero tap before halving).
    n: Vec<usize>,
    /// Lags at each level (the root's padded to a multiple of 2^levels).
    l: Vec<usize>,
}

impl Plan {
    pub(crate) fn new(shape: Correlation, nq: usize, levels: usize) -> Plan {
        let lags0 = shape.lags.next_multiple_of(1 << levels);
        let (mut n, mut l) = (vec![shape.positions], vec![lags0]);
        for _ in 0..levels {
            n.push(n.last().expect("root").div_ceil(2));
            l.push(l.last().expect("root") / 2);
        }
        Plan { width: shape.width, nq, lags: shape.lags, n, l }
    }

    /// Query signals.
    pub(crate) fn queries(&self) -> usize {
        self.nq
    }

    /// Bytes of every leaf's packed query signals (what each block of database rows reads).
    #[cfg(target_arch = "x86_64")]
    fn packed_signal_bytes(&self) -> usize {
        let leaf = super::packed::packed_len(self.nq, self.sig_positions(self.levels()), self.width);
        2 * self.leaves() * leaf
    }

    fn levels(&self) -> usize {
        self.n.len() - 1
    }

    fn leaves(&self) -> usize {
        3usize.pow(self.levels() as u32)
    }

    /// Positions of one signal at level `i`.
    fn sig_positions(&self, i: usize) -> usize {
        self.n[i] + self.l[i] - 1
    }

    /// Positions a level-`i` signal is held in: its own, zero padded to the `2·child + 1` its
    /// split reads.
    fn held_positions(&self, i: usize) -> usize {
        let own = self.sig_positions(i);
        if i < self.levels() {
            own.max(2 * self.sig_positions(i + 1) + 1)
        } else {
            own
        }
    }

    /// Values of one signal at level `i`.
    fn sig_len(&self, i: usize) -> usize {
        self.sig_positions(i) * self.width
    }

    /// Values of one tap row at level `i`.
    fn tap_len(&self, i: usize) -> usize {
        self.n[i] * self.width
    }
}

/// Every query's leaf signals, by the signal transform applied depth first to `roots`: `units`
/// root signals (one query each, or [`super::packed::GROUP`] queries packed side by side) of
/// `block` values per position, each held in [`Plan::held_positions`]`(0)` positions. Returns
/// `leaves × units` leaf signals of `sig_positions(levels)` positions, leaf-major; leaf `f`'s
/// path from the root is `f` in base 3, most significant digit first (S, E, O). The transform
/// is the same for every value of a position, so it runs on packed queries as on plain ones.
fn leaf_signals(plan: &Plan, block: usize, roots: &[u16]) -> Vec<u16> {
    let levels = plan.levels();
    let (root_len, leaf_len) = (plan.held_positions(0) * block, plan.sig_positions(levels) * block);
    let units = roots.len() / root_len;
    let mut out = vec![0u16; plan.leaves() * units * leaf_len];
    // One zeroed buffer per level below the root; a child writes only its own positions, so
    // the padding its split reads stays zero.
    let mut bufs: Vec<Vec<u16>> = (1..=levels).map(|i| vec![0; plan.held_positions(i) * block]).collect();
    for (u, root) in roots.chunks_exact(root_len).enumerate() {
        let place = &mut |f: usize, leaf: &[u16]| out[(f * units + u) * leaf_len..][..leaf_len].copy_from_slice(leaf);
        split_signals(plan, block, root, 0, 0, &mut bufs, place);
    }
    out
}

/// The leaves below signal `node` (leaf index prefix `f`, at `level`), depth first: its S, E
/// and O children (`a_odd`, `a_even − a_odd`, `a_even(+1) − a_odd`) one after the other in
/// `bufs[0]`, each split further before the next is made.
fn split_signals(
    plan: &Plan,
    block: usize,
    node: &[u16],
    level: usize,
    f: usize,
    bufs: &mut [Vec<u16>],
    place: &mut impl FnMut(usize, &[u16]),
) {
    if level == plan.levels() {
        return place(f, &node[..plan.sig_positions(level) * block]);
    }
    let (child, deeper) = bufs.split_first_mut().expect("a buffer per level");
    let positions = plan.sig_positions(level + 1);
    for kind in 0..3 {
        for (j, out) in child[..positions * block].chunks_exact_mut(block).enumerate() {
            let at = |c: usize| &node[c * block..][..block];
            let (even, odd, next) = (at(2 * j), at(2 * j + 1), at(2 * j + 2));
            match kind {
                0 => out.copy_from_slice(odd),
                1 => out.iter_mut().zip(even).zip(odd).for_each(|((o, &e), &d)| *o = e.wrapping_sub(d)),
                _ => out.iter_mut().zip(next).zip(odd).for_each(|((o, &x), &d)| *o = x.wrapping_sub(d)),
            }
        }
        split_signals(plan, block, child, level + 1, 3 * f + kind, deeper, place);
    }
}

/// One level of the tap transform for `rows` rows: node after node of level `i` in `src`
/// (`nodes × rows × tap_len(i)`), children S, E, O after each other in `dst` (every value of
/// `dst` is written, so it is only grown, never cleared).
#[inline(always)]
fn split_taps(plan: &Plan, i: usize, rows: usize, src: &[u16], dst: &mut Vec<u16>) {
    let (w, n, half) = (plan.width, plan.n[i], plan.n[i + 1]);
    let child = rows * half * w;
    let nodes = src.len() / (rows * n * w);
    grow(dst, 3 * nodes * child);
    for (node, out) in src.chunks_exact(rows * n * w).zip(dst.chunks_exact_mut(3 * child)) {
        let (s, rest) = out.split_at_mut(child);
        let (e, o) = rest.split_at_mut(child);
        for (((row, s), e), o) in node
            .chunks_exact(n * w)
            .zip(s.chunks_exact_mut(half * w))
            .zip(e.chunks_exact_mut(half * w))
            .zip(o.chunks_exact_mut(half * w))
        {
            // Whole pairs of positions in one pass; an odd count's last tap pairs with a zero.
            let pairs = n / 2;
            let (row_pairs, last) = row.split_at(2 * pairs * w);
            for (((pair, s), e), o) in row_pairs
                .chunks_exact(2 * w)
                .zip(s.chunks_exact_mut(w))
                .zip(e.chunks_exact_mut(w))
                .zip(o.chunks_exact_mut(w))
            {
                let (even, odd) = pair.split_at(w);
                for t in 0..w {
                    let (x, y) = (even[t], odd[t]);
                    e[t] = x;
                    o[t] = y;
                    s[t] = x.wrapping_add(y);
                }
            }
            if !last.is_empty() {
                s[pairs * w..].copy_from_slice(last);
                e[pairs * w..].copy_from_slice(last);
                o[pairs * w..].fill(0);
            }
        }
    }
}

/// Makes `v` at least `n` long. The buffers are reused for levels of different sizes; growing
/// only (never truncating) keeps them from being zero-filled again block after block.
#[inline(always)]
fn grow(v: &mut Vec<u16>, n: usize) {
    if v.len() < n {
        v.resize(n, 0);
    }
}

/// Per-thread buffers of [`correlate_part`], reused across blocks.
#[derive(Default)]
struct Scratch {
    /// The taps' levels: two ping-pong buffers for the backends' leaves; for the packed ones,
    /// the S children materialised on the current path down the tree (one per level).
    taps: Vec<Vec<u16>>,
    /// The leaf results and the levels above them (ping-pong), or on the packed path the root's.
    outs: [Vec<u16>; 2],
    /// On the packed path, per level, the three children's results of the node being combined.
    nodes: Vec<Vec<u16>>,
}

/// A packed leaf kernel (`packed.rs`): the leaf signals packed 16 queries side by side, so
/// that one multiply-accumulate serves many dot products with no horizontal sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Packing {
    /// AVX-512 VNNI: `vpdpwssd`.
    Vnni,
    /// AVX2: `vpmaddwd` + `vpaddd`.
    Avx2,
}

impl Packing {
    /// The unplanned packed kernel of kernel level `isa` (for even widths): AVX-512 VNNI's, or
    /// AVX2's at the AVX2 level; the AVX-512 level without VNNI and AMX keep their row kernels.
    pub(crate) fn of(isa: super::Isa) -> Option<Packing> {
        if !cfg!(target_arch = "x86_64") {
            return None;
        }
        match isa {
            super::Isa::Avx512Vnni => Some(Packing::Vnni),
            super::Isa::Avx2 => Some(Packing::Avx2),
            _ => None,
        }
    }

    /// The kernel level whose instructions the packed kernel needs.
    pub fn isa(self) -> super::Isa {
        match self {
            Packing::Vnni => super::Isa::Avx512Vnni,
            Packing::Avx2 => super::Isa::Avx2,
        }
    }

    /// Its name in a [`super::CorrelationPath`]: `vnni` or `avx2`.
    pub fn name(self) -> &'static str {
        match self {
            Packing::Vnni => "vnni",
            Packing::Avx2 => "avx2",
        }
    }
}

/// The query side of the leaf products, made once per correlation: each leaf's query rows as
/// windows of its signals (`Rows`), or the leaf signals packed 16 queries side by side for a
/// kernel of `packed.rs` (`Packed`), whose multiply-accumulates serve many dot products at once
/// with no horizontal sums — what the short leaf products need. AMX keeps its own tile kernel.
pub(crate) enum LeafQueries {
    /// `leaves × nq` signals of `sig_len(levels)` values, leaf-major.
    Rows(Vec<u16>),
    /// Per leaf, [`super::packed::packed_len`] values, for the kernel named.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Packed(Vec<u16>, Packing),
}

impl LeafQueries {
    /// The query side for leaf products on a row kernel (`packing` `None`), or on `packing`'s
    /// packed kernel (which the caller checked the CPU has, for an even width).
    pub(crate) fn new(plan: &Plan, signals: &[u16], sig_len0: usize, packing: Option<Packing>) -> LeafQueries {
        let (width, held) = (plan.width, plan.held_positions(0));
        #[cfg(target_arch = "x86_64")]
        if let Some(packing) = packing {
            use super::packed::{pack_signals, GROUP};
            let mut roots = Vec::with_capacity(plan.nq.div_ceil(GROUP) * held * width * GROUP);
            for group in signals.chunks(GROUP * sig_len0) {
                let start = roots.len();
                pack_signals(group, group.len() / sig_len0, sig_len0 / width, width, &mut roots);
                roots.resize(start + held * width * GROUP, 0);
            }
            return LeafQueries::Packed(leaf_signals(plan, width * GROUP, &roots), packing);
        }
        let _ = packing;
        let mut roots = Vec::with_capacity(plan.nq * held * width);
        for s in signals.chunks_exact(sig_len0) {
            roots.extend_from_slice(s);
            roots.resize(roots.len() + held * width - sig_len0, 0);
        }
        LeafQueries::Rows(leaf_signals(plan, width, &roots))
    }
}

impl Plan {
    /// Where query row (λ, q) of a leaf product starts in its leaf's signals: the window of lag
    /// λ in query q's leaf signal.
    fn leaf_rows(&self) -> Vec<usize> {
        let (lags, sig) = (self.l[self.levels()], self.sig_len(self.levels()));
        (0..lags).flat_map(|lag| (0..self.nq).map(move |q| q * sig + lag * self.width)).collect()
    }

    /// The shape of a packed leaf product.
    #[cfg(target_arch = "x86_64")]
    fn leaf_shape(&self) -> super::packed::LeafShape {
        let i = self.levels();
        super::packed::LeafShape {
            nq: self.nq,
            lags: self.l[i],
            positions: self.n[i],
            signal_positions: self.n[i] + self.l[i] - 1,
            width: self.width,
        }
    }
}

/// The correlation of every query against the rows of `b` (a part of the database), into
/// `out` (`[lag][row][q]`, as [`super::correlate_u16`] writes it), `block_rows` database rows
/// at a time.
///
/// Per block of database rows: the taps down to the leaves, one product per leaf, the leaves'
/// results up to the root. The results of a node are `[lag][slab]`, `slab = nq · rows`: within
/// it `[q][row]` as the backend's products write them, `[row][q]` as the packed kernel does.
pub(crate) fn correlate_part(
    k: &dyn Kernels,
    plan: &Plan,
    queries: &LeafQueries,
    block_rows: usize,
    b: &[u16],
    out: &mut [u16],
) {
    // SAFETY (both): `Packed` is made only at a level whose instruction set the CPU has.
    #[cfg(target_arch = "x86_64")]
    match queries {
        LeafQueries::Packed(_, Packing::Vnni) => {
            return unsafe { correlate_part_avx512(k, plan, queries, block_rows, b, out) }
        }
        LeafQueries::Packed(_, Packing::Avx2) => {
            return unsafe { correlate_part_avx2(k, plan, queries, block_rows, b, out) }
        }
        LeafQueries::Rows(_) => {}
    }
    correlate_part_body(k, plan, queries, block_rows, b, out)
}

/// [`correlate_part_body`] compiled for AVX-512: its transforms and sums are plain loops, which
/// the compiler then vectorises 32 values at a time instead of 8.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
unsafe fn correlate_part_avx512(
    k: &dyn Kernels,
    plan: &Plan,
    queries: &LeafQueries,
    block_rows: usize,
    b: &[u16],
    out: &mut [u16],
) {
    correlate_part_body(k, plan, queries, block_rows, b, out)
}

/// [`correlate_part_body`] compiled for AVX2 (16 values at a time).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn correlate_part_avx2(
    k: &dyn Kernels,
    plan: &Plan,
    queries: &LeafQueries,
    block_rows: usize,
    b: &[u16],
    out: &mut [u16],
) {
    correlate_part_body(k, plan, queries, block_rows, b, out)
}

#[inline(always)]
fn correlate_part_body(
    k: &dyn Kernels,
    plan: &Plan,
    queries: &LeafQueries,
    block_rows: usize,
    b: &[u16],
    out: &mut [u16],
) {
    let levels = plan.levels();
    let row_len = plan.tap_len(0);
    let rows_b = b.len() / row_len;
    let packed = matches!(queries, LeafQueries::Packed(..));
    let mut sc =
        Scratch { taps: vec![Vec::new(); levels.max(2)], nodes: vec![Vec::new(); levels], ..Scratch::default() };
    let block_rows = block_rows.max(1);
    for j0 in (0..rows_b).step_by(block_rows) {
        let rows = block_rows.min(rows_b - j0);
        let block = &b[j0 * row_len..(j0 + rows) * row_len];
        let slab = plan.nq * rows;
        let root = match queries {
            LeafQueries::Rows(sigs) => {
                let n = plan.leaves() * plan.l[levels] * slab;
                grow(&mut sc.outs[0], n);
                rows_leaves(k, plan, sigs, block, rows, &mut sc.taps, &mut sc.outs[0][..n]);
                up_sweep(plan, &mut sc.outs, slab)
            }
            #[cfg(target_arch = "x86_64")]
            LeafQueries::Packed(ap, packing) => {
                let root = super::packed::TapView {
                    data: block,
                    rows,
                    row_stride: row_len,
                    pos_stride: plan.width,
                    positions: plan.n[0],
                };
                let y = &mut sc.outs[0];
                grow(y, plan.l[0] * slab);
                let y = &mut y[..plan.l[0] * slab];
                let tree = PackedTree { plan, ap };
                let (bufs, nodes) = (&mut sc.taps[..], &mut sc.nodes[..]);
                // SAFETY: `Packed` is made only at a level whose instruction set the CPU has.
                unsafe {
                    match packing {
                        Packing::Vnni => super::packed::Vnni::node(&tree, root, 0, 0, bufs, nodes, y),
                        Packing::Avx2 => super::packed::Avx2::node(&tree, root, 0, 0, bufs, nodes, y),
                    }
                }
                &*y
            }
            #[cfg(not(target_arch = "x86_64"))]
            LeafQueries::Packed(..) => unreachable!("packed leaves are made on x86-64 only"),
        };
        // The root's lags that were asked for, into the part's rows j0..j0 + rows of each lag.
        for (lag, y) in root.chunks_exact(slab).take(plan.lags).enumerate() {
            let o = &mut out[(lag * rows_b + j0) * plan.nq..][..slab];
            if packed {
                o.copy_from_slice(y); // already [row][q]
            } else {
                for (q, yq) in y.chunks_exact(rows).enumerate() {
                    for (r, &v) in yq.iter().enumerate() {
                        o[r * plan.nq + q] = v;
                    }
                }
            }
        }
    }
}

/// The leaf products of one block of `rows` database rows with the backend's matrix product:
/// the taps down to the leaves level by level (ping-pong between `taps[0]` and `taps[1]`;
/// level 0 is the block itself), then one product per leaf into `outs` (`[leaf][lag][q][row]`).
#[inline(always)]
fn rows_leaves(
    k: &dyn Kernels,
    plan: &Plan,
    sigs: &[u16],
    block: &[u16],
    rows: usize,
    taps: &mut [Vec<u16>],
    outs: &mut [u16],
) {
    let levels = plan.levels();
    let mut cur = None;
    for i in 0..levels {
        let [t0, t1, ..] = taps else { unreachable!("two tap buffers") };
        let len = 3usize.pow(i as u32) * rows * plan.tap_len(i);
        let (src, dst): (&[u16], _) = match cur {
            None => (block, t0),
            Some(0) => (&t0[..len], t1),
            Some(_) => (&t1[..len], t0),
        };
        split_taps(plan, i, rows, src, dst);
        cur = Some(cur.map_or(0, |c| c ^ 1));
    }
    let taps: &[u16] = match cur {
        None => block,
        Some(c) => &taps[c],
    };
    let (a_rows, leaf_taps) = (plan.leaf_rows(), plan.tap_len(levels));
    let sig = plan.nq * plan.sig_len(levels);
    for (f, o) in outs.chunks_exact_mut(a_rows.len() * rows).enumerate() {
        let taps = &taps[f * rows * leaf_taps..][..rows * leaf_taps];
        k.gemm_u16(&sigs[f * sig..][..sig], &a_rows, taps, leaf_taps, o)
    }
}

/// The leaves' results (in `outs[0]`, `[leaf][lag][slab]`) combined up to the root level by
/// level, ping-ponging between the two buffers; returns the root's.
fn up_sweep<'a>(plan: &Plan, outs: &'a mut [Vec<u16>; 2], slab: usize) -> &'a [u16] {
    let mut cur = 0;
    for i in (0..plan.levels()).rev() {
        let [o0, o1] = &mut *outs;
        let (src, dst) = if cur == 0 { (&o0[..], o1) } else { (&o1[..], o0) };
        let (child, parent) = (plan.l[i + 1] * slab, plan.l[i] * slab);
        let nodes = 3usize.pow(i as u32);
        grow(dst, nodes * parent);
        let src = src[..3 * nodes * child].chunks_exact(3 * child);
        for (node, y) in src.zip(dst[..nodes * parent].chunks_exact_mut(parent)) {
            let (ps, rest) = node.split_at(child);
            let (pe, po) = rest.split_at(child);
            combine(ps, pe, po, y, slab);
        }
        cur ^= 1;
    }
    &outs[cur][..plan.l[0] * slab]
}

/// A node's three children's results combined into its own `y` (`2 · child` lags of `slab`
/// values): `y[2s] = P_S[s] + P_E[s]`, `y[2s+1] = P_S[s] + P_O[s]`.
#[inline(always)]
fn combine(ps: &[u16], pe: &[u16], po: &[u16], y: &mut [u16], slab: usize) {
    let lags = ps.chunks_exact(slab).zip(pe.chunks_exact(slab)).zip(po.chunks_exact(slab));
    for (y, ((ps, pe), po)) in y.chunks_exact_mut(2 * slab).zip(lags) {
        let (y0, y1) = y.split_at_mut(slab);
        for ((y0, &x), &e) in y0.iter_mut().zip(ps).zip(pe) {
            *y0 = x.wrapping_add(e);
        }
        for ((y1, &x), &o) in y1.iter_mut().zip(ps).zip(po) {
            *y1 = x.wrapping_add(o);
        }
    }
}

/// The query side of a packed correlation: its plan and packed leaf signals.
#[cfg(target_arch = "x86_64")]
struct PackedTree<'a> {
    plan: &'a Plan,
    ap: &'a [u16],
}

/// One packed kernel's instruction set, with [`packed_node`] compiled for it.
#[cfg(target_arch = "x86_64")]
trait PackedNode: super::packed::PackedIsa {
    /// [`packed_node`] for this instruction set.
    ///
    /// # Safety
    /// The CPU must have the instruction set.
    unsafe fn node(
        tree: &PackedTree,
        node: super::packed::TapView,
        level: usize,
        f: usize,
        bufs: &mut [Vec<u16>],
        nodes: &mut [Vec<u16>],
        y: &mut [u16],
    );
}

// SAFETY (both): forwarded contract.
#[cfg(target_arch = "x86_64")]
impl PackedNode for super::packed::Vnni {
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn node(
        tree: &PackedTree,
        node: super::packed::TapView,
        level: usize,
        f: usize,
        bufs: &mut [Vec<u16>],
        nodes: &mut [Vec<u16>],
        y: &mut [u16],
    ) {
        unsafe { packed_node::<Self>(tree, node, level, f, bufs, nodes, y) }
    }
}

#[cfg(target_arch = "x86_64")]
impl PackedNode for super::packed::Avx2 {
    #[target_feature(enable = "avx2")]
    unsafe fn node(
        tree: &PackedTree,
        node: super::packed::TapView,
        level: usize,
        f: usize,
        bufs: &mut [Vec<u16>],
        nodes: &mut [Vec<u16>],
        y: &mut [u16],
    ) {
        unsafe { packed_node::<Self>(tree, node, level, f, bufs, nodes, y) }
    }
}

/// The results of `node` (leaf index prefix `f`, at `level`) into `y` (`[lag][row][q]`, the
/// node's lags) with the packed kernel of `T`, depth first: its S child (the sums of its
/// position pairs) is written to `bufs[0]` and its E and O children are views of the node
/// itself, so the only copies are the S children on the current path, which stay in cache for
/// the leaves that read them. Each node combines its children's results as soon as they are
/// done (into `nodes[0]`), so only the current path's results are live and the combination
/// reads them from cache.
///
/// # Safety
/// `T`'s instruction set.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn packed_node<T: PackedNode>(
    tree: &PackedTree,
    node: super::packed::TapView,
    level: usize,
    f: usize,
    bufs: &mut [Vec<u16>],
    nodes: &mut [Vec<u16>],
    y: &mut [u16],
) {
    use super::packed::TapView;
    let (plan, ap) = (tree.plan, tree.ap);
    let leaf_len = ap.len() / plan.leaves();
    let leaf = |f: usize, taps: TapView, plus: TapView, y: &mut [u16]| {
        // SAFETY: `T`'s instruction set by the contract.
        unsafe { T::leaf(&ap[f * leaf_len..][..leaf_len], plan.leaf_shape(), taps, plus, y) }
    };
    if level == plan.levels() {
        return leaf(f, node, TapView::NONE, y);
    }
    let slab = y.len() / plan.l[level];
    let child = plan.l[level + 1] * slab;
    let (mine, deeper) = bufs.split_first_mut().expect("a tap buffer per level");
    let (results, below) = nodes.split_first_mut().expect("a result buffer per level");
    grow(results, 3 * child);
    let (ps, rest) = results[..3 * child].split_at_mut(child);
    let (pe, po) = rest.split_at_mut(child);
    // SAFETY (all three): forwarded contract.
    unsafe {
        if level + 1 == plan.levels() {
            // The last level's S leaf adds E and O as it reads them instead of writing S out.
            leaf(3 * f, node.even(), node.odd(), ps);
        } else {
            let sums = node.sums::<T>(plan.width, mine);
            T::node(tree, sums, level + 1, 3 * f, deeper, below, ps);
        }
        T::node(tree, node.even(), level + 1, 3 * f + 1, deeper, below, pe);
        T::node(tree, node.odd(), level + 1, 3 * f + 2, deeper, below, po);
    }
    combine(ps, pe, po, y, slab);
}

#[cfg(test)]
mod tests {
    use super::super::{correlate_u16_with, Isa};
    use super::*;
    use proptest::prelude::*;

    /// The definition: `y[(ℓ·rows + j)·nq + q] = Σ_c ⟨a_q[c + ℓ], b_j[c]⟩`.
    fn direct(shape: Correlation, a: &[u16], b: &[u16]) -> Vec<u16> {
        let (sl, rl) = (shape.signal_len(), shape.row_len());
        let (nq, rows) = (a.len() / sl, b.len() / rl);
        let mut y = vec![0u16; shape.lags * nq * rows];
        for l in 0..shape.lags {
            for q in 0..nq {
                for j in 0..rows {
                    let x = &a[q * sl + l * shape.width..][..rl];
                    y[(l * rows + j) * nq + q] =
                        x.iter().zip(&b[j * rl..][..rl]).fold(0u16, |s, (u, v)| s.wrapping_add(u.wrapping_mul(*v)));
                }
            }
        }
        y
    }

    /// `nq` random signals and `rows` random rows of `shape` (xorshift from `seed`).
    fn random_case(shape: Correlation, nq: usize, rows: usize, seed: u64) -> (Vec<u16>, Vec<u16>) {
        let mut x = seed | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u16
        };
        let a: Vec<u16> = (0..nq * shape.signal_len()).map(|_| next()).collect();
        let b: Vec<u16> = (0..rows * shape.row_len()).map(|_| next()).collect();
        (a, b)
    }

    /// The correlation of a random case at `levels` on each of `isas` is the direct one.
    fn exact(
        shape: Correlation,
        nq: usize,
        rows: usize,
        levels: usize,
        seed: u64,
        isas: &[Isa],
    ) -> Result<(), TestCaseError> {
        let (a, b) = random_case(shape, nq, rows, seed);
        let want = direct(shape, &a, &b);
        for &isa in isas {
            let mut got = vec![0u16; want.len()];
            correlate_u16_with(isa, shape, Some(levels), &a, &b, &mut got).unwrap();
            prop_assert_eq!(&got, &want, "{:?} levels {} nq {} isa {:?}", shape, levels, nq, isa);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        /// Every level count, odd and even tap and lag counts, several blocks of rows: exactly
        /// the direct correlation, on every kernel level the CPU has (the packed AVX2 and
        /// AVX-512 VNNI kernels and the row kernels).
        #[test]
        fn karatsuba_correlation_is_exact(
            positions in 1usize..40, width in prop_oneof![1usize..6, Just(32), Just(64)], lags in 1usize..40,
            nq in 1usize..5, rows in 0usize..150, levels in 0usize..6, seed in any::<u64>(),
        ) {
            let shape = Correlation { positions, width, lags };
            exact(shape, nq, rows, levels, seed, &super::super::available())?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Query counts over several packed groups of 16 (full, ragged, an odd number of
        /// windows per tile pair) at even widths: exactly the direct correlation.
        #[test]
        fn karatsuba_correlation_is_exact_for_many_queries(
            positions in 1usize..30, half_width in 1usize..5, lags in 1usize..34, nq in 1usize..40,
            rows in 1usize..40, levels in 0usize..6, seed in any::<u64>(),
        ) {
            let shape = Correlation { positions, width: 2 * half_width, lags };
            exact(shape, nq, rows, levels, seed, &super::super::available())?;
        }
    }

    /// Every path this CPU can run — every level's row kernel, every packed kernel, at 0 to 5
    /// levels and odd, small and large block sizes — gives exactly the direct correlation, so
    /// the planner's choice changes nothing but the time.
    fn every_path(shape: Correlation) -> Vec<super::super::CorrelationPath> {
        use super::super::{CorrelationPath, LeafKernel};
        let mut leaves: Vec<LeafKernel> = super::super::available().into_iter().map(LeafKernel::Rows).collect();
        leaves.extend([Packing::Vnni, Packing::Avx2].map(LeafKernel::Packed));
        let mut out = Vec::new();
        for leaf in leaves {
            for levels in 0..=5 {
                for block_rows in [1, 7, 8, 24, 128] {
                    let path = CorrelationPath { leaf, levels, block_rows };
                    if path.runs_here(shape) {
                        out.push(path);
                    }
                }
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]
        #[test]
        fn every_path_is_exact(
            positions in 1usize..30, width in prop_oneof![1usize..5, Just(8)], lags in 1usize..34, nq in 1usize..20,
            rows in 1usize..140, seed in any::<u64>(),
        ) {
            let shape = Correlation { positions, width, lags };
            let (a, b) = random_case(shape, nq, rows, seed);
            let want = direct(shape, &a, &b);
            let paths = every_path(shape);
            prop_assert!(paths.len() >= 6 * 5, "{} paths", paths.len());
            for path in paths {
                let mut got = vec![0u16; want.len()];
                super::super::Correlator::with_path(path, shape, &a).unwrap().correlate(&b, &mut got).unwrap();
                prop_assert_eq!(&got, &want, "{} on {:?}", path, shape);
            }
        }
    }

    /// The planner's candidates at the iris shape are exact too (one case each, 3 queries).
    #[test]
    fn the_planners_candidates_are_exact_at_the_iris_shape() {
        let shape = Correlation { positions: 200, width: 64, lags: 31 };
        let (a, b) = random_case(shape, 3, 40, 9);
        let want = direct(shape, &a, &b);
        for path in super::super::correlation_candidates(shape, 3) {
            let mut got = vec![0u16; want.len()];
            super::super::Correlator::with_path(path, shape, &a).unwrap().correlate(&b, &mut got).unwrap();
            assert!(got == want, "{path}");
        }
    }

    /// A path the CPU cannot run (or a packed one on an odd width) is refused.
    #[test]
    fn paths_that_cannot_run_are_refused() {
        use super::super::{CorrelationPath, LeafKernel};
        let odd = Correlation { positions: 6, width: 3, lags: 3 };
        let sig = vec![0u16; odd.signal_len()];
        let packed = CorrelationPath { leaf: LeafKernel::Packed(Packing::Avx2), levels: 1, block_rows: 8 };
        assert!(super::super::Correlator::with_path(packed, odd, &sig).is_err());
        if super::super::isa::hardware() < super::super::Isa::Amx {
            let amx = CorrelationPath { leaf: LeafKernel::Rows(super::super::Isa::Amx), levels: 1, block_rows: 8 };
            let e = super::super::Correlator::with_path(amx, odd, &sig).err().unwrap();
            assert!(e.to_string().contains("path runs here"), "{e}");
        }
    }

    /// Unplanned block rows at the iris shape: one tile's rows (AVX2: 32) while the packed leaf
    /// signals fit the cache budget (16 and 32 queries: 3.5 and 7 MB), 128 past it (48 and 64
    /// queries).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn block_rows_follow_the_signal_size() {
        let shape = Correlation { positions: 200, width: 64, lags: 31 };
        let levels = shape.default_levels_at(super::super::Isa::Avx512Vnni);
        for (nq, mb, rows) in [(16, 3.5, 16), (32, 7.0, 8), (48, 10.5, 128), (64, 14.0, 128)] {
            let plan = Plan::new(shape, nq, levels);
            let bytes = plan.packed_signal_bytes();
            assert!((bytes as f64 / 1e6 - mb).abs() < 0.5, "{nq} queries: {bytes} B");
            assert_eq!(packed_block_rows(&plan, Packing::Vnni), rows, "{nq} queries");
            assert_eq!(packed_block_rows(&plan, Packing::Avx2), if rows == 128 { 128 } else { 32 }, "{nq} queries");
        }
    }

    /// Signals past [`SIGNALS_IN_CACHE`] (64 queries at the iris shape: 14 MB packed) take the
    /// large blocks, over a ragged last block: each query's results are those of the same query
    /// in a batch of half the size (small blocks), and spot checks match the definition.
    #[test]
    fn large_signals_take_large_blocks_with_the_same_results() {
        let shape = Correlation { positions: 200, width: 64, lags: 31 };
        let (nq, rows) = (64, 300);
        let (a, b) = random_case(shape, nq, rows, 5);
        let isa = super::super::detected();
        let run = |sigs: &[u16], n: usize| {
            let mut y = vec![0u16; shape.lags * rows * n];
            correlate_u16_with(isa, shape, None, sigs, &b, &mut y).unwrap();
            y
        };
        let full = run(&a, nq);
        let half = a.len() / 2;
        let halves = [run(&a[..half], nq / 2), run(&a[half..], nq / 2)];
        for (i, &v) in full.iter().enumerate() {
            let (lj, q) = (i / nq, i % nq);
            assert_eq!(v, halves[q / 32][lj * 32 + q % 32], "lag·row {lj}, query {q}");
        }
        let want = direct(shape, &a[..shape.signal_len()], &b);
        for (lj, &w) in want.iter().enumerate() {
            assert_eq!(full[lj * nq], w, "query 0, lag·row {lj}");
        }
    }

    /// A correlation large enough to be split over threads (600 rows over 2 and 3, unevenly)
    /// puts each part's rows in their place in every lag: exactly the direct correlation.
    #[test]
    fn correlation_split_over_threads() {
        let shape = Correlation { positions: 200, width: 64, lags: 31 };
        let (a, b) = random_case(shape, 3, 600, 11);
        let want = direct(shape, &a, &b);
        let saved = super::super::threads::setting();
        for t in [2, 3] {
            super::super::set_threads(t);
            for isa in super::super::available() {
                let mut got = vec![7u16; want.len()];
                correlate_u16_with(isa, shape, None, &a, &b, &mut got).unwrap();
                assert!(got == want, "{isa:?} on {t} threads");
            }
        }
        super::super::set_threads(saved);
    }

    /// Edge values: all ones (−1), the largest products, and zero.
    #[test]
    fn extreme_values() {
        let shape = Correlation { positions: 25, width: 64, lags: 31 };
        for v in [0u16, 1, 0x7fff, 0x8000, 0xffff] {
            let a = vec![v; 3 * shape.signal_len()];
            let b = vec![v; 70 * shape.row_len()];
            let want = direct(shape, &a, &b);
            for (levels, isa) in (0..=5).flat_map(|l| super::super::available().into_iter().map(move |i| (l, i))) {
                let mut got = vec![0u16; want.len()];
                correlate_u16_with(isa, shape, Some(levels), &a, &b, &mut got).unwrap();
                assert_eq!(got, want, "value {v:#x} levels {levels} isa {isa:?}");
            }
        }
    }

    /// Bad shapes are refused with the offending quantity named, and `out` is left as it was.
    #[test]
    fn bad_shapes_are_refused_and_nothing_is_written() {
        let ok = Correlation { positions: 4, width: 2, lags: 3 };
        let (a, b) = (vec![1u16; 2 * ok.signal_len()], vec![1u16; 5 * ok.row_len()]);
        // (shape, levels, signal values, tap values, output values, the quantity named)
        type Case = (Correlation, Option<usize>, usize, usize, usize, &'static str);
        let cases: [Case; 6] = [
            (Correlation { positions: 0, ..ok }, None, a.len(), b.len(), 30, "positions"),
            (Correlation { width: 0, ..ok }, None, a.len(), b.len(), 30, "width"),
            (ok, Some(MAX_LEVELS + 1), a.len(), b.len(), 30, "levels"),
            (ok, None, a.len() - 1, b.len(), 30, "signals"),
            (ok, None, a.len(), b.len() - 1, 30, "taps"),
            (ok, None, a.len(), b.len(), 29, "out.len()"),
        ];
        for (shape, levels, na, nb, nout, what) in cases {
            let mut out = vec![7u16; nout];
            let e = correlate_u16_with(Isa::Portable, shape, levels, &a[..na], &b[..nb], &mut out).unwrap_err();
            assert!(e.to_string().contains(what), "{what}: {e}");
            assert!(out.iter().all(|&v| v == 7), "{what}: out was written");
        }
        let mut out = vec![7u16; 30];
        correlate_u16_with(Isa::Portable, ok, None, &a, &b, &mut out).unwrap();
    }

    #[test]
    fn default_levels_at_the_iris_shapes() {
        use super::super::Isa;
        let iris = Correlation { positions: 200, width: 64, lags: 31 };
        assert_eq!(iris.default_levels_at(Isa::Avx512Vnni), 5);
        assert_eq!(iris.default_levels_at(Isa::Avx2), 5);
        assert_eq!(iris.default_levels_at(Isa::Avx512), 3);
        assert_eq!(iris.default_levels_at(Isa::Amx), 3);
        let open_iris = Correlation { positions: 256, width: 64, lags: 31 };
        assert_eq!(open_iris.default_levels_at(Isa::Avx512Vnni), 5);
        assert_eq!(open_iris.default_levels_at(Isa::Portable), 4);
        assert_eq!(Correlation { positions: 200, width: 64, lags: 1 }.default_levels_at(Isa::Avx512Vnni), 0);
        assert_eq!(Correlation { positions: 8, width: 4, lags: 31 }.default_levels_at(Isa::Avx512Vnni), 0);
    }
}
