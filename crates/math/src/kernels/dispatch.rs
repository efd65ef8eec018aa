//! The internal kernel interface every level implements, and the choice of implementation.
//!
//! Public functions validate their arguments and then call one `&'static dyn Kernels`; the
//! indirect call costs a few nanoseconds per kernel call, not per element.

use super::isa::{self, Isa};
use super::{f65519, portable, ring128};

/// One implementation of every kernel. Arguments are already validated: equal lengths,
/// `len > 0` and consistent shapes for the matrix products, canonical field inputs except
/// where noted.
pub(crate) trait Kernels: Sync {
    /// The level this implementation represents.
    fn isa(&self) -> Isa;

    fn add_u16(&self, dst: &mut [u16], src: &[u16]);
    fn sub_u16(&self, dst: &mut [u16], src: &[u16]);
    fn mul_u16(&self, dst: &mut [u16], src: &[u16]);
    fn scalar_mul_u16(&self, dst: &mut [u16], s: u16);
    fn add_u32(&self, dst: &mut [u32], src: &[u32]);
    fn sub_u32(&self, dst: &mut [u32], src: &[u32]);
    fn mul_u32(&self, dst: &mut [u32], src: &[u32]);
    fn scalar_mul_u32(&self, dst: &mut [u32], s: u32);
    fn add_u64(&self, dst: &mut [u64], src: &[u64]);
    fn sub_u64(&self, dst: &mut [u64], src: &[u64]);
    fn mul_u64(&self, dst: &mut [u64], src: &[u64]);
    fn scalar_mul_u64(&self, dst: &mut [u64], s: u64);
    fn add_f65519(&self, dst: &mut [u16], src: &[u16]);
    fn sub_f65519(&self, dst: &mut [u16], src: &[u16]);
    fn mul_f65519(&self, dst: &mut [u16], src: &[u16]);
    fn scalar_mul_f65519(&self, dst: &mut [u16], s: u16);
    /// Largest element, for the canonical-input checks (any input).
    fn max_u16(&self, v: &[u16]) -> u16;

    fn dot_u16(&self, a: &[u16], b: &[u16]) -> u16;
    fn dot_u32(&self, a: &[u32], b: &[u32]) -> u32;
    fn dot_u64(&self, a: &[u64], b: &[u64]) -> u64;
    fn dot_f65519(&self, a: &[u16], b: &[u16]) -> u16;

    fn gemm_u16(&self, a: &[u16], a_rows: &[usize], b: &[u16], len: usize, out: &mut [u16]);
    fn gemm_u32(&self, a: &[u32], a_rows: &[usize], b: &[u32], len: usize, out: &mut [u32]);
    fn gemm_u64(&self, a: &[u64], a_rows: &[usize], b: &[u64], len: usize, out: &mut [u64]);
    /// The level's [`Gemm128`](super::Gemm128) kernel (`ring128::chosen`).
    fn gemm_u128(&self, a: &[u128], a_rows: &[usize], b: &[u128], len: usize, out: &mut [u128]);
    /// Inputs not yet checked for canonicity: returns `false` (and unspecified `out`) if some
    /// input is ≥ p, so implementations can fuse the check into a pass they make anyway.
    fn gemm_f65519(&self, a: &[u16], b: &[u16], len: usize, out: &mut [u16]) -> bool;
}

/// The plain-Rust level.
pub(crate) struct Portable;

