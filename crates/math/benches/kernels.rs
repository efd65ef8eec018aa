//! Kernel throughput per instruction-set level.
//!
//! `gemm_*`: 64 query vectors × 1024 database rows, length 12800 (the element throughput
//! criterion reports is dot products per second). `dot_u16`: one length-12800 dot product
//! (element throughput = multiply-adds per second). `correlate_u16`: the service's rotations,
//! 32 queries × 31 lags against 1024 rows of 200 positions of 64 values, by the middle product
//! (element throughput = rotated dot products per second, single thread).
//!
//! Filter as usual, e.g. `cargo bench -p argus-math --bench kernels -- gemm_u16/avx512vnni`.

use std::time::Duration;

use argus_math::kernels::{self, Isa, P65519};
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

criterion_group!(benches, bench_gemm, bench_dot, bench_correlate);
criterion_main!(benches);
