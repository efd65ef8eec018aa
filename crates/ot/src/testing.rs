//! Test helpers: a two-party run on the in-memory network, and the statistics of the view tests
//! (the same chi-square rule as the engine's MPC view tests, plus a bit count).

use std::thread;

use argus_net::{mem, NetConfig, Network};

/// Runs `sender` as party 0 and `receiver` as party 1 of a fresh in-memory pair, each on its own
/// thread, and returns both results.
pub(crate) fn run_pair<A: Send, B: Send>(
    sender: impl FnOnce(&Network) -> A + Send,
    receiver: impl FnOnce(&Network) -> B + Send,
) -> (A, B) {
    let mut nets = mem::connect(2, NetConfig::default()).into_iter();
    let (s, r) = (nets.next().unwrap(), nets.next().unwrap());
    thread::scope(|sc| {
        let a = sc.spawn(move || sender(&s));
        let b = sc.spawn(move || receiver(&r));
        (a.join().unwrap(), b.join().unwrap())
    })
}

/// Every byte of the messages, concatenated (a view from `Network::take_view`).
pub(crate) fn view_bytes(view: &[(usize, Vec<u8>)]) -> Vec<u8> {
    view.iter().flat_map(|(_, m)| m.iter().copied()).collect()
}

/// How often each byte value occurs.
pub(crate) fn byte_histogram(bytes: &[u8]) -> [f64; 256] {
    let mut h = [0f64; 256];
    for &b in bytes {
        h[usize::from(b)] += 1.0;
    }
    h
}

/// Chi-square statistic of a histogram against the uniform distribution.
fn chi2_uniform(h: &[f64; 256]) -> f64 {
    let e = h.iter().sum::<f64>() / 256.0;
    h.iter().map(|&o| (o - e) * (o - e) / e).sum()
}

/// Two-sample chi-square statistic (same total count in both).
pub(crate) fn chi2_same(a: &[f64; 256], b: &[f64; 256]) -> f64 {
    a.iter().zip(b).filter(|(x, y)| *x + *y > 0.0).map(|(x, y)| (x - y) * (x - y) / (x + y)).sum()
}

/// With 255 degrees of freedom the statistic has mean 255 and standard deviation 22.6; 380 is
/// more than 5 deviations out.
pub(crate) const CHI2_LIMIT: f64 = 380.0;

/// `ones` of `n` fair bits is within 5 standard deviations (`√n / 2` each) of `n / 2`.
pub(crate) fn assert_balanced(name: &str, ones: u64, n: u64) {
    let (dev, sigma) = ((ones as f64 - n as f64 / 2.0).abs(), (n as f64).sqrt() / 2.0);
    assert!(dev < 5.0 * sigma, "{name}: {ones} ones in {n} bits ({:.1} sigma off 1/2)", dev / sigma);
}

/// Asserts that the views (the bytes a party received) under several input sets each look
/// uniform, bit by bit and byte by byte, and are alike. Each must hold at least 10^5 bits.
pub(crate) fn assert_views_uniform(name: &str, views: &[Vec<u8>]) {
    for (k, v) in views.iter().enumerate() {
        assert!(v.len() * 8 >= 100_000, "{name}: view {k} is only {} bits", v.len() * 8);
        let ones: u64 = v.iter().map(|b| u64::from(b.count_ones())).sum();
        assert_balanced(&format!("{name}, input set {k}"), ones, 8 * v.len() as u64);
        let c = chi2_uniform(&byte_histogram(v));
        assert!(c < CHI2_LIMIT, "{name}: the view for input set {k} is not uniform (chi2 = {c:.0})");
    }
    for k in 1..views.len() {
        assert_eq!(views[0].len(), views[k].len(), "{name}: the view's length depends on the inputs");
        let c = chi2_same(&byte_histogram(&views[0]), &byte_histogram(&views[k]));
        assert!(c < CHI2_LIMIT, "{name}: the view differs between input sets 0 and {k} (chi2 = {c:.0})");
    }
}
