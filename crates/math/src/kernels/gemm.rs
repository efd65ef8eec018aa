//! Cache-blocked matrix-product driver around `simd::microkernel`, and its two data sources:
//! the rings (queries used in place, row panels copied) and F_65519 (everything re-encoded).
//!
//! Loop nest, outer to inner:
//!
//! ```text
//! query block (≤ mc queries)
//!   row block (nc rows)                 accumulator tiles of the whole block kept in scratch
//!     K-block (kc elements)             the block's query chunks (mc × kc) stay in L2
//!       row panel (NR rows)             copied/packed to scratch (NR × kc), stays in L1;
//!                                       the panel two ahead is prefetched from memory
//!         query panel (MR queries)      streams from L2 → microkernel
//!     horizontal sums of the tiles → out
//! ```
//!
//! The accumulator registers of every MR×NR tile are saved to scratch between K-blocks
//! instead of being summed horizontally, so the (relatively expensive) horizontal sums happen
//! once per dot product, not once per K-block; that lets K-blocks be short enough for a wide
//! row panel to fit in L1, and a wide panel is what keeps the L2 traffic of the streaming
//! queries low (64/NR bytes per multiply-accumulate instruction).
//!
//! Edge panels repeat the last valid row/query instead of having special-case kernels; the
//! extra results are discarded. The last `len mod LANES` elements of every dot product are
//! done by the scalar code.

use super::f65519::{self, P65519, PACKED_STEPS_MAX};
use super::portable::{self, Word};
use super::simd::{microkernel, Mac, Pairs};

/// How many row panels ahead the database rows are prefetched. One panel of compute is
/// shorter than a memory round trip for the next panel's lines; two hides it (measured).
const PREFETCH_PANELS: usize = 2;

/// Cache-blocking sizes (chosen per ISA in `avx2.rs` / `avx512.rs`).
#[derive(Clone, Copy)]
pub(crate) struct Blocking {
    /// Queries per block: each block streams the database once, so larger blocks cut memory
    /// traffic as long as the block's query chunks (and accumulator tiles) stay in L2.
    pub mc: usize,
    /// Elements of K per block.
    pub kc: usize,
    /// Database rows per block (rounded up to a multiple of the tile's NR).
    pub nc: usize,
}

impl Blocking {
    /// The K-block length actually used: a multiple of `lanes`, at most `max_steps` registers.
    fn k_block(self, lanes: usize, max_steps: usize) -> usize {
        (self.kc / lanes).clamp(1, max_steps) * lanes
    }
}

/// A zeroed scratch buffer of `n` elements whose start is 64-byte aligned (vector loads that
/// straddle two cache lines cost two L1 accesses): returns the buffer and the offset at which
/// the aligned part begins.
pub(crate) fn aligned_scratch<T: Copy + Default>(n: usize) -> (Vec<T>, usize) {
    let pad = 64 / core::mem::size_of::<T>().max(1);
    let v = vec![T::default(); n + pad];
    let off = v.as_ptr().align_offset(64).min(pad);
    (v, off)
}

/// Supplies the query and database vectors to [`blocked`], and takes its sums.
trait Source<E> {
    /// Makes queries `i0..i0 + mc` available to [`Source::query`].
    fn load_queries(&mut self, i0: usize, mc: usize);
    /// Elements `k0..` of the `t`-th query of the current block (`t < mc`).
    fn query(&self, t: usize, k0: usize) -> &[E];
    /// Makes elements `k0..k0 + kn` of rows `j0..j0 + nr` (clamped to the last row) available
    /// to [`Source::row`].
    fn load_rows(&mut self, j0: usize, nr: usize, k0: usize, kn: usize);
    /// The `u`-th row of the current panel (`u < nr`), from element `k0` of the last load.
    fn row(&self, u: usize) -> &[E];
    /// Receives `Σ_k a[i][k]·b[j][k]` over the vectorised part of K, as `Mac::hsum` defines it.
    fn emit(&mut self, i: usize, j: usize, sum: i64);
    /// Hints that elements `k0..k0 + kn` of row `j` will be loaded soon: prefetches part
    /// `part` of `parts` of them into L2.
    fn prefetch_row(&self, j: usize, k0: usize, kn: usize, part: usize, parts: usize);
}

/// Prefetches part `part` of `parts` of the cache lines of `v` into L2. Only a hint: it never
/// faults and does not change memory.
#[inline(always)]
fn prefetch_part<T>(v: &[T], part: usize, parts: usize) {
    const LINE: usize = 64;
    let bytes = core::mem::size_of_val(v);
    let lines = bytes.div_ceil(LINE);
    let per = lines.div_ceil(parts.max(1));
    let start = v.as_ptr().cast::<u8>();
    for l in (part * per)..((part + 1) * per).min(lines) {
        // SAFETY: prefetching has no architectural effect and never faults, even for
        // addresses outside any allocation; `wrapping_add` computes the address without
        // claiming it is in bounds (it is: l·64 < bytes).
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T1 }>(start.wrapping_add(l * LINE).cast())
        };
    }
}

