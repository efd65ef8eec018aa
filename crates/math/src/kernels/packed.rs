//! The leaf products of `correlate` with the queries packed 16 side by side, on AVX-512 VNNI
//! and on AVX2: one multiply-accumulate multiplies a broadcast pair of a database row's values
//! by that pair in many queries at once (16 with `vpdpwssd` on 512 bits; 8 per `vpmaddwd` +
//! `vpaddd` on 256 bits, two vectors per group), so each accumulator lane is one dot product
//! and no horizontal sums are needed (a row-by-row kernel spends ~10 instructions per dot
//! product on them, which matters when the products are short, as the leaves are).
//!
//! Both operands keep the correlation's structure instead of being expanded:
//!
//! * **Signals** ([`pack_signals`]): per group of 16 queries, each leaf signal's positions one
//!   after the other, a position's value pairs with the 16 queries' pairs side by side. The
//!   window of lag `λ` is the same buffer `λ` positions in, so the lags of a leaf cost no copy.
//! * **Taps** ([`TapView`]): a database row's positions at a stride. The transform's E and O
//!   children (even and odd positions) are views of their parent with twice its stride; only
//!   S (their sum) is written out.
//!
//! Packed layout (the same for both instruction sets): group `g`, position `c`, pair `p` of the
//! position's `width / 2`, lane `r`, element `e` at `((g·positions + c)·pairs + p)·32 + 2r + e`;
//! lanes past the last query are zero. Tiles on AVX-512 VNNI are two windows × 8 database rows,
//! or one window × 16 rows for an odd count of windows: 16 accumulators either way; on AVX2
//! (16 vector registers) one window × [`AVX2_ROWS`] rows, two accumulators per row.

use std::arch::x86_64::*;

/// Queries per packed group: the 16 i32 lanes of one accumulator.
pub(crate) const GROUP: usize = 16;

/// Values of [`pack_signals`]'s output for `nq` signals of `positions` positions of `width`.
pub(crate) fn packed_len(nq: usize, positions: usize, width: usize) -> usize {
    nq.div_ceil(GROUP) * positions * width * GROUP
}

/// Packs `nq` signals (`positions × width` values each, one after the other in `sigs`) into
/// `dst` (appended). `width` must be even.
pub(crate) fn pack_signals(sigs: &[u16], nq: usize, positions: usize, width: usize, dst: &mut Vec<u16>) {
    debug_assert!(width.is_multiple_of(2));
    let len = positions * width;
    let base = dst.len();
    dst.resize(base + packed_len(nq, positions, width), 0);
    let dst = &mut dst[base..];
    for (q, sig) in sigs.chunks_exact(len).take(nq).enumerate() {
        let (g, r) = (q / GROUP, q % GROUP);
        let group = &mut dst[g * len * GROUP..][..len * GROUP];
        for (pair, out) in sig.chunks_exact(2).zip(group.chunks_exact_mut(2 * GROUP)) {
            out[2 * r..2 * r + 2].copy_from_slice(pair);
        }
    }
}

/// Database rows as a leaf product reads them: row `j`'s position `c` is the `width` values
/// at `data[j·row_stride + c·pos_stride..]`, for `c < positions` (later positions are zero).
#[derive(Clone, Copy)]
pub(crate) struct TapView<'a> {
    pub data: &'a [u16],
    pub rows: usize,
    pub row_stride: usize,
    pub pos_stride: usize,
    pub positions: usize,
}

impl<'a> TapView<'a> {
    /// No taps.
    pub const NONE: TapView<'static> = TapView { data: &[], rows: 0, row_stride: 0, pos_stride: 0, positions: 0 };

