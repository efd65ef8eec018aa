//! Plaintext k-means in exact integer arithmetic: the oracle the MPC version must equal bit for bit.
//!
//! The algorithm of the paper's section 8.4, with every rounding choice fixed:
//!
//! 1. point `i` starts in cluster `i mod k`;
//! 2. repeat: (a) [`centroids`]: each coordinate of `c_j` is `floor(sum of its points / size)`, and a
//!    cluster left empty keeps its previous centroid; (b) [`assign`]: each point goes to the cluster
//!    with the smallest squared Euclidean distance, ties to the lowest cluster index; (c) one more
//!    iteration; stop, converged, if no point moved, or unconverged at `max_iterations`;
//! 3. the final centroids are computed again from the final assignment (empty clusters keep those of
//!    the last step (a)); when converged they equal those of the last step (a).
//!
//! Sums and distances are exact (`u128`, or 192 bits when `cols · max²` would not fit `u128`).

/// Why k-means could not run, or why the data does not fit the MPC ring.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KmeansError {
    /// `k` was 0.
    #[error("k must be at least 1")]
    NoClusters,
    /// More clusters than points.
    #[error("k = {k} is more than the {rows} points")]
    TooManyClusters {
        /// Clusters asked for.
        k: usize,
        /// Points.
        rows: usize,
    },
    /// No points.
    #[error("no points")]
    NoPoints,
    /// `points.len()` is not `rows · cols`.
    #[error("{len} values are not {rows} rows × {cols} columns")]
    Shape {
        /// `points.len()`.
        len: usize,
        /// Rows claimed.
        rows: usize,
        /// Columns claimed.
        cols: usize,
    },
    /// A ring width outside `3..=128`.
    #[error("ring of {ring_bits} bits: must be between 3 and 128")]
    InvalidRing {
        /// The ring width asked for.
        ring_bits: u32,
    },
    /// `cols · max²` is not below `2^(ring_bits − 2)`.
    #[error(
        "squared distances need {needed_bits} bits ({cols} columns × the largest value squared) but a \
         {ring_bits}-bit ring compares only values below 2^{}: use fewer decimals (a smaller scale), fewer \
         columns or a larger ring",
        .ring_bits - 2
    )]
    DistanceTooLarge {
        /// Bits of `cols · max²`.
        needed_bits: u32,
        /// Columns.
        cols: usize,
        /// The ring width.
        ring_bits: u32,
    },
    /// `rows · max` is not below `2^(ring_bits − 2)`.
    #[error(
        "coordinate sums need {needed_bits} bits ({rows} rows × the largest value) but a {ring_bits}-bit \
         ring compares only values below 2^{}: use fewer decimals (a smaller scale) or a larger ring",
        .ring_bits - 2
    )]
    SumTooLarge {
        /// Bits of `rows · max`.
        needed_bits: u32,
        /// Rows.
        rows: usize,
        /// The ring width.
        ring_bits: u32,
    },
}

/// The result of [`kmeans`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// `k × cols` centroids, row-major, from the final assignment.
    pub centroids: Vec<u64>,
    /// The cluster of each point.
    pub assignment: Vec<usize>,
    /// Points per cluster.
    pub sizes: Vec<u64>,
    /// Assignment steps run (the last one, when converged, moved nothing).
    pub iterations: usize,
    /// Whether the last step moved no point (`false`: stopped at `max_iterations`).
    pub converged: bool,
}

fn check_shape(points: &[u64], rows: usize, cols: usize) -> Result<(), KmeansError> {
    if rows == 0 {
        return Err(KmeansError::NoPoints);
    }
    if rows.checked_mul(cols) != Some(points.len()) {
        return Err(KmeansError::Shape { len: points.len(), rows, cols });
    }
    Ok(())
}

/// k-means on `rows × cols` points (row-major), exactly as described in the [module docs](self).
/// `max_iterations: None` runs until no point moves; `Some(0)` returns the initial round-robin
/// clustering unconverged.
pub fn kmeans(
    points: &[u64],
    rows: usize,
    cols: usize,
    k: usize,
    max_iterations: Option<usize>,
) -> Result<Outcome, KmeansError> {
    check_shape(points, rows, cols)?;
    if k == 0 {
        return Err(KmeansError::NoClusters);
    }
    if k > rows {
        return Err(KmeansError::TooManyClusters { k, rows });
    }
    let mut assignment: Vec<usize> = (0..rows).map(|i| i % k).collect();
    // Never read: the round-robin start leaves no cluster empty since k ≤ rows.
    let mut centroid = vec![0u64; k * cols];
    let mut iterations = 0;
    let converged = loop {
        if max_iterations.is_some_and(|m| iterations >= m) {
            break false;
        }
        centroid = centroids(points, cols, k, &assignment, &centroid);
        let next = assign(points, cols, k, &centroid);
        iterations += 1;
        if next == assignment {
            break true;
        }
        assignment = next;
    };
    let centroids = centroids(points, cols, k, &assignment, &centroid);
    Ok(Outcome { centroids, sizes: sizes(&assignment, k), assignment, iterations, converged })
}

/// Points per cluster.
pub fn sizes(assignment: &[usize], k: usize) -> Vec<u64> {
    let mut sizes = vec![0u64; k];
    for &j in assignment {
        sizes[j] += 1;
    }
    sizes
}

