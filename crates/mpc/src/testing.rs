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