/// The blocked loop nest (see the module docs).
///
/// `vec_len`: elements of K to cover, a multiple of `V::LANES`. `fold_every`: registers of
/// K after which the accumulators must be passed through `Mac::fold`.
///
/// # Safety
/// The CPU must support `V`'s features.
#[inline(always)]
unsafe fn blocked<V: Mac, S: Source<V::Elem>, const MR: usize, const NR: usize>(
    src: &mut S,
    rows_a: usize,
    rows_b: usize,
    vec_len: usize,
    blocking: Blocking,
    fold_every: usize,
) {
    if rows_a == 0 || rows_b == 0 || vec_len == 0 {
        return;
    }
    let lanes = V::LANES;
    let kc = blocking.k_block(lanes, fold_every);
    let nc = blocking.nc.div_ceil(NR).max(1) * NR;
    let r_panels = nc.min(rows_b).div_ceil(NR);
    // SAFETY: the caller guarantees V's features.
    let zero = unsafe { [[V::zero(); NR]; MR] };
    let block = blocking.mc.max(1);
    let mut tiles = vec![zero; block.min(rows_a).div_ceil(MR) * r_panels];
    for i0 in (0..rows_a).step_by(block) {
        let mc = block.min(rows_a - i0);
        let q_panels = mc.div_ceil(MR);
        src.load_queries(i0, mc);
        for j0 in (0..rows_b).step_by(nc) {
            let nb = nc.min(rows_b - j0);
            tiles.fill(zero);
            let mut since_fold = 0;
            for k0 in (0..vec_len).step_by(kc) {
                let kn = kc.min(vec_len - k0);
                let steps = kn / lanes;
                if since_fold + steps > fold_every {
                    for acc in tiles.iter_mut().flatten().flatten() {
                        // SAFETY: the caller guarantees V's features.
                        *acc = unsafe { V::fold(*acc) };
                    }
                    since_fold = 0;
                }
                since_fold += steps;
                for (jp, jr) in (0..nb).step_by(NR).enumerate() {
                    src.load_rows(j0 + jr, NR, k0, kn);
                    // The panel PREFETCH_PANELS ahead (in loop order), prefetched into L2 while
                    // this one is computed, so that the database stream from memory overlaps
                    // the arithmetic.
                    let (mut next_j, mut next_k) = (j0 + jr, k0);
                    for _ in 0..PREFETCH_PANELS {
                        let block = next_j / nc * nc;
                        (next_j, next_k) = if next_j + NR < (block + nc).min(rows_b) {
                            (next_j + NR, next_k)
                        } else if next_k + kc < vec_len {
                            (block, next_k + kc)
                        } else {
                            (block + nc, 0)
                        };
                    }
                    let next_kn = kc.min(vec_len - next_k);
                    let next_rows = NR.min(rows_b.saturating_sub(next_j));
                    let mut r: [&[V::Elem]; NR] = [&[]; NR];
                    for (u, slot) in r.iter_mut().enumerate() {
                        *slot = src.row(u);
                    }
                    for (ip, ir) in (0..mc).step_by(MR).enumerate() {
                        let mut q: [&[V::Elem]; MR] = [&[]; MR];
                        for (t, slot) in q.iter_mut().enumerate() {
                            *slot = src.query((ir + t).min(mc - 1), k0);
                        }
                        for u in 0..next_rows {
                            src.prefetch_row(next_j + u, next_k, next_kn, ip, q_panels);
                        }
                        let tile = &mut tiles[ip * r_panels + jp];
                        // SAFETY: the caller guarantees V's features.
                        unsafe { microkernel::<V, MR, NR>(&q, &r, steps, tile) };
                    }
                }
            }
            for (ip, ir) in (0..mc).step_by(MR).enumerate() {
                for (jp, jr) in (0..nb).step_by(NR).enumerate() {
                    let tile = &tiles[ip * r_panels + jp];
                    for (t, accs) in tile.iter().enumerate().take(mc - ir) {
                        for (u, &acc) in accs.iter().enumerate().take(nb - jr) {
                            // SAFETY: the caller guarantees V's features.
                            let sum = unsafe { V::hsum(acc) };
                            src.emit(i0 + ir + t, j0 + jr + u, sum);
                        }
                    }
                }
            }
        }
    }
}

