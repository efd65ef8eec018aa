//! Private k-means (paper 001, section 8.4), written once against the engine's [`Scheme`] seam:
//! it runs on the Sharemind scheme, on its plaintext twin ([`argus_mpc::scheme::Plain`]) and under
//! the cost counter.
//!
//! The paper's variant reveals, in each iteration, the cluster sizes and the assignment of points
//! to clusters, and at the end the centroids; nothing else. With `hide_assignment` the assignment
//! and the sizes stay secret too (one-hot selection vectors, sums by a secret matrix product,
//! division by a secret divisor); each iteration then reveals only whether any point moved.
//!
//! Arithmetic is exactly the reference's ([`crate::reference`]): the centroid of a cluster is the
//! floor of its coordinate sums over its size, an empty cluster keeps its centroid, and a point
//! goes to the nearest centroid by squared Euclidean distance, ties to the lowest index. Distances
//! are compared as `|c_j|² − 2 x·c_j` (the point's own `|x|²` is the same for every cluster), the
//! sign of a difference read by [`Compare::lt`]: exact when the data fit the ring
//! ([`crate::check_ring_fits`]).

use argus_math::Ring;
use argus_mpc::scheme::{Compare, Divide, El, Scheme};
use argus_mpc::MpcError;

/// How to cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Number of clusters, `1 ≤ k ≤ rows`.
    pub k: usize,
    /// Stop after this many iterations even if points still move (`None`: until none moves).
    pub max_iterations: Option<usize>,
    /// Keep the assignment and the sizes secret (beyond the paper).
    pub hide_assignment: bool,
}

/// What one iteration revealed, for progress reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iteration {
    /// Iterations done so far (from 1).
    pub iteration: usize,
    /// Points that changed cluster in this iteration (`None` with a hidden assignment: only
    /// whether any moved is known).
    pub moved: Option<usize>,
    /// Whether any point moved.
    pub any_moved: bool,
    /// Cluster sizes after the iteration (`None` with a hidden assignment).
    pub sizes: Option<Vec<u64>>,
}

/// The revealed result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clustering {
    /// `k × cols` centroids, row-major.
    pub centroids: Vec<u64>,
    /// The cluster of each point (`None` with a hidden assignment).
    pub assignment: Option<Vec<usize>>,
    /// Points per cluster (`None` with a hidden assignment).
    pub sizes: Option<Vec<u64>>,
    /// Iterations run.
    pub iterations: usize,
    /// Whether the last iteration moved no point.
    pub converged: bool,
}

fn el<S: Scheme>(s: &S, x: u128) -> El<S> {
    s.ring().from_u128(x)
}

/// Clusters the `rows × cols` shared points (row-major). Every party calls it with its share;
/// `progress` sees each iteration's revealed facts.
pub fn kmeans<S: Scheme + Compare + Divide>(
    s: &mut S,
    points: &S::Share,
    rows: usize,
    cols: usize,
    opts: Options,
    progress: &mut dyn FnMut(&Iteration),
) -> Result<Clustering, MpcError> {
    let k = opts.k;
    if k == 0 || k > rows || cols == 0 || s.len(points) != rows * cols {
        return Err(MpcError::InvalidParameter(format!(
            "k-means of {} values as {rows} × {cols} points into {k} clusters",
            s.len(points)
        )));
    }
    if opts.hide_assignment {
        return kmeans_hidden(s, points, rows, cols, opts, progress);
    }
    let mut assignment: Vec<usize> = (0..rows).map(|i| i % k).collect();
    // Never read before it is set: the round-robin start leaves no cluster empty.
    let mut centroid = s.constant(&vec![el(s, 0); k * cols]);
    let mut iterations = 0;
    let converged = loop {
        if opts.max_iterations.is_some_and(|m| iterations >= m) {
            break false;
        }
        centroid = centroids_public(s, points, cols, k, &assignment, &centroid)?;
        let next = nearest_revealed(s, points, rows, cols, k, &centroid)?;
        iterations += 1;
        let moved = next.iter().zip(&assignment).filter(|(a, b)| a != b).count();
        progress(&Iteration {
            iteration: iterations,
            moved: Some(moved),
            any_moved: moved > 0,
            sizes: Some(sizes(&next, k)),
        });
        if moved == 0 {
            break true;
        }
        assignment = next;
    };
    if !converged {
        centroid = centroids_public(s, points, cols, k, &assignment, &centroid)?;
    }
    let centroids = s.reveal(&centroid)?.into_iter().map(|v| s.ring().to_u128(v) as u64).collect();
    Ok(Clustering {
        centroids,
        sizes: Some(sizes(&assignment, k)),
        assignment: Some(assignment),
        iterations,
        converged,
    })
}

