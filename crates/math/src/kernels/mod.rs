//! Hot plaintext vector kernels with run-time CPU dispatch.
//!
//! * Element-wise `add`, `sub`, `mul`, `scalar_mul` in place on `dst`, for Z_2^16, Z_2^32,
//!   Z_2^64 (wrapping) and for F_65519 ([`P65519`], canonical `u16` values in `[0, p)`).
//! * `dot_*`: one inner product. `gemm_*`: many, as a blocked matrix product
//!   `out[i·rows_b + j] = dot(a_i, b_j)` of `rows_a` query vectors against `rows_b` database
//!   rows, both row-major with row length `len`; for Z_2^16 to Z_2^128 ([`gemm_u128`] has
//!   kernels of its own, [`Gemm128`], one chosen per level by a short measurement).
//!
//! Every function validates its arguments and returns a [`KernelError`] instead of panicking.
//! The plain names run at [`detected()`]; the `_with` variants run at a given [`Isa`] (or the
//! best available level below it), which is how tests compare every level against a reference.
//!
//! Levels: [`Isa::Portable`] is plain Rust. The SIMD levels recompile the element-wise loops
//! with AVX2 / AVX-512 enabled (they are memory-bound) and use hand-written kernels for the
//! dot and matrix products: `vpmaddwd`/`vpdpwssd` for 16-bit data, `vpmulld`/`vpmullq` for
//! 32/64-bit data; on CPUs with AMX-INT8 the 16-bit ring matrix product runs on the tile
//! unit as three 8-bit products (`amx.rs`). F_65519 products map values to centred representatives so that the signed
//! 16-bit multipliers give exact results, and defer the reduction mod p.
#![deny(unsafe_op_in_unsafe_fn)]

mod api;
mod correlate;
mod dispatch;
mod error;
mod f65519;
mod isa;
mod measure;
mod p32;
mod planner;
mod portable;
mod ring128;
mod threads;

#[cfg(target_arch = "x86_64")]
mod amx;
#[cfg(target_arch = "x86_64")]
mod amx128;
#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod gemm;
#[cfg(target_arch = "x86_64")]
mod ifma;
#[cfg(target_arch = "x86_64")]
mod packed;
#[cfg(target_arch = "x86_64")]
mod simd;

#[cfg(test)]
mod tests;

pub use api::*;
pub use correlate::{Correlation, Packing, MAX_LEVELS as MAX_CORRELATION_LEVELS};
pub use error::KernelError;
pub use f65519::P65519;
pub use isa::{available, detected, Isa, ISA_ENV};
pub use measure::{measure_plain_dot, measure_plain_dot_with, PlainDotMeasurement, PlainDotVariant, MEASURE_QUERIES};
pub use planner::{
    correlation_candidates, correlation_path, host, install_correlation_path, plan_correlation, plan_key,
    remembered_or_measured, CorrelationPath, CorrelationPlan, Host, LeafKernel, PlanOptions, PlanSource, Remembered,
    SAMPLE_ROWS,
};
pub use ring128::Gemm128;
pub use threads::{set_threads, threads};
