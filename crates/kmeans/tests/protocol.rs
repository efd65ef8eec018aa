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

/// The protocol on three parties of the Sharemind scheme over Z_2^64 (party 0 owns the data),
/// with each party's traffic.
fn on_additive3(points: &[u64], rows: usize, cols: usize, opts: Options) -> Vec<(Clustering, argus_net::Stats)> {
    use argus_mpc::additive3::Additive3;
    use argus_mpc::local::{run3, Backend};
    use argus_mpc::scheme::Scheme;
    let cfg = argus_net::NetConfig::with_timeout(std::time::Duration::from_secs(60));
    run3(Backend::Memory, cfg, |p| {
        // a pass first: every round counter as at a fresh start
        p.net().send(p.next(), vec![0])?;
        p.net().recv(p.prev())?;
        let before = p.stats();
        let mut s = Additive3::new(p, Z64::new())?;
        let mine = (s.party().id() == 0).then_some(points);
        let x = s.input(0, mine, rows * cols)?;
        let out = secure_kmeans(&mut s, &x, rows, cols, opts, &mut |_| {})?;
        Ok((out, s.party().stats() - before))
    })
    .unwrap()
}

#[test]
fn three_parties_cluster_iris_as_the_reference() {
    let d = iris();
    let want = kmeans(&d.values, d.rows, d.cols, 3, None).unwrap();
    for (got, _) in
        on_additive3(&d.values, d.rows, d.cols, Options { k: 3, max_iterations: None, hide_assignment: false })
    {
        assert_eq!(got.centroids, want.centroids);
        assert_eq!(got.assignment.as_ref(), Some(&want.assignment));
        assert_eq!((got.iterations, got.converged), (want.iterations, want.converged));
    }
}

#[test]
fn hidden_assignment_on_three_parties_and_its_predicted_cost() {
    use argus_mpc::additive3::Additive3Costs;
    use argus_mpc::scheme::{Cost, Scheme};
    let d = iris();
    let opts = Options { k: 3, max_iterations: Some(2), hide_assignment: true };
    let want = kmeans(&d.values, d.rows, d.cols, 3, Some(2)).unwrap();
    let runs = on_additive3(&d.values, d.rows, d.cols, opts);
    for (got, _) in &runs {
        assert_eq!(got.centroids, want.centroids);
        assert_eq!((got.iterations, got.converged), (2, false));
    }
    // the cost counter, without a network, predicts every party's bytes and rounds: the flow
    // depends only on the revealed "did any point move" bits, here "yes" twice in both
    let mut cost = Cost::new(Additive3Costs { bits: 64 });
    let x = cost.input(0, None, d.rows * d.cols).unwrap();
    secure_kmeans(&mut cost, &x, d.rows, d.cols, opts, &mut |_| {}).unwrap();
    let bytes: Vec<u64> = runs.iter().map(|r| r.1.bytes_sent).collect();
    let rounds: Vec<u64> = runs.iter().map(|r| r.1.rounds).collect();
    assert_eq!(bytes, cost.bytes);
    assert_eq!(rounds, cost.rounds());
}
