//! The start of a session: the same settings on all three nodes, the round time, catch-up,
//! recovery and audit in that order, the consistency check; then lead or follow. And the compare
//! chunk, measured again every [`REMEASURE_EVERY`] batches while serving.

use std::time::Instant;

use argus_iris::protocol::scheme::IrisScheme;
use argus_mpc::Party;
use argus_net::PartyId;

use super::{recv, send, unexpected, Core, End, LEADER};
use crate::config::CompareChunk;
use crate::wire::{self, Asks, Item, ItemOp, PeerMsg};
use crate::NodeError;

/// With `compare_chunk = "auto"`, the nodes measure their round time again before every batch
/// whose sequence number is a multiple of this (see [`remeasure_before`]): a link that changed
/// during a long session gets its chunk. Ten token trips, under 0.5 % of the batches' time even
/// at a 40 ms round trip.
const REMEASURE_EVERY: u64 = 256;

/// Whether the round time is measured again before batch `seq`: every [`REMEASURE_EVERY`]
/// batches, if it compares (a batch of deletions runs no protocol). All three nodes run the same
/// batches with the same items, so they measure together.
pub(super) fn remeasure_before(seq: u64, items: &[Item]) -> bool {
    seq.is_multiple_of(REMEASURE_EVERY) && items.iter().any(|it| matches!(it.op, ItemOp::Submit(_)))
}

impl<S: IrisScheme> Core<S> {
    pub(super) fn session(&mut self, p: &mut Party) -> Result<(), End> {
        self.same_settings(p)?;
        self.choose_compare_chunk(p, true)?;
        let (lost, mut audit) = self.sync(p)?;
        if let Some(lost) = lost {
            // A recovered store is audited before it serves.
            audit |= self.recover(p, lost)?;
        }
        if !self.loaded {
            let id = self.cfg.id;
            let t = Instant::now();
            // Progress every 100 000 identities at info (a line per 1000 would flood the log of
            // a large store), every 1000 at debug.
            let progress = &mut |n: u64| {
                if n.is_multiple_of(100_000) {
                    tracing::info!(node = id, "loaded {n} identities");
                } else {
                    tracing::debug!(node = id, "loaded {n} identities");
                }
            };
            self.engine.load(progress).map_err(End::Fatal)?;
            tracing::info!(
                node = id,
                count = self.engine.count(),
                secs = t.elapsed().as_secs_f64(),
                "database in memory"
            );
            self.loaded = true;
        }
        let mine = self.engine.summary().map_err(End::Fatal)?;
        let (all, _) = self.exchange(p, &mine, Asks::default())?;
        if all.iter().any(|s| *s != mine) {
            return Err(End::Fatal(NodeError::Inconsistent(format!(
                "after catch-up the nodes hold different identities (count, digest, last commit, next id): \
                 {all:?}; a node whose store was lost or restored from an older backup is rebuilt by \
                 starting it with `argus node --recover`"
            ))));
        }
        if audit {
            self.audit(p, &mine)?;
        }
        self.serving = true;
        // What the session start sent (a catch-up, a recovery) counts too.
        self.peer_bytes.1 = p.stats().bytes_sent;
        self.publish();
        tracing::info!(
            node = self.cfg.id,
            count = mine.count,
            last_seq = mine.last_seq,
            "consistent with peers; serving"
        );
        self.prune_pending();
        if self.cfg.id == LEADER {
            self.lead(p)
        } else {
            self.follow(p)
        }
    }

    /// Checks that both peers speak this node's peer protocol ([`wire::PEER_PROTOCOL`]) and run
    /// the same `[iris]` settings: a node with another threshold, rotation window, mask mode or
    /// scheme would compute the wrong comparisons (or fall out of step with its peers) without
    /// any error. A difference is a configuration error: fatal, with both named, on every node.
    fn same_settings(&self, p: &Party) -> Result<(), End> {
        // As JSON (bincode cannot read the layout's untagged enum back), the layout as its
        // dimensions, so that "deployed" and the same dimensions spelt out agree.
        let mut mine = serde_json::to_value(&self.cfg.iris).expect("settings serialise");
        if let Ok(g) = self.cfg.iris.layout.geometry() {
            mine["layout"] =
                serde_json::json!({ "rows": g.rows, "cols": g.cols, "filters": g.filters, "parts": g.parts });
        }
        mine["peer_protocol"] = wire::PEER_PROTOCOL.into();
        let mine = mine.to_string();
        for peer in [p.next(), p.prev()] {
            send(p, peer, &PeerMsg::Settings(mine.clone()))?;
        }
        // Both answers are read before judging: a node that stops on the first difference with the
        // other peer's message unread would close that link with a reset, which can destroy its
        // own settings on the way to that peer, which would then retry instead of stopping too.
        let mut theirs = Vec::with_capacity(2);
        for peer in [p.next(), p.prev()] {
            match recv(p, peer)? {
                PeerMsg::Settings(t) => theirs.push((peer, t)),
                other => return Err(unexpected("settings", &other)),
            }
        }
        match theirs.into_iter().find_map(|(peer, t)| settings_differ(self.cfg.id, &mine, peer, &t)) {
            Some(e) => Err(End::Fatal(NodeError::Config(e))),
            None => Ok(()),
        }
    }