    /// The view's even positions (E): every other position from the first.
    #[inline(always)]
    pub fn even(self) -> TapView<'a> {
        TapView { pos_stride: 2 * self.pos_stride, positions: self.positions.div_ceil(2), ..self }
    }

    /// The view's odd positions (O); an odd count's missing partner is the zero past the end.
    #[inline(always)]
    pub fn odd(self) -> TapView<'a> {
        let data = if self.positions > 1 { &self.data[self.pos_stride..] } else { self.data };
        TapView { data, pos_stride: 2 * self.pos_stride, positions: self.positions / 2, ..self }
    }

    /// Whether every value the view names lies in `data`, for positions of `width` values.
    fn fits(&self, width: usize) -> bool {
        if self.rows == 0 || self.positions == 0 {
            return true;
        }
        (self.rows - 1) * self.row_stride + (self.positions - 1) * self.pos_stride + width <= self.data.len()
    }

    /// Writes the pairwise sums S of the view's positions, `2c` plus `2c + 1` (an odd count's
    /// last position alone), into `dst` as contiguous rows, and returns them as a view.
    ///
    /// # Safety
    /// The CPU must have the instruction set `T` stands for.
    #[inline(always)]
    pub unsafe fn sums<'b, T: PackedIsa>(&self, width: usize, dst: &'b mut Vec<u16>) -> TapView<'b> {
        assert!(self.fits(width), "tap view past its data");
        let half = self.positions.div_ceil(2);
        let row = half * width;
        if row == 0 {
            return TapView { data: &[], positions: 0, ..*self }; // an empty odd child's: all zero
        }
        if dst.len() < self.rows * row {
            dst.resize(self.rows * row, 0); // reused buffers only grow: no zero-fill per block
        }
        // A position's values in whole vectors where the width allows (the iris widths do):
        // plain loads, adds and stores, with none of the overlap checks the compiler puts
        // before each position's short loop.
        let vectors = if width.is_multiple_of(32) { width / 32 } else { 0 };
        for (j, out) in dst[..self.rows * row].chunks_exact_mut(row).enumerate() {
            let src = &self.data[j * self.row_stride..];
            for (c, out) in out.chunks_exact_mut(width).enumerate() {
                let even = &src[2 * c * self.pos_stride..][..width];
                if 2 * c + 1 >= self.positions {
                    out.copy_from_slice(even);
                    continue;
                }
                let odd = &src[(2 * c + 1) * self.pos_stride..][..width];
                if vectors == 0 {
                    for ((o, &x), &y) in out.iter_mut().zip(even).zip(odd) {
                        *o = x.wrapping_add(y);
                    }
                    continue;
                }
                // SAFETY: the three slices hold `width = 32 · vectors` values each; `T`'s
                // instruction set by the contract.
                unsafe {
                    let (e, d, o) = (even.as_ptr(), odd.as_ptr(), out.as_mut_ptr());
                    for v in 0..vectors {
                        T::add32(e.add(32 * v), d.add(32 * v), o.add(32 * v));
                    }
                }
            }
        }
        TapView { data: &dst[..self.rows * row], rows: self.rows, row_stride: row, pos_stride: width, positions: half }
    }
}

/// An instruction set the packed leaf products run on: one window-row accumulator (16 i32
/// lanes, one per query of a group), one pair of a group's 16 queries, one broadcast pair of
/// a row's values, and the few operations [`tile`] is written in.
///
/// # Safety
/// Every method needs the instruction set the type stands for; pointers must be readable (or
/// writable) for the values named.
pub(crate) trait PackedIsa {
    /// 16 i32 lanes.
    type Acc: Copy;
    /// One value pair of 16 queries (32 values).
    type Q: Copy;
    /// One value pair broadcast to every lane.
    type X: Copy;
    unsafe fn zero() -> Self::Acc;
    /// The 32 values at `p`.
    unsafe fn load_q(p: *const u16) -> Self::Q;
    /// The pair at `p`, broadcast.
    unsafe fn pair(p: *const u16) -> Self::X;
    /// Lane-wise sum of two broadcast pairs mod 2^16.
    unsafe fn add_pairs(x: Self::X, y: Self::X) -> Self::X;
    /// `acc + ⟨q, x⟩` per lane (both of a lane's products, summed in i32).
    unsafe fn mac(acc: Self::Acc, q: Self::Q, x: Self::X) -> Self::Acc;
    /// The lanes mod 2^16 into `dst` (at most 16 values; lanes past its end are dropped).
    unsafe fn store(dst: &mut [u16], acc: Self::Acc);
    /// `o[..32] = e[..32] + d[..32]` mod 2^16.
    unsafe fn add32(e: *const u16, d: *const u16, o: *mut u16);
    /// [`leaf_product`] compiled for this instruction set.
    unsafe fn leaf(ap: &[u16], shape: LeafShape, taps: TapView, plus: TapView, out: &mut [u16]);
    /// Every window of a leaf (`count` of them, [`Window`]s by `window`) over every row of
    /// `taps`, in this instruction set's tiles (see [`leaf_product`]).
    unsafe fn windows(
        ap: &[u16],
        count: usize,
        window: impl Fn(usize) -> Window,
        shape: LeafShape,
        taps: TapView,
        plus: TapView,
        out: &mut [u16],
    );
}

/// AVX-512 F/BW/VNNI: one `vpdpwssd` per window-row and pair.
pub(crate) struct Vnni;

/// AVX2: `vpmaddwd` + `vpaddd` on two 256-bit halves (8 queries each) per window-row and pair.
pub(crate) struct Avx2;

