//! ISA-independent SIMD kernels, written once against small vector traits that `avx2.rs` and
//! `avx512.rs` implement.
//!
//! Everything here is `#[inline(always)]` and must only be reached from a
//! `#[target_feature]` function of the matching ISA: once inlined there, the intrinsics inside
//! the trait methods are compiled with that function's features. (Closures are avoided on
//! purpose: a closure is a separate function that would not inherit the features.)

use super::f65519;

/// One SIMD register used as a vector of multiply-accumulate lanes.
///
/// # Safety
/// Implementors promise that `load` reads exactly `LANES` elements (the generic kernels'
/// bounds reasoning relies on it). Callers may only call the methods when the CPU supports the
/// implementor's features.
pub(crate) unsafe trait Mac: Copy {
    /// Element type loaded from memory.
    type Elem: Copy + Default;
    /// Elements per register.
    const LANES: usize;
    /// All-zero accumulator.
    unsafe fn zero() -> Self;
    /// Unaligned load of `LANES` elements from `p`.
    unsafe fn load(p: *const Self::Elem) -> Self;
    /// `acc + a·b`, lane-wise: for 16-bit elements adjacent products are summed into i32
    /// lanes (`vpmaddwd` / `vpdpwssd`); for 32/64-bit elements products wrap.
    unsafe fn mac(acc: Self, a: Self, b: Self) -> Self;
    /// Sum of all accumulator lanes: exact (i32 lanes sign-extended) for 16-bit elements,
    /// wrapping for 32/64-bit elements (callers keep only the low bits).
    unsafe fn hsum(acc: Self) -> i64;
    /// For 16-bit accumulators of F_65519 products: each i32 lane x replaced by
    /// 17·(x >> 16) + (x & 0xffff) ≡ x (mod p), |result| < 2^20. Identity otherwise (the ring
    /// kernels never fold).
    unsafe fn fold(acc: Self) -> Self {
        acc
    }
}

/// A 16-bit multiply-accumulate register whose memory form is a u32 per pair of 16-bit lanes,
/// i.e. one packed F_65519 element (`f65519::pack_split` / `pack_scaled`) per u32. It lets the
/// field matrix product reuse the ring driver with one u32 per element.
#[derive(Clone, Copy)]
pub(crate) struct Pairs<V>(V);

// SAFETY: `load` reads LANES u32 = V::LANES u16, exactly what `V::load` reads.
unsafe impl<V: Mac<Elem = u16>> Mac for Pairs<V> {
    type Elem = u32;
    const LANES: usize = V::LANES / 2;
    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: forwarded contract.
        Self(unsafe { V::zero() })
    }
    #[inline(always)]
    unsafe fn load(p: *const u32) -> Self {
        // SAFETY: forwarded contract; LANES u32 are V::LANES u16.
        Self(unsafe { V::load(p.cast()) })
    }
    #[inline(always)]
    unsafe fn mac(acc: Self, a: Self, b: Self) -> Self {
        // SAFETY: forwarded contract.
        Self(unsafe { V::mac(acc.0, a.0, b.0) })
    }
    #[inline(always)]
    unsafe fn hsum(acc: Self) -> i64 {
        // SAFETY: forwarded contract.
        unsafe { V::hsum(acc.0) }
    }
    #[inline(always)]
    unsafe fn fold(acc: Self) -> Self {
        // SAFETY: forwarded contract.
        Self(unsafe { V::fold(acc.0) })
    }
}

/// Extra 16-bit operations for the F_65519 dot product. Like [`Mac`]'s, the methods may only
/// be called when the CPU supports the implementor's features.
pub(crate) trait V16: Mac<Elem = u16> {
    /// Centred representative (see `f65519::centre`) of every 16-bit lane.
    unsafe fn centre(v: Self) -> Self;
    /// `vpmaddwd`: signed 16×16-bit products, adjacent pairs summed into i32 lanes.
    unsafe fn madd(a: Self, b: Self) -> Self;
    /// Lane-wise i32 addition.
    unsafe fn add32(a: Self, b: Self) -> Self;
    /// Arithmetic shift right of every i32 lane by 16.
    unsafe fn high16(x: Self) -> Self;
    /// Low 16 bits of every i32 lane, zero-extended.
    unsafe fn low16(x: Self) -> Self;
}