impl Kernels for Portable {
    fn isa(&self) -> Isa {
        Isa::Portable
    }
    fn add_u16(&self, dst: &mut [u16], src: &[u16]) {
        portable::add(dst, src)
    }
    fn sub_u16(&self, dst: &mut [u16], src: &[u16]) {
        portable::sub(dst, src)
    }
    fn mul_u16(&self, dst: &mut [u16], src: &[u16]) {
        portable::mul(dst, src)
    }
    fn scalar_mul_u16(&self, dst: &mut [u16], s: u16) {
        portable::scalar_mul(dst, s)
    }
    fn add_u32(&self, dst: &mut [u32], src: &[u32]) {
        portable::add(dst, src)
    }
    fn sub_u32(&self, dst: &mut [u32], src: &[u32]) {
        portable::sub(dst, src)
    }
    fn mul_u32(&self, dst: &mut [u32], src: &[u32]) {
        portable::mul(dst, src)
    }
    fn scalar_mul_u32(&self, dst: &mut [u32], s: u32) {
        portable::scalar_mul(dst, s)
    }
    fn add_u64(&self, dst: &mut [u64], src: &[u64]) {
        portable::add(dst, src)
    }
    fn sub_u64(&self, dst: &mut [u64], src: &[u64]) {
        portable::sub(dst, src)
    }
    fn mul_u64(&self, dst: &mut [u64], src: &[u64]) {
        portable::mul(dst, src)
    }
    fn scalar_mul_u64(&self, dst: &mut [u64], s: u64) {
        portable::scalar_mul(dst, s)
    }
    fn add_f65519(&self, dst: &mut [u16], src: &[u16]) {
        f65519::add(dst, src)
    }
    fn sub_f65519(&self, dst: &mut [u16], src: &[u16]) {
        f65519::sub(dst, src)
    }
    fn mul_f65519(&self, dst: &mut [u16], src: &[u16]) {
        f65519::mul(dst, src)
    }
    fn scalar_mul_f65519(&self, dst: &mut [u16], s: u16) {
        f65519::scalar_mul(dst, s)
    }
    fn max_u16(&self, v: &[u16]) -> u16 {
        portable::max_u16(v)
    }
    fn dot_u16(&self, a: &[u16], b: &[u16]) -> u16 {
        portable::dot(a, b)
    }
    fn dot_u32(&self, a: &[u32], b: &[u32]) -> u32 {
        portable::dot(a, b)
    }
    fn dot_u64(&self, a: &[u64], b: &[u64]) -> u64 {
        portable::dot(a, b)
    }
    fn dot_f65519(&self, a: &[u16], b: &[u16]) -> u16 {
        f65519::dot(a, b)
    }
    fn gemm_u16(&self, a: &[u16], a_rows: &[usize], b: &[u16], len: usize, out: &mut [u16]) {
        portable::gemm(a, a_rows, b, len, out)
    }
    fn gemm_u32(&self, a: &[u32], a_rows: &[usize], b: &[u32], len: usize, out: &mut [u32]) {
        portable::gemm(a, a_rows, b, len, out)
    }
    fn gemm_u64(&self, a: &[u64], a_rows: &[usize], b: &[u64], len: usize, out: &mut [u64]) {
        portable::gemm(a, a_rows, b, len, out)
    }
    fn gemm_u128(&self, a: &[u128], a_rows: &[usize], b: &[u128], len: usize, out: &mut [u128]) {
        ring128::gemm_portable(a, a_rows, b, len, out)
    }
    fn gemm_f65519(&self, a: &[u16], b: &[u16], len: usize, out: &mut [u16]) -> bool {
        // Checked up front: the portable product is slow enough that one more pass is noise.
        if portable::max_u16(a).max(portable::max_u16(b)) >= f65519::P65519 {
            return false;
        }
        f65519::gemm(a, b, len, out);
        true
    }
}

/// The implementation for the best available level ≤ `requested`.
pub(crate) fn backend(requested: Isa) -> &'static dyn Kernels {
    let level = isa::resolve(requested);
    #[cfg(target_arch = "x86_64")]
    {
        use super::{amx, avx2, avx512};
        // Each `get` re-checks its features and returns `None` if they are missing, so a
        // mistake in `resolve` degrades to a lower level instead of executing illegal code.
        let simd: Option<&'static dyn Kernels> = match level {
            Isa::Amx => amx::Amx::get().map(|k| k as &dyn Kernels),
            Isa::Avx512Vnni => avx512::Avx512Vnni::get().map(|k| k as &dyn Kernels),
            Isa::Avx512 => avx512::Avx512::get().map(|k| k as &dyn Kernels),
            Isa::Avx2 => avx2::Avx2::get().map(|k| k as &dyn Kernels),
            Isa::Portable => None,
        };
        if let Some(k) = simd {
            return k;
        }
    }
    let _ = level;
    &Portable
}