/// Step (a): the centroid of each cluster, `floor(sum / size)` per coordinate; a cluster with no
/// point keeps its row of `previous` (`k × cols`).
///
/// # Panics
/// If the lengths disagree (`points` not a multiple of `cols` rows matching `assignment`, `previous`
/// not `k × cols`) or an assignment is `≥ k`.
pub fn centroids(points: &[u64], cols: usize, k: usize, assignment: &[usize], previous: &[u64]) -> Vec<u64> {
    assert_eq!(points.len(), assignment.len() * cols, "points and assignment disagree");
    assert_eq!(previous.len(), k * cols, "previous centroids are not k × cols");
    let mut sums = vec![0u128; k * cols];
    let mut sizes = vec![0u64; k];
    for (point, &j) in points.chunks_exact(cols.max(1)).zip(assignment) {
        sizes[j] += 1;
        for (s, &x) in sums[j * cols..(j + 1) * cols].iter_mut().zip(point) {
            *s += u128::from(x);
        }
    }
    let mut out = previous.to_vec();
    for j in (0..k).filter(|&j| sizes[j] > 0) {
        for d in 0..cols {
            // The mean of values below 2^64 is below 2^64.
            out[j * cols + d] = (sums[j * cols + d] / u128::from(sizes[j])) as u64;
        }
    }
    out
}

/// Step (b): the nearest centroid of each point by squared Euclidean distance, ties to the lowest
/// cluster index.
///
/// # Panics
/// If `centroids` is not `k × cols` or `points` not a multiple of `cols`.
pub fn assign(points: &[u64], cols: usize, k: usize, centroids: &[u64]) -> Vec<usize> {
    assert_eq!(centroids.len(), k * cols, "centroids are not k × cols");
    assert!(cols > 0 && points.len().is_multiple_of(cols), "points are not rows of cols");
    let max = points.iter().chain(centroids).copied().max().unwrap_or(0);
    let max_sq = u128::from(max) * u128::from(max);
    if max_sq.checked_mul(cols as u128).is_some() {
        assign_with::<u128>(points, cols, centroids)
    } else {
        assign_with::<Wide>(points, cols, centroids)
    }
}

/// An exact accumulator of squared differences.
trait Accumulator: Copy + Ord {
    const ZERO: Self;
    fn add_square(self, a: u64, b: u64) -> Self;
}

impl Accumulator for u128 {
    const ZERO: u128 = 0;
    fn add_square(self, a: u64, b: u64) -> u128 {
        let d = u128::from(a.abs_diff(b));
        self + d * d
    }
}

/// A 192-bit sum `(high, low)`, ordered lexicographically: for squares of 64-bit differences over
/// more columns than `u128` holds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Wide(u64, u128);

impl Accumulator for Wide {
    const ZERO: Wide = Wide(0, 0);
    fn add_square(self, a: u64, b: u64) -> Wide {
        let d = u128::from(a.abs_diff(b));
        let (low, carry) = self.1.overflowing_add(d * d);
        Wide(self.0 + u64::from(carry), low)
    }
}

fn assign_with<A: Accumulator>(points: &[u64], cols: usize, centroids: &[u64]) -> Vec<usize> {
    points
        .chunks_exact(cols)
        .map(|point| {
            let mut best = (A::ZERO, usize::MAX);
            for (j, c) in centroids.chunks_exact(cols).enumerate() {
                let d = point.iter().zip(c).fold(A::ZERO, |acc, (&x, &y)| acc.add_square(x, y));
                // Strictly smaller: a tie keeps the lower index.
                if best.1 == usize::MAX || d < best.0 {
                    best = (d, j);
                }
            }
            best.1
        })
        .collect()
}

/// Bits of `a · b` (0 for 0), exact for any `u128 × u64`.
fn product_bits(a: u128, b: u64) -> u32 {
    let (low, high) = (a as u64 as u128 * u128::from(b), (a >> 64) * u128::from(b));
    // a·b = high·2^64 + low; high < 2^128 and low < 2^128.
    let (mid, carry) = high.overflowing_add(low >> 64);
    if carry {
        return 193;
    }
    if mid == 0 {
        128 - low.leading_zeros()
    } else {
        64 + 128 - mid.leading_zeros()
    }
}

/// Checks that the MPC, which compares differences of squared distances by their sign bit in a ring of
/// `ring_bits` bits, cannot overflow: the largest squared distance `cols · max²` and the largest
/// coordinate sum `rows · max` must both be below `2^(ring_bits − 2)`. Errors name bit lengths, never
/// values.
pub fn check_ring_fits(points: &[u64], rows: usize, cols: usize, ring_bits: u32) -> Result<(), KmeansError> {
    check_shape(points, rows, cols)?;
    if !(3..=128).contains(&ring_bits) {
        return Err(KmeansError::InvalidRing { ring_bits });
    }
    let max = points.iter().copied().max().unwrap_or(0);
    let limit = ring_bits - 2;
    let distance_bits = product_bits(u128::from(max) * u128::from(max), cols as u64);
    if distance_bits > limit {
        return Err(KmeansError::DistanceTooLarge { needed_bits: distance_bits, cols, ring_bits });
    }
    let sum_bits = product_bits(u128::from(max), rows as u64);
    if sum_bits > limit {
        return Err(KmeansError::SumTooLarge { needed_bits: sum_bits, rows, ring_bits });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_bits_is_exact() {
        assert_eq!(product_bits(0, 5), 0);
        assert_eq!(product_bits(1, 1), 1);
        assert_eq!(product_bits(255, 1), 8);
        assert_eq!(product_bits(256, 1), 9);
        assert_eq!(product_bits(1 << 100, 1 << 27), 128);
        assert_eq!(product_bits(1 << 100, 1 << 28), 129);
        assert_eq!(product_bits(u128::MAX, u64::MAX), 192);
        assert_eq!(product_bits(u128::MAX, 1), 128);
    }

    #[test]
    fn wide_accumulator_carries() {
        let w = Wide(0, u128::MAX).add_square(1, 0);
        assert_eq!((w.0, w.1), (1, 0));
        assert!(Wide(1, 0) > Wide(0, u128::MAX));
    }
}