/// Ring data: queries used in place; each row panel is copied to `rpack` (`kc` per row), which
/// keeps the L1-resident panel contiguous whatever the row stride is. (Measured faster than
/// reading the rows in place at length 12800, whose 25 600-byte stride maps rows four apart
/// onto the same L1 sets; the copy costs one pass over the database.)
struct RingSource<'a, T> {
    a: &'a [T],
    /// Where each query row starts in `a` (rows may overlap).
    a_rows: &'a [usize],
    b: &'a [T],
    len: usize,
    rows_b: usize,
    out: &'a mut [T],
    i0: usize,
    rpack: Vec<T>,
    /// Start of the aligned part of `rpack`.
    off: usize,
    kc: usize,
}

impl<T: Word> Source<T> for RingSource<'_, T> {
    #[inline(always)]
    fn load_queries(&mut self, i0: usize, _mc: usize) {
        self.i0 = i0;
    }
    #[inline(always)]
    fn query(&self, t: usize, k0: usize) -> &[T] {
        let start = self.a_rows[self.i0 + t];
        &self.a[start + k0..start + self.len]
    }
    #[inline(always)]
    fn load_rows(&mut self, j0: usize, nr: usize, k0: usize, kn: usize) {
        for (u, dst) in self.rpack[self.off..].chunks_exact_mut(self.kc).take(nr).enumerate() {
            let j = (j0 + u).min(self.rows_b - 1);
            dst[..kn].copy_from_slice(&self.b[j * self.len + k0..][..kn]);
        }
    }
    #[inline(always)]
    fn row(&self, u: usize) -> &[T] {
        &self.rpack[self.off + u * self.kc..][..self.kc]
    }
    #[inline(always)]
    fn emit(&mut self, i: usize, j: usize, sum: i64) {
        self.out[i * self.rows_b + j] = T::from_i64(sum);
    }
    #[inline(always)]
    fn prefetch_row(&self, j: usize, k0: usize, kn: usize, part: usize, parts: usize) {
        prefetch_part(&self.b[j * self.len + k0..][..kn], part, parts);
    }
}

/// Wrapping matrix product over Z_2^k: `out[i*rows_b + j] = Σ_k a[s_i + k]·b[j][k]` where query
/// row `i` starts at `s_i = a_rows[i]` of `a`. Shapes are validated by the caller (`len > 0`,
/// every `s_i + len <= a.len()`, `b.len()` a multiple of `len`, `out.len() == rows_a·rows_b`).
///
/// # Safety
/// The CPU must support `V`'s features.
#[inline(always)]
pub(crate) unsafe fn gemm_ring<V, T, const MR: usize, const NR: usize>(
    a: &[T],
    a_rows: &[usize],
    b: &[T],
    len: usize,
    out: &mut [T],
    blocking: Blocking,
) where
    V: Mac<Elem = T>,
    T: Word,
{
    out.fill(T::default());
    let (rows_a, rows_b) = (a_rows.len(), b.len() / len);
    let vec_len = len - len % V::LANES;
    let kc = blocking.k_block(V::LANES, usize::MAX).min(vec_len);
    let (rpack, off) = aligned_scratch(NR * kc);
    let mut src = RingSource { a, a_rows, b, len, rows_b, out: &mut *out, i0: 0, rpack, off, kc };
    // SAFETY: the caller guarantees V's features.
    unsafe { blocked::<V, _, MR, NR>(&mut src, rows_a, rows_b, vec_len, blocking, usize::MAX) };
    if vec_len < len {
        for (i, &start) in a_rows.iter().enumerate() {
            for (j, rb) in b.chunks_exact(len).enumerate() {
                let o = &mut out[i * rows_b + j];
                *o = o.wadd(portable::dot(&a[start + vec_len..start + len], &rb[vec_len..]));
            }
        }
    }
}

/// F_65519 data: every element is re-encoded into one u32 (two 16-bit lanes) so that the ring
/// microkernel computes exact signed sums: queries in the scaled form (`f65519::pack_scaled`,
/// once per query block into `qpack`, `vec_len` per query), rows in the cheaper split form
/// (`f65519::pack_split`, once per K-block and row panel into `rpack`, `kc` per row). Packing
/// also keeps the running maximum of every input, so non-canonical values are found without an
/// extra pass over the (large) database.
struct FieldSource<'a> {
    a: &'a [u16],
    b: &'a [u16],
    len: usize,
    vec_len: usize,
    rows_b: usize,
    out: &'a mut [u16],
    qpack: Vec<u32>,
    rpack: Vec<u32>,
    /// Starts of the aligned parts of `qpack` and `rpack`.
    q_off: usize,
    r_off: usize,
    kc: usize,
    max: u16,
}

