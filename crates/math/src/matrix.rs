//! Layout helpers for row-major matrices of ring elements.

/// The transpose of a `rows × cols` row-major matrix, in cache-sized blocks.
pub fn transpose<E: Copy>(x: &[E], rows: usize, cols: usize) -> Vec<E> {
    const BLOCK: usize = 32;
    let Some(&first) = x.first() else { return Vec::new() };
    let mut out = vec![first; rows * cols];
    for r0 in (0..rows).step_by(BLOCK) {
        for c0 in (0..cols).step_by(BLOCK) {
            for r in r0..(r0 + BLOCK).min(rows) {
                for c in c0..(c0 + BLOCK).min(cols) {
                    out[c * rows + r] = x[r * cols + c];
                }
            }
        }
    }
    out
}
