//! In-memory backend: all parties in one process, linked by unbounded
//! channels. Meant for tests and simulations with one thread per party.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::{Backend, Link, NetConfig, Network, Outgoing};

/// Creates `n` fully connected in-memory endpoints; element `i` is party `i`.
///
/// Each ordered pair of parties has its own unbounded channel, so `send`
/// never blocks. Dropping a [`Network`] closes its channels: its peers'
/// `recv` from it gives [`crate::NetError::PeerClosed`] (after the messages
/// it already sent), and their `send` to it fails with `PeerClosed`.
/// The [`crate::Shaper`] of `cfg`, if any, is applied by every receiver.
pub fn connect(n: usize, cfg: NetConfig) -> Vec<Network> {
    // channels[from][to]
    let mut senders: Vec<Vec<Option<_>>> = (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
    let mut receivers: Vec<Vec<Option<_>>> = (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
    for from in 0..n {
        for to in 0..n {
            if from != to {
                let (tx, rx) = crossbeam_channel::unbounded();
                senders[from][to] = Some(tx);
                receivers[to][from] = Some(rx);
            }
        }
    }
    senders
        .into_iter()
        .zip(receivers)
        .enumerate()
        .map(|(id, (txs, rxs))| {
            let links = txs
                .into_iter()
                .zip(rxs)
                .map(|(tx, rx)| match (tx, rx) {
                    (Some(tx), Some(rx)) => Some(Link::new(Outgoing::Mem(tx), rx, Arc::new(AtomicBool::new(false)))),
                    _ => None,
                })
                .collect();
            Network::new(id, &cfg, links, Backend::Mem)
        })
        .collect()
}