/// `dst[k] = pack_split(src[k])` or `pack_scaled(src[k])`; returns the largest input. A
/// plain loop the compiler vectorises.
#[inline(always)]
fn pack<const SPLIT: bool>(src: &[u16], dst: &mut [u32]) -> u16 {
    let mut max = 0;
    for (d, &x) in dst.iter_mut().zip(src) {
        *d = if SPLIT { f65519::pack_split(x) } else { f65519::pack_scaled(x) };
        max = max.max(x);
    }
    max
}

impl Source<u32> for FieldSource<'_> {
    #[inline(always)]
    fn load_queries(&mut self, i0: usize, mc: usize) {
        let (len, vec_len) = (self.len, self.vec_len);
        for (t, dst) in self.qpack[self.q_off..].chunks_exact_mut(vec_len).take(mc).enumerate() {
            let m = pack::<false>(&self.a[(i0 + t) * len..][..vec_len], dst); // scaled
            self.max = self.max.max(m);
        }
    }
    #[inline(always)]
    fn query(&self, t: usize, k0: usize) -> &[u32] {
        &self.qpack[self.q_off + t * self.vec_len + k0..self.q_off + (t + 1) * self.vec_len]
    }
    #[inline(always)]
    fn load_rows(&mut self, j0: usize, nr: usize, k0: usize, kn: usize) {
        for (u, dst) in self.rpack[self.r_off..].chunks_exact_mut(self.kc).take(nr).enumerate() {
            let j = (j0 + u).min(self.rows_b - 1);
            let m = pack::<true>(&self.b[j * self.len + k0..][..kn], &mut dst[..kn]); // split
            self.max = self.max.max(m);
        }
    }
    #[inline(always)]
    fn row(&self, u: usize) -> &[u32] {
        &self.rpack[self.r_off + u * self.kc..][..self.kc]
    }
    #[inline(always)]
    fn emit(&mut self, i: usize, j: usize, sum: i64) {
        self.out[i * self.rows_b + j] = f65519::reduce_i64(sum);
    }
    #[inline(always)]
    fn prefetch_row(&self, j: usize, k0: usize, kn: usize, part: usize, parts: usize) {
        prefetch_part(&self.b[j * self.len + k0..][..kn], part, parts);
    }
}

/// Matrix product over F_65519 on canonical inputs, canonical outputs. Shapes as for
/// [`gemm_ring`]. Returns `false` if some input was ≥ p; `out` then holds unspecified
/// canonical values.
///
/// Each packed register holds LANES/2 elements and adds at most `PACKED_TERM_MAX` per element
/// to an i32 lane, so accumulators are folded mod p at least every `PACKED_STEPS_MAX − 1`
/// registers (a folded lane is below 2^20, which leaves room for 255 more).
///
/// # Safety
/// The CPU must support `V`'s features.
#[inline(always)]
pub(crate) unsafe fn gemm_f65519<V, const MR: usize, const NR: usize>(
    a: &[u16],
    b: &[u16],
    len: usize,
    out: &mut [u16],
    blocking: Blocking,
) -> bool
where
    V: Mac<Elem = u16>,
{
    out.fill(0);
    let (rows_a, rows_b) = (a.len() / len, b.len() / len);
    if rows_a == 0 || rows_b == 0 {
        // Nothing to compute, but still report bad inputs.
        return portable::max_u16(a).max(portable::max_u16(b)) < P65519;
    }
    // One packed register holds V::LANES / 2 elements.
    let vec_len = len - len % Pairs::<V>::LANES;
    let fold_every = PACKED_STEPS_MAX - 1;
    let kc = blocking.k_block(Pairs::<V>::LANES, fold_every).min(vec_len);
    let (qpack, q_off) = aligned_scratch(blocking.mc.max(1).min(rows_a) * vec_len);
    let (rpack, r_off) = aligned_scratch(NR * kc);
    let mut src = FieldSource { a, b, len, vec_len, rows_b, out: &mut *out, qpack, rpack, q_off, r_off, kc, max: 0 };
    // SAFETY: the caller guarantees V's features, which are Pairs<V>'s.
    unsafe { blocked::<Pairs<V>, _, MR, NR>(&mut src, rows_a, rows_b, vec_len, blocking, fold_every) };
    let mut max = src.max;
    if vec_len < len {
        for v in a.chunks_exact(len).chain(b.chunks_exact(len)) {
            max = max.max(portable::max_u16(&v[vec_len..]));
        }
        if max < P65519 {
            for (i, qa) in a.chunks_exact(len).enumerate() {
                for (j, rb) in b.chunks_exact(len).enumerate() {
                    let o = &mut out[i * rows_b + j];
                    *o = f65519::add1(*o, f65519::dot(&qa[vec_len..], &rb[vec_len..]));
                }
            }
        }
    }
    max < P65519
}
