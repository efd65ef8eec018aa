//! Matrix products mod 2^128 on `u128`: the plain-Rust kernel, and the choice among the
//! kernels this CPU can run ([`Gemm128`]).
//!
//! Three kernels, one contract (`out[i·rows_b + j] = Σ_k a[a_rows[i] + k]·b[j·len + k]` mod
//! 2^128, shapes validated by the caller):
//!
//! * [`Gemm128::Portable`]: plain Rust, Winograd's pairing: one `u128` product (three 64-bit
//!   multiplies) per two multiply-adds ([`gemm_portable`]).
//! * [`Gemm128::Ifma`]: AVX-512 IFMA on 51-bit limbs with the same pairing: nine 8-lane
//!   IFMA and six additions per two multiply-adds of eight outputs (`ifma.rs`).
//! * [`Gemm128::Amx`]: the AMX-INT8 tile unit on bytes, 136 byte products per multiply-add,
//!   summed 1024 at a time (`amx128.rs`).
//!
//! Which one a level runs is decided by a short measurement the first time that level needs it
//! ([`chosen`]), among the SIMD kernels the level allows. The plain-Rust kernel is only the
//! fallback where there is none: it issues about ten times the instructions per multiply-add
//! of either SIMD kernel (1.5 scalar 64-bit multiplies and their additions, against 15 vector
//! instructions per 16 for IFMA, or the tile unit's thousand byte products per cycle), so
//! timing it could only cost time.

use std::sync::OnceLock;

use super::isa::{self, Isa};

/// A kernel of the matrix product mod 2^128 ([`super::gemm_u128`]), lowest first: a kernel
/// needs the features of the ones before it, except that IFMA is an AVX-512 extension that
/// some AVX-512 CPUs lack (so AMX does not imply it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Gemm128 {
    /// Plain Rust, scalar 64-bit multiplies.
    Portable,
    /// AVX-512 IFMA (`vpmadd52luq`/`vpmadd52huq`) on 51-bit limbs; needs the [`Isa::Avx512`]
    /// level and the `avx512ifma` feature.
    Ifma,
    /// The AMX-INT8 tile unit on bytes; needs the [`Isa::Amx`] level.
    Amx,
}

impl Gemm128 {
    /// Every kernel, lowest first.
    pub const ALL: [Gemm128; 3] = [Gemm128::Portable, Gemm128::Ifma, Gemm128::Amx];

    /// A lower-case name, for benchmark labels and messages.
    pub fn name(self) -> &'static str {
        match self {
            Gemm128::Portable => "portable",
            Gemm128::Ifma => "ifma",
            Gemm128::Amx => "amx",
        }
    }

    /// Every kernel this CPU can run (independent of [`super::ISA_ENV`]), lowest first.
    pub fn available() -> Vec<Gemm128> {
        Gemm128::ALL.into_iter().filter(|k| k.runs_at(isa::hardware())).collect()
    }

    /// Whether the kernel may run at `level` (on this CPU).
    fn runs_at(self, level: Isa) -> bool {
        let level = level.min(isa::hardware());
        match self {
            Gemm128::Portable => true,
            Gemm128::Ifma => level >= Isa::Avx512 && ifma_detected(),
            Gemm128::Amx => level >= Isa::Amx,
        }
    }

    /// The kernel itself if this CPU runs it, else the best one below it that it does.
    pub(crate) fn or_below(self) -> Gemm128 {
        Gemm128::ALL.into_iter().rev().find(|k| *k <= self && k.runs_at(isa::hardware())).unwrap_or(Gemm128::Portable)
    }
}

impl std::fmt::Display for Gemm128 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(target_arch = "x86_64")]
fn ifma_detected() -> bool {
    std::arch::is_x86_feature_detected!("avx512ifma")
}

#[cfg(not(target_arch = "x86_64"))]
fn ifma_detected() -> bool {
    false
}