fn sizes(assignment: &[usize], k: usize) -> Vec<u64> {
    let mut out = vec![0u64; k];
    for &j in assignment {
        out[j] += 1;
    }
    out
}

/// Step (a) with a public assignment: coordinate sums by a public 0/1 map (local), then the
/// division by the public sizes; an empty cluster keeps `previous`.
fn centroids_public<S: Scheme + Divide>(
    s: &mut S,
    points: &S::Share,
    cols: usize,
    k: usize,
    assignment: &[usize],
    previous: &S::Share,
) -> Result<S::Share, MpcError> {
    let rows = assignment.len();
    let (zero, one) = (el(s, 0), el(s, 1));
    let size = sizes(assignment, k);
    let live: Vec<usize> = (0..k).filter(|&j| size[j] > 0).collect();
    let mut map = vec![zero; live.len() * rows];
    for (i, &j) in assignment.iter().enumerate() {
        if let Some(o) = live.iter().position(|&l| l == j) {
            map[o * rows + i] = one;
        }
    }
    let sums = s.linear(&map, points, cols)?;
    let divisors: Vec<u128> = live.iter().flat_map(|&j| std::iter::repeat_n(u128::from(size[j]), cols)).collect();
    let means = s.div_public(&sums, &divisors)?;
    // Put the live clusters' means in place, the empty ones' previous centroids around them.
    let both = s.concat(&[previous, &means])?;
    let idx: Vec<usize> = (0..k * cols)
        .map(|t| match live.iter().position(|&l| l == t / cols) {
            Some(o) => k * cols + o * cols + t % cols,
            None => t,
        })
        .collect();
    s.gather(&both, &idx)
}

/// `e_ij = |c_j|² − 2 x_i·c_j` for every point and centroid, `rows × k` row-major: the squared
/// distance less the point's own `|x_i|²`.
fn scores<S: Scheme>(
    s: &mut S,
    points: &S::Share,
    rows: usize,
    cols: usize,
    k: usize,
    centroid: &S::Share,
) -> Result<S::Share, MpcError> {
    let xc = s.matmul(points, centroid, cols)?;
    let cc = s.dot(centroid, centroid, cols)?;
    let cc_rows = s.gather(&cc, &(0..rows * k).map(|t| t % k).collect::<Vec<_>>())?;
    let minus_two = s.ring().from_i128(-2);
    s.add(&cc_rows, &s.scale(&xc, minus_two))
}

/// A tournament for the smallest score of each row: at each level pairs of candidates (lower
/// cluster indices on the left) are compared at once, and the right one wins only if strictly
/// smaller, so ties go to the lowest index. `carry` holds, per candidate, shared values that follow
/// the winner (its index, or its one-hot vector): `carry[c]` is `rows × width` for candidate `c`.
fn tournament<S: Scheme + Compare>(
    s: &mut S,
    scores: &S::Share,
    rows: usize,
    k: usize,
    mut carry: Vec<S::Share>,
    width: usize,
) -> Result<S::Share, MpcError> {
    let mut cands: Vec<S::Share> = (0..k)
        .map(|j| s.gather(scores, &(0..rows).map(|i| i * k + j).collect::<Vec<_>>()))
        .collect::<Result<_, _>>()?;
    while cands.len() > 1 {
        let pairs = cands.len() / 2;
        let left: Vec<&S::Share> = (0..pairs).map(|p| &cands[2 * p]).collect();
        let right: Vec<&S::Share> = (0..pairs).map(|p| &cands[2 * p + 1]).collect();
        let (l, r) = (s.concat(&left)?, s.concat(&right)?);
        let right_wins = s.lt(&r, &l)?;
        // winner = left + c·(right − left), for the scores and the carried values alike
        let spread: Vec<usize> = (0..pairs * rows * width).map(|t| t / width).collect();
        let c_wide = s.gather(&right_wins, &spread)?;
        let carry_l = s.concat(&(0..pairs).map(|p| &carry[2 * p]).collect::<Vec<_>>())?;
        let carry_r = s.concat(&(0..pairs).map(|p| &carry[2 * p + 1]).collect::<Vec<_>>())?;
        let (ds, dc) = (s.sub(&r, &l)?, s.sub(&carry_r, &carry_l)?);
        let prods = s.mul_many(&[(&right_wins, &ds), (&c_wide, &dc)])?;
        let (win, win_carry) = (s.add(&l, &prods[0])?, s.add(&carry_l, &prods[1])?);
        let mut next = Vec::with_capacity(cands.len().div_ceil(2));
        let mut next_carry = Vec::with_capacity(next.capacity());
        for p in 0..pairs {
            next.push(s.slice(&win, p * rows, rows)?);
            next_carry.push(s.slice(&win_carry, p * rows * width, rows * width)?);
        }
        if cands.len() % 2 == 1 {
            next.push(cands.pop().expect("odd"));
            next_carry.push(carry.pop().expect("odd"));
        }
        cands = next;
        carry = next_carry;
    }
    Ok(carry.pop().expect("one candidate"))
}

