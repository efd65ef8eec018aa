//! Running private k-means as a user does: data checked and brought into the ring before any
//! party starts, then three parties (threads of this process over `memory` or loopback TCP with
//! mutual TLS) with party 0 owning the data.

use std::time::Instant;

use argus_math::Z64;
use argus_mpc::additive3::Additive3;
use argus_mpc::local::{run3, Backend};
use argus_mpc::scheme::Scheme;
use argus_mpc::MpcError;
use argus_net::NetConfig;

use crate::protocol::{kmeans, Clustering, Iteration, Options};
use crate::{check_ring_fits, DataError, Dataset, KmeansError, Unsigned};

/// Bits of the ring k-means runs in (Z_2^64).
pub const RING_BITS: u32 = 64;

/// Why the data cannot be clustered (found before any party starts).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A value does not fit.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The data or `k` do not fit the ring or the protocol.
    #[error(transparent)]
    Kmeans(#[from] KmeansError),
}

/// The points of `data` as ring values: unchanged if none is negative, else offset by
/// `2^(b-1)` for the smallest width `b` that holds them (a public offset: distances do not change
/// and centroids move by exactly the offset). Checked against the ring: squared distances and
/// coordinate sums must stay below 2^62.
pub fn prepare(data: &Dataset, k: usize) -> Result<Unsigned, InputError> {
    if k == 0 {
        return Err(KmeansError::NoClusters.into());
    }
    if k > data.rows {
        return Err(KmeansError::TooManyClusters { k, rows: data.rows }.into());
    }
    let points = if data.values.iter().any(|&v| v < 0) {
        // the first width that holds every value (the error of the widest if none does)
        let mut found = None;
        for bits in 2..=63 {
            match data.unsigned(bits) {
                Ok(p) => {
                    found = Some(p);
                    break;
                }
                Err(e) if bits == 63 => return Err(e.into()),
                Err(_) => {}
            }
        }
        found.expect("a width up to 63 or an error")
    } else {
        data.unsigned(64)?
    };
    check_ring_fits(&points.values, points.rows, points.cols, RING_BITS)?;
    Ok(points)
}

/// One local run: the result, the wall time and each party's traffic.
#[derive(Clone, Debug)]
pub struct Run {
    /// What the parties revealed.
    pub clustering: Clustering,
    /// Wall time of the protocol (input sharing included), seconds.
    pub seconds: f64,
    /// Payload bytes sent, per party.
    pub bytes: Vec<u64>,
    /// Rounds, per party.
    pub rounds: Vec<u64>,
}

/// Private k-means of `points` on three local parties over `backend`; `progress` sees each
/// iteration (as party 0 learns it).
pub fn run_local(
    points: &Unsigned,
    opts: Options,
    backend: Backend,
    progress: &(dyn Fn(&Iteration) + Sync),
) -> Result<Run, MpcError> {
    let cfg = NetConfig::with_timeout(std::time::Duration::from_secs(120));
    let (rows, cols) = (points.rows, points.cols);
    let out = run3(backend, cfg, |p| {
        let start = Instant::now();
        let before = p.stats();
        let me = p.id();
        let mut s = Additive3::new(p, Z64::new())?;
        let x = s.input(0, (me == 0).then_some(&points.values[..]), rows * cols)?;
        let clustering = kmeans(&mut s, &x, rows, cols, opts, &mut |it| {
            if me == 0 {
                progress(it)
            }
        })?;
        let used = s.party().stats() - before;
        Ok((clustering, start.elapsed().as_secs_f64(), used))
    })?;
    let seconds = out.iter().map(|o| o.1).fold(0.0, f64::max);
    let bytes = out.iter().map(|o| o.2.bytes_sent).collect();
    let rounds = out.iter().map(|o| o.2.rounds).collect();
    let clustering = out.into_iter().next().expect("three parties").0;
    Ok(Run { clustering, seconds, bytes, rounds })
}