/// Database rows per AVX2 tile: 8 accumulators, two query vectors and a broadcast leave room
/// in the 16 registers (6 rows spilled and measured slower). The AVX2 blocks, 32 and 128 rows,
/// are multiples of it.
const AVX2_ROWS: usize = 4;

// SAFETY (both impls): each body needs only the type's instruction set, which the trait's
// contract makes the caller guarantee, and reads or writes only the values the contract names.
impl PackedIsa for Vnni {
    type Acc = __m512i;
    type Q = __m512i;
    type X = __m512i;
    #[inline(always)]
    unsafe fn zero() -> __m512i {
        unsafe { _mm512_setzero_si512() }
    }
    #[inline(always)]
    unsafe fn load_q(p: *const u16) -> __m512i {
        unsafe { _mm512_loadu_si512(p.cast()) }
    }
    #[inline(always)]
    unsafe fn pair(p: *const u16) -> __m512i {
        unsafe { _mm512_set1_epi32(p.cast::<i32>().read_unaligned()) }
    }
    #[inline(always)]
    unsafe fn add_pairs(x: __m512i, y: __m512i) -> __m512i {
        unsafe { _mm512_add_epi16(x, y) }
    }
    #[inline(always)]
    unsafe fn mac(acc: __m512i, q: __m512i, x: __m512i) -> __m512i {
        unsafe { _mm512_dpwssd_epi32(acc, q, x) }
    }
    #[inline(always)]
    unsafe fn store(dst: &mut [u16], acc: __m512i) {
        // One narrowing masked store (a copy of `n` values would be a `memcpy` call).
        let n = dst.len().min(GROUP);
        unsafe { _mm512_mask_cvtepi32_storeu_epi16(dst.as_mut_ptr().cast(), ((1u32 << n) - 1) as u16, acc) };
    }
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn leaf(ap: &[u16], shape: LeafShape, taps: TapView, plus: TapView, out: &mut [u16]) {
        unsafe { leaf_product::<Self>(ap, shape, taps, plus, out) }
    }
    #[inline(always)]
    unsafe fn add32(e: *const u16, d: *const u16, o: *mut u16) {
        unsafe {
            let (x, y) = (_mm512_loadu_si512(e.cast()), _mm512_loadu_si512(d.cast()));
            _mm512_storeu_si512(o.cast(), _mm512_add_epi16(x, y));
        }
    }
    #[inline(always)]
    unsafe fn windows(
        ap: &[u16],
        count: usize,
        window: impl Fn(usize) -> Window,
        shape: LeafShape,
        taps: TapView,
        plus: TapView,
        out: &mut [u16],
    ) {
        // Two windows × 8 rows (an odd last window alone × 16): 16 accumulators either way.
        for i in (0..count).step_by(2) {
            unsafe {
                if i + 1 < count {
                    windows_times_rows::<Vnni, 2, 8>(ap, [window(i), window(i + 1)], shape, taps, plus, out)
                } else {
                    windows_times_rows::<Vnni, 1, 16>(ap, [window(i)], shape, taps, plus, out)
                }
            }
        }
    }
}