/// Step (b), the paper's way: the index of each point's nearest centroid, revealed.
fn nearest_revealed<S: Scheme + Compare>(
    s: &mut S,
    points: &S::Share,
    rows: usize,
    cols: usize,
    k: usize,
    centroid: &S::Share,
) -> Result<Vec<usize>, MpcError> {
    let e = scores(s, points, rows, cols, k, centroid)?;
    let carry: Vec<S::Share> = (0..k).map(|j| s.constant(&vec![el(s, j as u128); rows])).collect();
    let idx = tournament(s, &e, rows, k, carry, 1)?;
    let open = s.reveal(&idx)?;
    open.into_iter()
        .map(|v| {
            let j = s.ring().to_u128(v) as usize;
            if j < k {
                Ok(j)
            } else {
                Err(MpcError::InvalidParameter(format!("a cluster index {j} of {k}: the parties disagree")))
            }
        })
        .collect()
}

/// The variant that keeps the assignment secret: one-hot rows `o_i` (`rows × k`).
fn kmeans_hidden<S: Scheme + Compare + Divide>(
    s: &mut S,
    points: &S::Share,
    rows: usize,
    cols: usize,
    opts: Options,
    progress: &mut dyn FnMut(&Iteration),
) -> Result<Clustering, MpcError> {
    let k = opts.k;
    let (zero, one) = (el(s, 0), el(s, 1));
    let onehot: Vec<El<S>> = (0..rows * k).map(|t| if t % k == (t / k) % k { one } else { zero }).collect();
    let mut o = s.constant(&onehot);
    // points as cols rows of length `rows`, for the sums O^T · X
    let points_t = s.gather(points, &(0..rows * cols).map(|t| (t % rows) * cols + t / rows).collect::<Vec<_>>())?;
    let mut centroid = s.constant(&vec![zero; k * cols]);
    let mut iterations = 0;
    let converged = loop {
        if opts.max_iterations.is_some_and(|m| iterations >= m) {
            break false;
        }
        centroid = centroids_hidden(s, &points_t, rows, cols, k, &o, &centroid)?;
        let e = scores(s, points, rows, cols, k, &centroid)?;
        let carry: Vec<S::Share> = (0..k)
            .map(|j| s.constant(&(0..rows * k).map(|t| if t % k == j { one } else { zero }).collect::<Vec<_>>()))
            .collect();
        let next = tournament(s, &e, rows, k, carry, k)?;
        iterations += 1;
        // every point stayed iff sum_i <o_i, o'_i> = rows; only that bit is revealed
        let stayed = s.dot(&o, &next, rows * k)?;
        let all = s.eq(&stayed, &s.constant(&[el(s, rows as u128)]))?;
        let all_stayed = s.reveal(&all)?[0] == one;
        progress(&Iteration { iteration: iterations, moved: None, any_moved: !all_stayed, sizes: None });
        if all_stayed {
            break true;
        }
        o = next;
    };
    if !converged {
        centroid = centroids_hidden(s, &points_t, rows, cols, k, &o, &centroid)?;
    }
    let centroids = s.reveal(&centroid)?.into_iter().map(|v| s.ring().to_u128(v) as u64).collect();
    Ok(Clustering { centroids, assignment: None, sizes: None, iterations, converged })
}

/// Step (a) with a secret one-hot assignment: sums `O^T · X` (a matrix product), sizes by a
/// public sum, division by the secret sizes, and an empty cluster (size 0, found by equality)
/// keeping its previous centroid.
fn centroids_hidden<S: Scheme + Compare + Divide>(
    s: &mut S,
    points_t: &S::Share,
    rows: usize,
    cols: usize,
    k: usize,
    o: &S::Share,
    previous: &S::Share,
) -> Result<S::Share, MpcError> {
    let o_t = s.gather(o, &(0..rows * k).map(|t| (t % rows) * k + t / rows).collect::<Vec<_>>())?;
    let sums = s.matmul(&o_t, points_t, rows)?; // k × cols
    let ones = vec![el(s, 1); rows];
    let size = s.linear(&ones, o, k)?; // 1 × k
    let size_wide = s.gather(&size, &(0..k * cols).map(|t| t / cols).collect::<Vec<_>>())?;
    let means = s.div(&sums, &size_wide)?;
    let empty = s.eq(&size, &s.constant(&vec![el(s, 0); k]))?;
    let empty_wide = s.gather(&empty, &(0..k * cols).map(|t| t / cols).collect::<Vec<_>>())?;
    let keep = s.mul(&empty_wide, &s.sub(previous, &means)?)?;
    s.add(&means, &keep)
}
