//! The protocol, run on the plaintext twin and on the Sharemind scheme, against the reference.

use argus_kmeans::protocol::{kmeans as secure_kmeans, Clustering, Options};
use argus_kmeans::{kmeans, Dataset};
use argus_math::{Ring, Z64};
use argus_mpc::scheme::Plain;
use proptest::prelude::*;

fn iris() -> argus_kmeans::Unsigned {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/iris.csv");
    Dataset::read_csv(&path).unwrap().unsigned(32).unwrap()
}

/// The protocol on the plaintext twin over Z_2^64.
fn on_twin(points: &[u64], rows: usize, cols: usize, opts: Options) -> Clustering {
    let ring = Z64::new();
    let mut s = Plain::new(ring);
    let shared: Vec<u64> = points.iter().map(|&v| ring.from_u128(v.into())).collect();
    secure_kmeans(&mut s, &shared, rows, cols, opts, &mut |_| {}).unwrap()
}

fn assert_matches_reference(points: &[u64], rows: usize, cols: usize, k: usize, max: Option<usize>) {
    let want = kmeans(points, rows, cols, k, max).unwrap();
    for hide in [false, true] {
        let got = on_twin(points, rows, cols, Options { k, max_iterations: max, hide_assignment: hide });
        assert_eq!(got.centroids, want.centroids, "hide {hide}");
        assert_eq!((got.iterations, got.converged), (want.iterations, want.converged), "hide {hide}");
        if !hide {
            assert_eq!(got.assignment.as_ref(), Some(&want.assignment));
            assert_eq!(got.sizes.as_ref(), Some(&want.sizes));
        }
    }
}

#[test]
fn the_twin_clusters_iris_as_the_reference() {
    let d = iris();
    for k in [1, 2, 3, 5] {
        assert_matches_reference(&d.values, d.rows, d.cols, k, None);
    }
    assert_matches_reference(&d.values, d.rows, d.cols, 3, Some(2));
    assert_matches_reference(&d.values, d.rows, d.cols, 150, None);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    #[test]
    fn the_twin_matches_the_reference(
        rows in 1usize..30, cols in 1usize..4, k in 1usize..6, seed in any::<u64>(), max in 0u64..1000,
    ) {
        let k = k.min(rows);
        let mut x = seed;
        let points: Vec<u64> = (0..rows * cols).map(|_| { x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (x >> 33) % (max + 1) }).collect();
        assert_matches_reference(&points, rows, cols, k, Some(50));
    }
}