impl PackedIsa for Avx2 {
    type Acc = [__m256i; 2];
    type Q = [__m256i; 2];
    type X = __m256i;
    #[inline(always)]
    unsafe fn zero() -> [__m256i; 2] {
        unsafe { [_mm256_setzero_si256(); 2] }
    }
    #[inline(always)]
    unsafe fn load_q(p: *const u16) -> [__m256i; 2] {
        unsafe { [_mm256_loadu_si256(p.cast()), _mm256_loadu_si256(p.add(16).cast())] }
    }
    #[inline(always)]
    unsafe fn pair(p: *const u16) -> __m256i {
        unsafe { _mm256_set1_epi32(p.cast::<i32>().read_unaligned()) }
    }
    #[inline(always)]
    unsafe fn add_pairs(x: __m256i, y: __m256i) -> __m256i {
        unsafe { _mm256_add_epi16(x, y) }
    }
    #[inline(always)]
    unsafe fn mac(acc: [__m256i; 2], q: [__m256i; 2], x: __m256i) -> [__m256i; 2] {
        unsafe {
            [_mm256_add_epi32(acc[0], _mm256_madd_epi16(q[0], x)), _mm256_add_epi32(acc[1], _mm256_madd_epi16(q[1], x))]
        }
    }
    #[inline(always)]
    unsafe fn store(dst: &mut [u16], acc: [__m256i; 2]) {
        unsafe {
            // Each lane's low 16 bits: masked to 0..=0xffff, the unsigned-saturating pack keeps
            // them exactly; it interleaves 64-bit quarters ([a0-3, b0-3, a4-7, b4-7]), put back
            // in order by the permute.
            let m = _mm256_set1_epi32(0xffff);
            let packed = _mm256_packus_epi32(_mm256_and_si256(acc[0], m), _mm256_and_si256(acc[1], m));
            let v = _mm256_permute4x64_epi64::<0b11_01_10_00>(packed);
            if dst.len() >= GROUP {
                _mm256_storeu_si256(dst.as_mut_ptr().cast(), v);
            } else {
                let mut t = [0u16; GROUP];
                _mm256_storeu_si256(t.as_mut_ptr().cast(), v);
                dst.copy_from_slice(&t[..dst.len()]);
            }
        }
    }
    #[target_feature(enable = "avx2")]
    unsafe fn leaf(ap: &[u16], shape: LeafShape, taps: TapView, plus: TapView, out: &mut [u16]) {
        unsafe { leaf_product::<Self>(ap, shape, taps, plus, out) }
    }
    #[inline(always)]
    unsafe fn add32(e: *const u16, d: *const u16, o: *mut u16) {
        unsafe {
            for h in [0, 16] {
                let (x, y) = (_mm256_loadu_si256(e.add(h).cast()), _mm256_loadu_si256(d.add(h).cast()));
                _mm256_storeu_si256(o.add(h).cast(), _mm256_add_epi16(x, y));
            }
        }
    }
    #[inline(always)]
    unsafe fn windows(
        ap: &[u16],
        count: usize,
        window: impl Fn(usize) -> Window,
        shape: LeafShape,
        taps: TapView,
        plus: TapView,
        out: &mut [u16],
    ) {
        for i in 0..count {
            unsafe { windows_times_rows::<Avx2, 1, AVX2_ROWS>(ap, [window(i)], shape, taps, plus, out) }
        }
    }
}

/// The sums of one tile: `G` windows of packed signals (`aq`, at their first position) times
/// `NR` database rows (`r`, at their first position), over `positions` positions of `pairs`
/// value pairs, one accumulator per window and row. The rows' first `positions2` positions
/// have the positions of `r2` added (the S child of the last transform level, summed here
/// instead of being written out).
///
/// # Safety
/// `T`'s instruction set; every `aq[h]` holds `positions · pairs · 32` values, every `r[u]`
/// `pairs · 2` values at each of `positions` positions `pos_stride` apart, and every `r2[u]`
/// as many at `positions2 <= positions` positions `pos_stride2` apart.
#[inline(always)]
unsafe fn tile<T: PackedIsa, const G: usize, const NR: usize>(
    aq: [*const u16; G],
    r: [*const u16; NR],
    (positions, pos_stride): (usize, usize),
    r2: [*const u16; NR],
    (positions2, pos_stride2): (usize, usize),
    pairs: usize,
) -> [[T::Acc; G]; NR] {
    /// One position: `x(u, p)` is row `u`'s broadcast pair `p`.
    #[inline(always)]
    unsafe fn position<T: PackedIsa, const G: usize, const NR: usize>(
        t: &mut [[T::Acc; G]; NR],
        a: [*const u16; G],
        pairs: usize,
        x: impl Fn(usize, usize) -> T::X,
    ) {
        // SAFETY: by `tile`'s contract.
        unsafe {
            for p in 0..pairs {
                let q: [T::Q; G] = std::array::from_fn(|h| T::load_q(a[h].add(p * 2 * GROUP)));
                for (u, tu) in t.iter_mut().enumerate() {
                    let x = x(u, p);
                    for (acc, &q) in tu.iter_mut().zip(&q) {
                        *acc = T::mac(*acc, q, x);
                    }
                }
            }
        }
    }
    // SAFETY: by the contract, every load stays inside the packed windows and the rows' positions.
    unsafe {
        let mut t = [[T::zero(); G]; NR];
        let pair = |row: *const u16, p: usize| T::pair(row.add(2 * p));
        for c in 0..positions {
            let a: [*const u16; G] = std::array::from_fn(|h| aq[h].add(c * pairs * 2 * GROUP));
            let b: [*const u16; NR] = std::array::from_fn(|u| r[u].add(c * pos_stride));
            if c < positions2 {
                let b2: [*const u16; NR] = std::array::from_fn(|u| r2[u].add(c * pos_stride2));
                position::<T, G, NR>(&mut t, a, pairs, |u, p| T::add_pairs(pair(b[u], p), pair(b2[u], p)));
            } else {
                position::<T, G, NR>(&mut t, a, pairs, |u, p| pair(b[u], p));
            }
        }
        t
    }
}

