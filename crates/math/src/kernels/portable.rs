//! Plain-Rust kernels for the rings Z_2^16, Z_2^32, Z_2^64.
//!
//! These are the `Isa::Portable` level, the scalar tails of the SIMD kernels, and (because they
//! are `#[inline(always)]`) the bodies that the SIMD levels re-compile with AVX2 / AVX-512
//! enabled for the memory-bound element-wise operations, where auto-vectorisation is as good as
//! hand-written intrinsics. Lengths are validated by the caller; loops run over the shorter
//! operand.

/// A machine word used as an element of Z_2^k: all arithmetic wraps.
pub(crate) trait Word: Copy + Default + Send + Sync + 'static {
    fn wadd(self, o: Self) -> Self;
    fn wsub(self, o: Self) -> Self;
    fn wmul(self, o: Self) -> Self;
    /// The low bits of a two's-complement partial sum produced by a SIMD kernel.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn from_i64(v: i64) -> Self;
}

macro_rules! impl_word {
    ($($t:ty),*) => {$(
        impl Word for $t {
            #[inline(always)]
            fn wadd(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)]
            fn wsub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)]
            fn wmul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)]
            fn from_i64(v: i64) -> Self { v as $t }
        }
    )*};
}
impl_word!(u16, u32, u64);

#[inline(always)]
pub(crate) fn add<T: Word>(dst: &mut [T], src: &[T]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = d.wadd(s);
    }
}

#[inline(always)]
pub(crate) fn sub<T: Word>(dst: &mut [T], src: &[T]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = d.wsub(s);
    }
}

#[inline(always)]
pub(crate) fn mul<T: Word>(dst: &mut [T], src: &[T]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = d.wmul(s);
    }
}

#[inline(always)]
pub(crate) fn scalar_mul<T: Word>(dst: &mut [T], s: T) {
    for d in dst.iter_mut() {
        *d = d.wmul(s);
    }
}

#[inline(always)]
pub(crate) fn dot<T: Word>(a: &[T], b: &[T]) -> T {
    a.iter().zip(b).fold(T::default(), |acc, (&x, &y)| acc.wadd(x.wmul(y)))
}

/// `out[i*rows_b + j] = dot(a_i, b_j)`; shapes validated by the caller.
///
/// Rows of `b` are the outer loop so that one database row stays in cache while every query
/// (normally the much smaller matrix) passes over it.
#[inline(always)]
pub(crate) fn gemm<T: Word>(a: &[T], a_rows: &[usize], b: &[T], len: usize, out: &mut [T]) {
    let rows_b = b.len() / len;
    for (j, row) in b.chunks_exact(len).enumerate() {
        for (i, &start) in a_rows.iter().enumerate() {
            out[i * rows_b + j] = dot(&a[start..start + len], row);
        }
    }
}

/// Largest element (0 for an empty slice); used for the cheap canonical-input check.
#[inline(always)]
pub(crate) fn max_u16(v: &[u16]) -> u16 {
    v.iter().fold(0, |m, &x| m.max(x))
}
