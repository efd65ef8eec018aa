//! The thread count of the large matrix products: a process-wide setting, like a BLAS library's,
//! and the split of a product's database rows over that many threads.

use std::sync::atomic::{AtomicUsize, Ordering};

/// 0: every core the process may use.
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// Products below this many multiply-adds run on the calling thread: starting threads costs tens
/// of microseconds, a product this size takes milliseconds.
const PARALLEL_MIN_MACS: usize = 1 << 26;

/// Fewest database rows a thread gets (a few row blocks of the kernel).
const MIN_ROWS_PER_THREAD: usize = 256;

/// Sets how many threads one large matrix product (`gemm_*`) splits its database rows over: 0 (the
/// default) for every core the process may use, 1 for the calling thread only. Process-wide.
pub fn set_threads(n: usize) {
    THREADS.store(n, Ordering::Relaxed);
}

/// The raw setting (0: every core), to restore after a temporary change.
pub(crate) fn setting() -> usize {
    THREADS.load(Ordering::Relaxed)
}

/// The threads a large matrix product uses (see [`set_threads`]).
pub fn threads() -> usize {
    match THREADS.load(Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Runs `f(b_part, out_part)` — one matrix product of all `rows_a` query rows against some of the
/// rows of `b` (`len` each), `out_part` row-major `rows_a × part rows` — over parts of `b` on up
/// to [`threads`] threads, and puts each part's columns into `out` (`rows_a × rows_b`). Small
/// products run as one call on the calling thread. Returns whether every call returned `true`.
pub(crate) fn split_rows<T: Copy + Default + Send + Sync>(
    rows_a: usize,
    b: &[T],
    len: usize,
    out: &mut [T],
    f: impl Fn(&[T], &mut [T]) -> bool + Sync,
) -> bool {
    split_rows_by(rows_a, 1, b, len, out, f)
}

/// [`split_rows`] with `unit` output values per (row of `a`, row of `b`): `out` is `rows_a ×
/// (rows_b · unit)` and each part `rows_a × (part rows · unit)`.
pub(crate) fn split_rows_by<T: Copy + Default + Send + Sync>(
    rows_a: usize,
    unit: usize,
    b: &[T],
    len: usize,
    out: &mut [T],
    f: impl Fn(&[T], &mut [T]) -> bool + Sync,
) -> bool {
    let rows_b = b.len() / len;
    let t = threads().min(rows_b / MIN_ROWS_PER_THREAD).max(1);
    if t == 1 || rows_a.saturating_mul(unit).saturating_mul(rows_b).saturating_mul(len) < PARALLEL_MIN_MACS {
        return f(b, out);
    }
    let per = rows_b.div_ceil(t);
    let parts: Vec<(Vec<T>, bool)> = std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = b
            .chunks(per * len)
            .map(|bp| {
                s.spawn(move || {
                    let mut o = vec![T::default(); rows_a * (bp.len() / len) * unit];
                    let ok = f(bp, &mut o);
                    (o, ok)
                })
            })
            .collect();
        // A kernel does not panic; if one did, its panic is re-raised here.
        handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    let mut ok = true;
    for (k, (part, part_ok)) in parts.iter().enumerate() {
        ok &= part_ok;
        let n = part.len() / rows_a;
        for (i, row) in part.chunks_exact(n).enumerate() {
            out[(i * rows_b + k * per) * unit..][..n].copy_from_slice(row);
        }
    }
    ok
}