/// Implements [`Kernels`] for a SIMD token type. The element-wise operations and the
/// canonical check reuse the portable loops, recompiled with the target's features (they are
/// memory-bound, and the auto-vectorised code is as fast as intrinsics); the dot products and
/// matrix products use the hand-written kernels in `simd.rs` / `gemm.rs`.
///
/// Every method is a safe wrapper around a nested `#[target_feature]` function; the token type
/// must only be constructible after the features were detected.
#[cfg(target_arch = "x86_64")]
macro_rules! impl_simd_kernels {
    (
        token: $token:ty,
        isa: $isa:expr,
        features: $feat:tt,
        v16: $v16:ty,
        v32: $v32:ty,
        v64: $v64:ty,
        tile: ($mr:literal, $nr:literal),
        ring: $ring:expr,
        field: $field:expr
        $(, gemm_u16: $g16:path, gemm_f65519: $gf:path)? $(,)?
    ) => {
        impl $crate::kernels::dispatch::Kernels for $token {
            fn isa(&self) -> $crate::kernels::Isa {
                $isa
            }
            impl_simd_kernels!(@binary $feat, add_u16, u16, $crate::kernels::portable::add);
            impl_simd_kernels!(@binary $feat, sub_u16, u16, $crate::kernels::portable::sub);
            impl_simd_kernels!(@binary $feat, mul_u16, u16, $crate::kernels::portable::mul);
            impl_simd_kernels!(@scalar $feat, scalar_mul_u16, u16, $crate::kernels::portable::scalar_mul);
            impl_simd_kernels!(@binary $feat, add_u32, u32, $crate::kernels::portable::add);
            impl_simd_kernels!(@binary $feat, sub_u32, u32, $crate::kernels::portable::sub);
            impl_simd_kernels!(@binary $feat, mul_u32, u32, $crate::kernels::portable::mul);
            impl_simd_kernels!(@scalar $feat, scalar_mul_u32, u32, $crate::kernels::portable::scalar_mul);
            impl_simd_kernels!(@binary $feat, add_u64, u64, $crate::kernels::portable::add);
            impl_simd_kernels!(@binary $feat, sub_u64, u64, $crate::kernels::portable::sub);
            impl_simd_kernels!(@binary $feat, mul_u64, u64, $crate::kernels::portable::mul);
            impl_simd_kernels!(@scalar $feat, scalar_mul_u64, u64, $crate::kernels::portable::scalar_mul);
            impl_simd_kernels!(@binary $feat, add_f65519, u16, $crate::kernels::f65519::add);
            impl_simd_kernels!(@binary $feat, sub_f65519, u16, $crate::kernels::f65519::sub);
            impl_simd_kernels!(@binary $feat, mul_f65519, u16, $crate::kernels::f65519::mul);
            impl_simd_kernels!(@scalar $feat, scalar_mul_f65519, u16, $crate::kernels::f65519::scalar_mul);

            fn max_u16(&self, v: &[u16]) -> u16 {
                #[target_feature(enable = $feat)]
                fn imp(v: &[u16]) -> u16 {
                    $crate::kernels::portable::max_u16(v)
                }
                // SAFETY: the token exists only if the CPU has these features.
                unsafe { imp(v) }
            }

            impl_simd_kernels!(@dot $feat, dot_u16, u16, $v16);
            impl_simd_kernels!(@dot $feat, dot_u32, u32, $v32);
            impl_simd_kernels!(@dot $feat, dot_u64, u64, $v64);

            fn dot_f65519(&self, a: &[u16], b: &[u16]) -> u16 {
                #[target_feature(enable = $feat)]
                fn imp(a: &[u16], b: &[u16]) -> u16 {
                    // SAFETY: compiled with the features of the vector type, and only called
                    // through the token.
                    unsafe { $crate::kernels::simd::dot_f65519::<$v16>(a, b) }
                }
                // SAFETY: the token exists only if the CPU has these features.
                unsafe { imp(a, b) }
            }

            impl_simd_kernels!(@gemm16 [$($g16)?] $feat, $v16, $mr, $nr, $ring);
            impl_simd_kernels!(@gemm $feat, gemm_u32, u32, $v32, $mr, $nr, $ring);
            impl_simd_kernels!(@gemm $feat, gemm_u64, u64, $v64, $mr, $nr, $ring);

            fn gemm_u128(&self, a: &[u128], a_rows: &[usize], b: &[u128], len: usize, out: &mut [u128]) {
                let kernel = $crate::kernels::ring128::chosen($isa);
                $crate::kernels::ring128::run(kernel, a, a_rows, b, len, out)
            }

            impl_simd_kernels!(@gemmf [$($gf)?] $feat, $v16, $mr, $nr, $field);
        }
    };
    (@binary $feat:tt, $name:ident, $t:ty, $body:path) => {
        fn $name(&self, dst: &mut [$t], src: &[$t]) {
            #[target_feature(enable = $feat)]
            fn imp(dst: &mut [$t], src: &[$t]) {
                $body(dst, src)
            }
            // SAFETY: the token exists only if the CPU has these features.
            unsafe { imp(dst, src) }
        }
    };
    (@scalar $feat:tt, $name:ident, $t:ty, $body:path) => {
        fn $name(&self, dst: &mut [$t], s: $t) {
            #[target_feature(enable = $feat)]
            fn imp(dst: &mut [$t], s: $t) {
                $body(dst, s)
            }
            // SAFETY: the token exists only if the CPU has these features.
            unsafe { imp(dst, s) }
        }
    };
    (@dot $feat:tt, $name:ident, $t:ty, $v:ty) => {
        fn $name(&self, a: &[$t], b: &[$t]) -> $t {
            #[target_feature(enable = $feat)]
            fn imp(a: &[$t], b: &[$t]) -> $t {
                use $crate::kernels::portable::Word;
                // SAFETY: compiled with the features of the vector type, and only called
                // through the token.
                let (sum, done) = unsafe { $crate::kernels::simd::dot::<$v>(a, b) };
                <$t>::from_i64(sum).wadd($crate::kernels::portable::dot(&a[done..], &b[done..]))
            }
            // SAFETY: the token exists only if the CPU has these features.
            unsafe { imp(a, b) }
        }
    };
    (@gemm16 [] $feat:tt, $v:ty, $mr:literal, $nr:literal, $kc:expr) => {
        impl_simd_kernels!(@gemm $feat, gemm_u16, u16, $v, $mr, $nr, $kc);
    };
    // A level-specific 16-bit matrix product: an `unsafe fn` with `gemm_u16`'s arguments whose
    // only requirement is the level's features.
    (@gemm16 [$g16:path] $feat:tt, $v:ty, $mr:literal, $nr:literal, $kc:expr) => {
        fn gemm_u16(&self, a: &[u16], a_rows: &[usize], b: &[u16], len: usize, out: &mut [u16]) {
            // SAFETY: the token exists only if the CPU has the level's features.
            unsafe { $g16(a, a_rows, b, len, out) }
        }
    };
    (@gemmf [] $feat:tt, $v:ty, $mr:literal, $nr:literal, $field:expr) => {
        fn gemm_f65519(&self, a: &[u16], b: &[u16], len: usize, out: &mut [u16]) -> bool {
            #[target_feature(enable = $feat)]
            fn imp(a: &[u16], b: &[u16], len: usize, out: &mut [u16]) -> bool {
                // SAFETY: compiled with the features of the vector type, and only called
                // through the token.
                unsafe { $crate::kernels::gemm::gemm_f65519::<$v, $mr, $nr>(a, b, len, out, $field) }
            }
            // SAFETY: the token exists only if the CPU has these features.
            unsafe { imp(a, b, len, out) }
        }
    };
    (@gemmf [$gf:path] $feat:tt, $v:ty, $mr:literal, $nr:literal, $field:expr) => {
        fn gemm_f65519(&self, a: &[u16], b: &[u16], len: usize, out: &mut [u16]) -> bool {
            // SAFETY: the token exists only if the CPU has the level's features.
            unsafe { $gf(a, b, len, out) }
        }
    };
    (@gemm $feat:tt, $name:ident, $t:ty, $v:ty, $mr:literal, $nr:literal, $kc:expr) => {
        fn $name(&self, a: &[$t], a_rows: &[usize], b: &[$t], len: usize, out: &mut [$t]) {
            #[target_feature(enable = $feat)]
            fn imp(a: &[$t], a_rows: &[usize], b: &[$t], len: usize, out: &mut [$t]) {
                // SAFETY: compiled with the features of the vector type, and only called
                // through the token.
                unsafe { $crate::kernels::gemm::gemm_ring::<$v, $t, $mr, $nr>(a, a_rows, b, len, out, $kc) }
            }
            // SAFETY: the token exists only if the CPU has these features.
            unsafe { imp(a, a_rows, b, len, out) }
        }
    };
}

#[cfg(target_arch = "x86_64")]
pub(crate) use impl_simd_kernels;

/// Defines the token type of a kernel level: a unit struct that only its `get()` hands out, and
/// only once detection found the level (`isa::hardware() >= $isa`), so holding one proves the
/// features are there.
#[cfg(target_arch = "x86_64")]
macro_rules! level_token {
    ($name:ident, $isa:expr) => {
        #[doc = concat!("Token for [`", stringify!($isa), "`]: only [`", stringify!($name), "::get`] hands one out, after detection.")]
        pub(crate) struct $name {
            _private: (),
        }

        impl $name {
            /// The token, if the CPU (and, for AMX, the OS) support the level.
            pub(crate) fn get() -> Option<&'static Self> {
                static TOKEN: $name = $name { _private: () };
                (super::isa::hardware() >= $isa).then_some(&TOKEN)
            }
        }
    };
}
#[cfg(target_arch = "x86_64")]
pub(crate) use level_token;