    /// With `compare_chunk = "auto"`, the comparisons per chunk, from the round time the three
    /// nodes measure between them and the chunk node 0 planned on its host (all three learn node
    /// 0's figures, so they choose alike; the settings check has made sure all three are on
    /// `auto`). Measured at session start (`first`,
    /// logged at info) and every [`REMEASURE_EVERY`] batches (logged at info only when the choice
    /// changes).
    pub(super) fn choose_compare_chunk(&mut self, p: &Party, first: bool) -> Result<(), End> {
        if self.cfg.iris.compare_chunk != CompareChunk::Auto {
            return Ok(());
        }
        let (round, chunk) =
            argus_iris::protocol::choose_compare_chunk(p, self.engine.tuning.adder, self.chunk_times.as_ref())
                .map_err(|e| End::Peer(e.into()))?;
        let (node, round_ms) = (self.cfg.id, round.as_secs_f64() * 1e3);
        if first || chunk != self.engine.tuning.compare_chunk {
            tracing::info!(node, round_ms, compare_chunk = chunk, "rounds measured; comparisons per chunk chosen");
        } else {
            tracing::debug!(node, round_ms, compare_chunk = chunk, "rounds measured again; comparisons per chunk kept");
        }
        self.engine.tuning.compare_chunk = chunk;
        Ok(())
    }
}

/// Why node `me`, whose settings message is `mine`, cannot serve with node `peer`, which sent
/// `theirs` (`None`: they agree). Another peer protocol is named as such: the releases differ,
/// and the rest of the settings may not even be comparable.
fn settings_differ(me: PartyId, mine: &str, peer: PartyId, theirs: &str) -> Option<String> {
    if theirs == mine {
        return None;
    }
    // `mine` carries this build's version; only the peer's needs reading.
    let other = serde_json::from_str::<serde_json::Value>(theirs).ok().and_then(|v| v["peer_protocol"].as_u64());
    if other != Some(u64::from(wire::PEER_PROTOCOL)) {
        let other = match other {
            Some(v) => format!("peer protocol {v}"),
            None => "no peer protocol version (an older release)".into(),
        };
        return Some(format!(
            "node {peer} speaks {other}, this node (node {me}) speaks peer protocol {}: \
             the three nodes must run releases with the same peer protocol (`argus --version`)",
            wire::PEER_PROTOCOL
        ));
    }
    Some(format!(
        "node {peer} runs the [iris] settings {theirs}, this node (node {me}) runs {mine}: \
         the three nodes must use the same [iris] settings"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Kind;

    /// Settings that differ are named; a peer protocol that differs is named as such, also
    /// against a release that sends none.
    #[test]
    fn another_peer_protocol_is_named_before_the_settings() {
        let mine = format!(r#"{{"threshold":0.345,"peer_protocol":{}}}"#, wire::PEER_PROTOCOL);
        assert_eq!(settings_differ(0, &mine, 1, &mine), None);
        let other = settings_differ(0, &mine, 2, r#"{"threshold":0.3,"peer_protocol":99}"#).unwrap();
        assert!(
            other.starts_with(&format!(
                "node 2 speaks peer protocol 99, this node (node 0) speaks peer protocol {}",
                wire::PEER_PROTOCOL
            )),
            "{other}"
        );
        let old = settings_differ(1, &mine, 0, r#"{"threshold":0.345}"#).unwrap();
        assert!(old.starts_with("node 0 speaks no peer protocol version (an older release)"), "{old}");
        let threshold = format!(r#"{{"threshold":0.3,"peer_protocol":{}}}"#, wire::PEER_PROTOCOL);
        let e = settings_differ(2, &mine, 1, &threshold).unwrap();
        assert!(
            e.contains("node 1 runs the [iris] settings") && e.contains("must use the same [iris] settings"),
            "{e}"
        );
    }

    /// With `"auto"`, the round time is measured again before every 256th batch that compares.
    #[test]
    fn the_round_time_is_measured_again_every_256_comparing_batches() {
        let item = |op| Item { request_id: "r".into(), op };
        let (check, enrol, delete) =
            (item(ItemOp::Submit(Kind::Check)), item(ItemOp::Submit(Kind::Enroll)), item(ItemOp::Delete(7)));
        let due: Vec<u64> = (1..=1024).filter(|&seq| remeasure_before(seq, std::slice::from_ref(&check))).collect();
        assert_eq!(due, [256, 512, 768, 1024]);
        assert!(remeasure_before(512, &[enrol]));
        assert!(!remeasure_before(512, &[delete]), "deletions run no protocol");
        assert!(!remeasure_before(512, &[]));
    }
}