/// Runs `kernel` (which this CPU must run: see [`Gemm128::or_below`]) on one part of a product.
pub(crate) fn run(kernel: Gemm128, a: &[u128], a_rows: &[usize], b: &[u128], len: usize, out: &mut [u128]) {
    match kernel {
        Gemm128::Portable => gemm_portable(a, a_rows, b, len, out),
        #[cfg(target_arch = "x86_64")]
        Gemm128::Ifma => match super::ifma::Ifma::get() {
            Some(token) => token.gemm_u128(a, a_rows, b, len, out),
            None => gemm_portable(a, a_rows, b, len, out),
        },
        #[cfg(target_arch = "x86_64")]
        Gemm128::Amx => match super::amx::Amx::get() {
            Some(token) => super::amx128::gemm_u128(token, a, a_rows, b, len, out),
            None => gemm_portable(a, a_rows, b, len, out),
        },
        #[cfg(not(target_arch = "x86_64"))]
        _ => gemm_portable(a, a_rows, b, len, out),
    }
}

/// The kernel a level runs: the only SIMD kernel it allows, the faster of several as measured
/// on first use ([`fastest`]), or the plain-Rust one if it allows none. Decided once per level.
pub(crate) fn chosen(level: Isa) -> Gemm128 {
    static CHOICE: [OnceLock<Gemm128>; Isa::ALL.len()] = [const { OnceLock::new() }; Isa::ALL.len()];
    let level = isa::resolve(level);
    // `Isa` declares its levels in the order of `Isa::ALL`, so this indexes that array.
    *CHOICE[level as usize].get_or_init(|| {
        let simd: Vec<Gemm128> =
            Gemm128::ALL.into_iter().filter(|&k| k != Gemm128::Portable && k.runs_at(level)).collect();
        match simd[..] {
            [] => Gemm128::Portable,
            [only] => only,
            _ => fastest(&simd),
        }
    })
}

/// Query rows, database rows and length of the product [`fastest`] times: a few of the AMX
/// kernel's 32 × 32 output blocks and of the IFMA kernel's 512-element K-blocks, so that every
/// kernel runs its steady-state loops (about 2 ms per call), and [`fastest`]'s rounds.
const PROBE: (usize, usize, usize) = (64, 64, 1024);
const PROBE_ROUNDS: usize = 3;

/// The kernel among `kernels` that computes one [`PROBE`]-sized product fastest on the calling
/// thread (`measure::fastest_of`).
fn fastest(kernels: &[Gemm128]) -> Gemm128 {
    let (ra, rb, len) = PROBE;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        u128::from(x) << 64 | u128::from(x.rotate_left(29))
    };
    let a: Vec<u128> = (0..ra * len).map(|_| next()).collect();
    let b: Vec<u128> = (0..rb * len).map(|_| next()).collect();
    let a_rows: Vec<usize> = (0..ra).map(|i| i * len).collect();
    let (a, a_rows, b) = (&a, &a_rows, &b);
    let mut runs: Vec<Box<dyn FnMut()>> = kernels
        .iter()
        .map(|&k| {
            let mut out = vec![0u128; ra * rb];
            Box::new(move || run(k, a, a_rows, b, len, &mut out)) as Box<dyn FnMut()>
        })
        .collect();
    let mut refs: Vec<&mut dyn FnMut()> = runs.iter_mut().map(|f| &mut **f as &mut dyn FnMut()).collect();
    kernels[super::measure::fastest_of(&mut refs, PROBE_ROUNDS)]
}

/// Blocking of the plain-Rust kernel: elements of K per block (even, so that Winograd's pairs
/// never straddle two), query rows per block (16 × 1024 × 16 B = 256 KiB, kept in L2 while
/// the database rows pass by), and the tile: 2 query rows × 2 database rows share their loads
/// (8 accumulator registers; larger tiles spill).
const PORTABLE_KC: usize = 1024;
const PORTABLE_MB: usize = 16;
const MR: usize = 2;
const NR: usize = 2;

/// Σ_m x[2m]·x[2m+1] (wrapping) over the whole pairs of `x`.
fn pair_sum(x: &[u128]) -> u128 {
    x.chunks_exact(2).fold(0, |s: u128, p| s.wrapping_add(p[0].wrapping_mul(p[1])))
}

