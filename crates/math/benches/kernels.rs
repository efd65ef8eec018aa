//! Kernel throughput per instruction-set level.
//!
//! `gemm_*`: 64 query vectors × 1024 database rows, length 12800 (the element throughput
//! criterion reports is dot products per second). `dot_u16`: one length-12800 dot product
//! (element throughput = multiply-adds per second). `correlate_u16`: the service's rotations,
//! 32 queries × 31 lags against 1024 rows of 200 positions of 64 values, by the middle product
//! (element throughput = rotated dot products per second, single thread).
//!
//! `gemm_u128`: a 1024 × 1024 × 1024 product per kernel, single thread (element throughput =
//! multiply-adds per second).
//!
//! Filter as usual, e.g. `cargo bench -p argus-math --bench kernels -- gemm_u16/avx512vnni`.

use std::time::Duration;

use argus_math::kernels::{self, Gemm128, Isa, P65519};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const QUERIES: usize = 64;
const ROWS: usize = 1024;
const LEN: usize = 12800;

fn random_canonical(n: usize, seed: u64) -> Vec<u16> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % P65519 as u64) as u16
        })
        .collect()
}

fn bench_gemm(c: &mut Criterion) {
    let a = random_canonical(QUERIES * LEN, 1);
    let b = random_canonical(ROWS * LEN, 2);
    let mut out = vec![0u16; QUERIES * ROWS];
    for (name, f) in [
        ("gemm_u16", kernels::gemm_u16_with as fn(Isa, &[u16], &[u16], usize, &mut [u16]) -> _),
        ("gemm_f65519", kernels::gemm_f65519_with),
    ] {
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Elements((QUERIES * ROWS) as u64));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(3));
        for isa in kernels::available() {
            group.bench_with_input(BenchmarkId::from_parameter(isa), &isa, |bench, &isa| {
                bench.iter(|| f(isa, &a, &b, LEN, &mut out).expect("valid shapes"))
            });
        }
        group.finish();
    }
}

fn bench_dot(c: &mut Criterion) {
    let a = random_canonical(LEN, 3);
    let b = random_canonical(LEN, 4);
    let mut group = c.benchmark_group("dot_u16");
    group.throughput(Throughput::Elements(LEN as u64));
    for isa in kernels::available() {
        group.bench_with_input(BenchmarkId::from_parameter(isa), &isa, |bench, &isa| {
            bench.iter(|| kernels::dot_u16_with(isa, std::hint::black_box(&a), &b).expect("equal lengths"))
        });
    }
    group.finish();
    let mut group = c.benchmark_group("dot_f65519");
    group.throughput(Throughput::Elements(LEN as u64));
    for isa in kernels::available() {
        group.bench_with_input(BenchmarkId::from_parameter(isa), &isa, |bench, &isa| {
            bench.iter(|| kernels::dot_f65519_with(isa, std::hint::black_box(&a), &b).expect("canonical"))
        });
    }
    group.finish();
}

fn bench_correlate(c: &mut Criterion) {
    let shape = kernels::Correlation { positions: 200, width: 64, lags: 31 };
    let (nq, rows) = (32, ROWS);
    let a = random_canonical(nq * shape.signal_len(), 5);
    let b = random_canonical(rows * shape.row_len(), 6);
    let mut out = vec![0u16; shape.lags * nq * rows];
    let threads = kernels::threads();
    kernels::set_threads(1);
    let mut group = c.benchmark_group("correlate_u16");
    group.throughput(Throughput::Elements((shape.lags * nq * rows) as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for isa in kernels::available() {
        group.bench_with_input(BenchmarkId::from_parameter(isa), &isa, |bench, &isa| {
            bench.iter(|| kernels::correlate_u16_with(isa, shape, None, &a, &b, &mut out).expect("valid shapes"))
        });
    }
    group.finish();
    kernels::set_threads(threads);
}

/// Side of the square u128 product (the protocols' d × d × d matrix products).
const D128: usize = 1024;

/// The u128 product before its kernels: a wrapping dot product per output.
fn gemm_u128_naive(a: &[u128], b: &[u128], len: usize, out: &mut [u128]) {
    let rows_b = b.len() / len;
    for (i, q) in a.chunks_exact(len).enumerate() {
        for (j, r) in b.chunks_exact(len).enumerate() {
            out[i * rows_b + j] = q.iter().zip(r).fold(0, |s: u128, (x, y)| s.wrapping_add(x.wrapping_mul(*y)));
        }
    }
}

/// `gemm_u128`: D128 × D128 × D128 per kernel (forced), the detected level's choice and the old
/// naive loop, on one thread (element throughput = multiply-adds per second).
fn bench_gemm_u128(c: &mut Criterion) {
    let mut x = 7u64;
    let mut random = |n: usize| -> Vec<u128> {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                u128::from(x) << 64 | u128::from(x.rotate_left(17))
            })
            .collect()
    };
    let (a, b) = (random(D128 * D128), random(D128 * D128));
    let mut out = vec![0u128; D128 * D128];
    let threads = kernels::threads();
    kernels::set_threads(1);
    let mut group = c.benchmark_group("gemm_u128");
    group.throughput(Throughput::Elements((D128 * D128 * D128) as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for kernel in Gemm128::available() {
        group.bench_with_input(BenchmarkId::from_parameter(kernel), &kernel, |bench, &kernel| {
            bench.iter(|| kernels::gemm_u128_kernel(kernel, &a, &b, D128, &mut out).expect("valid shapes"))
        });
    }
    group.bench_function("detected", |bench| {
        bench.iter(|| kernels::gemm_u128(&a, &b, D128, &mut out).expect("valid shapes"))
    });
    group.bench_function("naive", |bench| bench.iter(|| gemm_u128_naive(&a, &b, D128, &mut out)));
    group.finish();
    kernels::set_threads(threads);
}

criterion_group!(benches, bench_gemm, bench_dot, bench_correlate, bench_gemm_u128);
criterion_main!(benches);