/// A window of a leaf's packed signals: query group `g` at lag `lag`.
#[derive(Clone, Copy)]
pub(crate) struct Window {
    g: usize,
    lag: usize,
}

/// Runs [`tile`] for windows `w` over every row of `taps`, storing the sums of the queries that
/// exist at `out[(lag·rows + row)·nq + q]`.
///
/// # Safety
/// As [`leaf_product`].
#[inline(always)]
unsafe fn windows_times_rows<T: PackedIsa, const G: usize, const NR: usize>(
    ap: &[u16],
    w: [Window; G],
    shape: LeafShape,
    taps: TapView,
    plus: TapView,
    out: &mut [u16],
) {
    let pairs = shape.width / 2;
    let group_len = shape.signal_positions * shape.width * GROUP;
    let aq: [*const u16; G] = std::array::from_fn(|h| ap[w[h].g * group_len + w[h].lag * pairs * 2 * GROUP..].as_ptr());
    for j0 in (0..taps.rows).step_by(NR) {
        // Rows past the end repeat the last one; their sums are not stored.
        // (Only computed, never read, for a view of no positions.)
        let rows = |v: TapView| -> [*const u16; NR] {
            std::array::from_fn(|u| v.data.as_ptr().wrapping_add((j0 + u).min(v.rows - 1) * v.row_stride))
        };
        let (main, second) = ((taps.positions, taps.pos_stride), (plus.positions, plus.pos_stride));
        // SAFETY: forwarded contract (the windows and the views were checked by the caller).
        let t = unsafe { tile::<T, G, NR>(aq, rows(taps), main, rows(plus), second, pairs) };
        for (u, tu) in t.iter().enumerate().take(taps.rows - j0) {
            for (h, &acc) in tu.iter().enumerate() {
                let q0 = w[h].g * GROUP;
                let n = GROUP.min(shape.nq - q0);
                let dst = &mut out[(w[h].lag * taps.rows + j0 + u) * shape.nq + q0..][..n];
                // SAFETY: `T`'s instruction set by the contract; `dst` holds `n ≤ 16` values.
                unsafe { T::store(dst, acc) };
            }
        }
    }
}

/// The shape of one leaf product.
#[derive(Clone, Copy)]
pub(crate) struct LeafShape {
    pub nq: usize,
    pub lags: usize,
    /// Tap positions of the leaf (a view may have fewer: the rest are zero).
    pub positions: usize,
    /// Positions of each packed signal: `positions + lags − 1`.
    pub signal_positions: usize,
    pub width: usize,
}

/// `out[(λ·rows + j)·nq + q] = Σ_c ⟨signal_q[c + λ], taps_j[c] + plus_j[c]⟩ mod 2^16` for the
/// `nq` signals packed in `ap` by [`pack_signals`] and the rows of `taps`, with the rows of
/// `plus` (same rows, at most as many positions, or none: [`TapView::NONE`]) added.
///
/// # Safety
/// The CPU must have `T`'s instruction set. Panics if `ap`, `taps` or `out` is too short for the
/// shape, a view has more positions than the leaf or `plus` more than `taps`, or the width is odd.
#[inline(always)]
unsafe fn leaf_product<T: PackedIsa>(ap: &[u16], shape: LeafShape, taps: TapView, plus: TapView, out: &mut [u16]) {
    if shape.nq == 0 || taps.rows == 0 {
        return;
    }
    let plus = if plus.positions == 0 { TapView { rows: taps.rows, ..TapView::NONE } } else { plus };
    assert!(plus.rows == taps.rows && plus.positions <= taps.positions, "added rows do not match");
    assert!(plus.fits(shape.width), "added view past its data");
    assert!(shape.width.is_multiple_of(2) && shape.width > 0, "packed leaves need an even width");
    assert!(shape.signal_positions + 1 >= shape.positions + shape.lags, "signals shorter than the windows");
    assert!(taps.positions <= shape.positions && taps.fits(shape.width), "tap view past the leaf or its data");
    assert!(ap.len() >= packed_len(shape.nq, shape.signal_positions, shape.width), "packed signals too short");
    assert!(out.len() >= taps.rows * shape.lags * shape.nq, "output too short");
    // Windows lag-major, then query group.
    let groups = shape.nq.div_ceil(GROUP);
    let window = |i: usize| Window { g: i % groups, lag: i / groups };
    // SAFETY: forwarded contract; the asserts above bound every window and row read.
    unsafe { T::windows(ap, groups * shape.lags, window, shape, taps, plus, out) }
}
