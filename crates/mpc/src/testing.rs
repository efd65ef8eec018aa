//! Helpers of the statistical view tests: what a party receives must look uniform and the same
//! whatever the inputs.

/// Byte histogram of received messages (as [`argus_net::Network::take_view`] returns them).
pub(crate) fn byte_histogram(views: &[(usize, Vec<u8>)]) -> [f64; 256] {
    let mut h = [0f64; 256];
    for (_, msg) in views {
        for &b in msg {
            h[b as usize] += 1.0;
        }
    }
    h
}

/// Chi-square statistic of a histogram against the uniform distribution.
pub(crate) fn chi2_uniform(h: &[f64; 256]) -> f64 {
    let e = h.iter().sum::<f64>() / 256.0;
    h.iter().map(|&o| (o - e) * (o - e) / e).sum()
}

/// Two-sample chi-square statistic (same total count in both).
pub(crate) fn chi2_same(a: &[f64; 256], b: &[f64; 256]) -> f64 {
    a.iter().zip(b).filter(|(x, y)| *x + *y > 0.0).map(|(x, y)| (x - y) * (x - y) / (x + y)).sum()
}

/// Asserts that party `id`'s histograms under several input sets each look uniform and are alike.
/// With 255 degrees of freedom the statistic has mean 255 and standard deviation 22.6; 380 is
/// more than 5 deviations out. A party that receives nothing under every input set passes.
pub(crate) fn assert_views_uniform(name: &str, id: usize, hs: &[[f64; 256]]) {
    const LIMIT: f64 = 380.0;
    if hs.iter().all(|h| h.iter().sum::<f64>() == 0.0) {
        return;
    }
    for (k, h) in hs.iter().enumerate() {
        let c = chi2_uniform(h);
        assert!(c < LIMIT, "{name}: party {id}'s view for input set {k} is not uniform (chi2 = {c:.0})");
    }
    for k in 1..hs.len() {
        let c = chi2_same(&hs[0], &hs[k]);
        assert!(c < LIMIT, "{name}: party {id}'s view differs between input sets 0 and {k} (chi2 = {c:.0})");
    }
}