/// Σ a_i·b_i over the largest multiple of `V::LANES` elements; returns that sum (as `Mac::hsum`
/// defines it) and how many elements it covered. The caller adds the scalar tail.
///
/// # Safety
/// The CPU must support `V`'s features.
#[inline(always)]
pub(crate) unsafe fn dot<V: Mac>(a: &[V::Elem], b: &[V::Elem]) -> (i64, usize) {
    let n = a.len().min(b.len());
    let vecs = n / V::LANES;
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    // SAFETY: the caller guarantees the features; every load reads LANES elements at an
    // offset below vecs·LANES ≤ n, inside both slices.
    unsafe {
        // Four independent accumulators hide the multiply latency.
        let mut acc = [V::zero(); 4];
        let mut v = 0;
        while v + 4 <= vecs {
            for (u, slot) in acc.iter_mut().enumerate() {
                let off = (v + u) * V::LANES;
                *slot = V::mac(*slot, V::load(pa.add(off)), V::load(pb.add(off)));
            }
            v += 4;
        }
        while v < vecs {
            let off = v * V::LANES;
            acc[0] = V::mac(acc[0], V::load(pa.add(off)), V::load(pb.add(off)));
            v += 1;
        }
        let mut sum = 0i64;
        for slot in acc {
            sum = sum.wrapping_add(V::hsum(slot));
        }
        (sum, vecs * V::LANES)
    }
}

/// Σ a_i·b_i mod p for canonical inputs.
///
/// Both sides are centred, so each `vpmaddwd` lane is exact (|x| ≤ 2·32759² < 2^31); x is
/// then split into x>>16 (signed) and x&0xffff, which are accumulated separately and only
/// combined (x = 2^16·hi + lo) at the end, so no per-step reduction is needed.
///
/// # Safety
/// The CPU must support `V`'s features.
#[inline(always)]
pub(crate) unsafe fn dot_f65519<V: V16>(a: &[u16], b: &[u16]) -> u16 {
    // Per lane and step, |hi| ≤ 2^15 and lo < 2^16: 2^14 steps stay inside i32.
    const FLUSH: usize = 1 << 14;
    let n = a.len().min(b.len());
    let vecs = n / V::LANES;
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut total = 0i64;
    let mut v = 0;
    while v < vecs {
        let end = vecs.min(v + FLUSH);
        // SAFETY: features guaranteed by the caller; offsets below vecs·LANES ≤ n.
        unsafe {
            let (mut hi, mut lo) = (V::zero(), V::zero());
            while v < end {
                let off = v * V::LANES;
                let x = V::madd(V::centre(V::load(pa.add(off))), V::centre(V::load(pb.add(off))));
                hi = V::add32(hi, V::high16(x));
                lo = V::add32(lo, V::low16(x));
                v += 1;
            }
            total += V::hsum(hi) * 65536 + V::hsum(lo);
        }
        total = total.rem_euclid(f65519::P65519 as i64);
    }
    let done = vecs * V::LANES;
    let tail = f65519::dot(&a[done..n], &b[done..n]) as i64;
    f65519::reduce_i64(total + tail)
}

/// The register-blocked inner kernel: adds the products of `MR` query vectors and `NR`
/// database vectors over `steps` registers of K into the `MR·NR` accumulators of `tile`,
/// which stay in registers for the whole call.
///
/// Each step loads one register from each query, then streams one register of each row past
/// them: `MR·NR` multiply-accumulates for `MR + NR` loads, using `MR·NR + MR + 1` vector
/// registers. Runs at most as many steps as every slice holds.
///
/// # Safety
/// The CPU must support `V`'s features.
#[inline(always)]
pub(crate) unsafe fn microkernel<V: Mac, const MR: usize, const NR: usize>(
    q: &[&[V::Elem]; MR],
    r: &[&[V::Elem]; NR],
    steps: usize,
    tile: &mut [[V; NR]; MR],
) {
    let mut steps = steps;
    let mut qp = [core::ptr::null::<V::Elem>(); MR];
    let mut rp = [core::ptr::null::<V::Elem>(); NR];
    for (p, v) in qp.iter_mut().zip(q) {
        steps = steps.min(v.len() / V::LANES);
        *p = v.as_ptr();
    }
    for (p, v) in rp.iter_mut().zip(r) {
        steps = steps.min(v.len() / V::LANES);
        *p = v.as_ptr();
    }
    let mut acc = *tile;
    // SAFETY: features guaranteed by the caller; by the clamping of `steps` above, every load
    // reads LANES elements at an offset below steps·LANES ≤ the slice's length.
    unsafe {
        for s in 0..steps {
            let off = s * V::LANES;
            let mut qv = [V::zero(); MR];
            for (v, p) in qv.iter_mut().zip(qp) {
                *v = V::load(p.add(off));
            }
            for j in 0..NR {
                let rv = V::load(rp[j].add(off));
                for i in 0..MR {
                    acc[i][j] = V::mac(acc[i][j], qv[i], rv);
                }
            }
        }
    }
    *tile = acc;
}