/// Starts a product by Winograd's pairing (see [`gemm_portable`]): sets every output to its
/// corrections, `a_i,last·b_j,last − Σ_m a_i,2m·a_i,2m+1 − Σ_m b_j,2m·b_j,2m+1` (the first
/// term only for odd `len`), and returns the length of the paired part, whose pair sums the
/// kernel then adds.
pub(crate) fn winograd_start(a: &[u128], a_rows: &[usize], b: &[u128], len: usize, out: &mut [u128]) -> usize {
    let rows_b = b.len() / len;
    let even = len - len % 2;
    let b_corr: Vec<u128> = b.chunks_exact(len).map(pair_sum).collect();
    for (i, &s) in a_rows.iter().enumerate() {
        let q = &a[s..s + len];
        let a_corr = pair_sum(q);
        for (j, (o, r)) in out[i * rows_b..][..rows_b].iter_mut().zip(b.chunks_exact(len)).enumerate() {
            let last = if even < len { q[even].wrapping_mul(r[even]) } else { 0 };
            *o = last.wrapping_sub(a_corr).wrapping_sub(b_corr[j]);
        }
    }
    even
}

/// Plain-Rust matrix product mod 2^128 (see the module docs for the contract).
///
/// Winograd's pairing (Z_2^128 is commutative) halves the multiplies:
///
/// ```text
/// Σ_k a_k·b_k = Σ_m (a_2m + b_2m+1)·(a_2m+1 + b_2m) − Σ_m a_2m·a_2m+1 − Σ_m b_2m·b_2m+1
/// ```
///
/// (plus a_k·b_k for an odd last k), and the two corrections are one sum per row. `out` starts
/// at the corrections and every K-block adds its tiles' pair sums to it.
pub(crate) fn gemm_portable(a: &[u128], a_rows: &[usize], b: &[u128], len: usize, out: &mut [u128]) {
    let rows_b = b.len() / len;
    let even = winograd_start(a, a_rows, b, len, out);
    for k0 in (0..even).step_by(PORTABLE_KC) {
        let kn = PORTABLE_KC.min(even - k0);
        for i0 in (0..a_rows.len()).step_by(PORTABLE_MB) {
            let block = &a_rows[i0..(i0 + PORTABLE_MB).min(a_rows.len())];
            for j0 in (0..rows_b).step_by(NR) {
                let r: [&[u128]; NR] = std::array::from_fn(|v| &b[(j0 + v).min(rows_b - 1) * len + k0..][..kn]);
                for (t, rows) in block.chunks(MR).enumerate() {
                    let q: [&[u128]; MR] = std::array::from_fn(|u| &a[rows[u.min(rows.len() - 1)] + k0..][..kn]);
                    let sums = tile(q, r);
                    // Repeated edge rows and columns computed twice; added once.
                    for (u, row) in sums.iter().enumerate().take(rows.len()) {
                        let o = &mut out[(i0 + MR * t + u) * rows_b + j0..][..(rows_b - j0).min(NR)];
                        for (d, s) in o.iter_mut().zip(row) {
                            *d = d.wrapping_add(*s);
                        }
                    }
                }
            }
        }
    }
}

/// An MR × NR tile of Winograd pair sums Σ_m (q_2m + r_2m+1)·(q_2m+1 + r_2m) over equal,
/// even-length rows.
#[inline(always)]
fn tile(q: [&[u128]; MR], r: [&[u128]; NR]) -> [[u128; NR]; MR] {
    let n = q[0].len() / 2;
    let (q, r) = (q.map(|x| &x[..2 * n]), r.map(|x| &x[..2 * n]));
    let mut s = [[0u128; NR]; MR];
    for m in 0..n {
        let y: [(u128, u128); NR] = std::array::from_fn(|v| (r[v][2 * m], r[v][2 * m + 1]));
        for (u, su) in s.iter_mut().enumerate() {
            let x = (q[u][2 * m], q[u][2 * m + 1]);
            for (sv, y) in su.iter_mut().zip(&y) {
                *sv = sv.wrapping_add(x.0.wrapping_add(y.1).wrapping_mul(x.1.wrapping_add(y.0)));
            }
        }
    }
    s
}
