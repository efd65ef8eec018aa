//! Catch-up at session start: every node is brought to the latest commit, from the commit log of
//! the lowest-numbered node that holds it (all three decide alike from the summaries: see
//! [`plan_catch_up`]).

use std::collections::HashMap;

use argus_iris::protocol::scheme::IrisScheme;
use argus_mpc::Party;
use argus_net::PartyId;
use argus_store::Summary;

use super::{recv, send, unexpected, Core, End};
use crate::wire::{Asks, PeerMsg};
use crate::NodeError;

/// What a session's catch-up does, decided alike on every node from the three summaries and
/// asks.
#[derive(Debug, PartialEq, Eq)]
struct CatchUp {
    /// The node that asked to be rebuilt (`argus node --recover`), if any: its store is not
    /// trusted, so it neither sends nor receives commits (it gets the peers' log in recovery).
    lost: Option<PartyId>,
    /// Whether a node asked for an audit.
    audit: bool,
    /// The latest commit of the trusted nodes.
    latest: u64,
    /// The lowest-numbered trusted node that holds it: it sends the nodes behind their commits.
    source: PartyId,
}

impl CatchUp {
    /// Whether node `i`, whose last commit is `last_seq`, gets commits from the source.
    fn behind(&self, i: PartyId, last_seq: u64) -> bool {
        Some(i) != self.lost && last_seq < self.latest
    }
}

/// Why a catch-up cannot start.
#[derive(Debug, PartialEq, Eq)]
enum Refused {
    /// More than one node asked to be rebuilt: recovery needs two intact ones.
    ManyLost(Vec<PartyId>),
    /// The node that asked to be rebuilt holds later commits than its peers.
    LostAhead { lost: PartyId, has: u64, latest: u64 },
}

impl Refused {
    /// The session's end at node `me`: a configuration error where it lies with this node, a
    /// peer's error elsewhere.
    fn end_at(self, me: PartyId) -> End {
        match self {
            Refused::ManyLost(many) => End::Fatal(NodeError::Config(format!(
                "nodes {many:?} all started with --recover: recovery rebuilds one node from the other two, \
                 whose stores must be intact"
            ))),
            Refused::LostAhead { lost, has, latest } => {
                let why = format!(
                    "node {lost} started with --recover holds commits up to {has}, beyond its peers' {latest}: its \
                     store is not behind theirs, so there is nothing to rebuild it from (start it without --recover)"
                );
                if me == lost {
                    End::Fatal(NodeError::Config(why))
                } else {
                    End::Peer(NodeError::Inconsistent(why))
                }
            }
        }
    }
}

/// The catch-up the three nodes' summaries `all` and asks `asks` call for.
fn plan_catch_up(all: &[Summary; 3], asks: &[Asks; 3]) -> Result<CatchUp, Refused> {
    let audit = asks.iter().any(|a| a.audit);
    let lost = match (0..3).filter(|&i| asks[i].recover).collect::<Vec<_>>()[..] {
        [] => None,
        [l] => Some(l),
        ref many => return Err(Refused::ManyLost(many.to_vec())),
    };
    let trusted = |i: &PartyId| Some(*i) != lost;
    let latest = (0..3).filter(trusted).map(|i| all[i].last_seq).max().unwrap_or(0);
    if let Some(l) = lost.filter(|&l| all[l].last_seq > latest) {
        return Err(Refused::LostAhead { lost: l, has: all[l].last_seq, latest });
    }
    let source = (0..3).filter(trusted).find(|&i| all[i].last_seq == latest).unwrap_or(0);
    Ok(CatchUp { lost, audit, latest, source })
}

/// A node behind its peers that lacks the pending shares of their commits lost its store (or
/// was restored from an older backup): say how to rebuild it.
fn behind_without_shares(e: NodeError) -> NodeError {
    match e {
        NodeError::Store(argus_store::StoreError::MissingPending { request_id }) => NodeError::Inconsistent(format!(
            "this node is behind its peers and lacks the share of request {request_id}, which they enrolled: \
             its store was lost or restored from an older backup; rebuild it with `argus node --recover`"
        )),
        NodeError::Inconsistent(m) if m.starts_with("no pending share") => NodeError::Inconsistent(format!(
            "{m}: this node's store was lost or restored from an older backup; rebuild it with `argus node --recover`"
        )),
        e => e,
    }
}

impl<S: IrisScheme> Core<S> {
    /// Sends our summary (and what we ask of the session) to both peers and returns all three of
    /// each, indexed by party.
    pub(super) fn exchange(&mut self, p: &Party, mine: &Summary, ask: Asks) -> Result<([Summary; 3], [Asks; 3]), End> {
        let (a, b) = (p.next(), p.prev());
        let hello = PeerMsg::Hello { summary: *mine, asks: ask };
        send(p, a, &hello)?;
        send(p, b, &hello)?;
        let (mut all, mut asks) = ([*mine; 3], [ask; 3]);
        for peer in [a, b] {
            match recv(p, peer)? {
                PeerMsg::Hello { summary, asks: theirs } => (all[peer], asks[peer]) = (summary, theirs),
                other => return Err(unexpected("a hello", &other)),
            }
        }
        Ok((all, asks))
    }

    /// Brings every node to the latest commit ([`plan_catch_up`]); a node that asks to be
    /// recovered (before its first load) gets the peers' log in
    /// [`recover`](Self::recover) instead. Returns that node, and whether a node asked for an
    /// audit.
    pub(super) fn sync(&mut self, p: &mut Party) -> Result<(Option<PartyId>, bool), End> {
        let mine = self.engine.summary().map_err(End::Fatal)?;
        let me = self.cfg.id;
        let first = !self.loaded;
        let ask = Asks { recover: self.cfg.recover && first, audit: self.cfg.audit && first };
        let (all, asks) = self.exchange(p, &mine, ask)?;
        let plan = plan_catch_up(&all, &asks).map_err(|r| r.end_at(me))?;
        if me == plan.source {
            for peer in [p.next(), p.prev()] {
                if plan.behind(peer, all[peer].last_seq) {
                    let commits =
                        self.engine.store.commits_since(all[peer].last_seq).map_err(|e| End::Fatal(e.into()))?;
                    tracing::info!(node = me, peer, commits = commits.len(), "sending commits to a node behind");
                    send(p, peer, &PeerMsg::Commits(commits))?;
                }
            }
        } else if plan.behind(me, mine.last_seq) {
            let commits = match recv(p, plan.source)? {
                PeerMsg::Commits(c) => c,
                other => return Err(unexpected("commits", &other)),
            };
            tracing::info!(node = me, from = mine.last_seq, to = plan.latest, "catching up");
            for c in &commits {
                self.engine.apply(c, &HashMap::new()).map_err(|e| End::Fatal(behind_without_shares(e)))?;
            }
        }
        Ok((plan.lost, plan.audit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seqs: [u64; 3]) -> [Summary; 3] {
        seqs.map(|last_seq| Summary { count: last_seq, digest: [0; 32], last_seq, next_id: 1 })
    }

    fn asking(recover: &[PartyId], audit: &[PartyId]) -> [Asks; 3] {
        std::array::from_fn(|i| Asks { recover: recover.contains(&i), audit: audit.contains(&i) })
    }

    /// The lowest-numbered node with the latest commit sends it to those behind; nobody sends
    /// when all agree.
    #[test]
    fn the_lowest_node_with_the_latest_commit_catches_up_the_others() {
        let none = asking(&[], &[]);
        let plan = plan_catch_up(&at([5, 5, 5]), &none).unwrap();
        assert_eq!(plan, CatchUp { lost: None, audit: false, latest: 5, source: 0 });
        assert!((0..3).all(|i| !plan.behind(i, 5)));
        let plan = plan_catch_up(&at([3, 5, 5]), &none).unwrap();
        assert_eq!((plan.source, plan.latest), (1, 5));
        assert!(plan.behind(0, 3) && !plan.behind(2, 5));
        let plan = plan_catch_up(&at([0, 4, 7]), &asking(&[], &[1])).unwrap();
        assert_eq!(plan, CatchUp { lost: None, audit: true, latest: 7, source: 2 });
    }

    /// A node that asks to be rebuilt is neither a source nor caught up, and may not be ahead.
    #[test]
    fn a_node_to_recover_takes_no_part_in_the_catch_up() {
        let plan = plan_catch_up(&at([9, 2, 5]), &asking(&[0], &[])).err();
        assert_eq!(plan, Some(Refused::LostAhead { lost: 0, has: 9, latest: 5 }));
        let plan = plan_catch_up(&at([5, 0, 4]), &asking(&[1], &[])).unwrap();
        assert_eq!(plan, CatchUp { lost: Some(1), audit: false, latest: 5, source: 0 });
        assert!(!plan.behind(1, 0), "the lost node gets the log in recovery");
        assert!(plan.behind(2, 4));
        assert_eq!(plan_catch_up(&at([5, 5, 5]), &asking(&[0, 2], &[])), Err(Refused::ManyLost(vec![0, 2])));
    }

    /// A refusal is this node's configuration error where it lies with this node.
    #[test]
    fn a_refused_catch_up_is_fatal_where_the_fault_is() {
        let ahead = || Refused::LostAhead { lost: 1, has: 9, latest: 5 };
        assert!(matches!(ahead().end_at(1), End::Fatal(NodeError::Config(_))));
        assert!(
            matches!(ahead().end_at(0), End::Peer(NodeError::Inconsistent(m)) if m.contains("beyond its peers' 5"))
        );
        assert!(matches!(Refused::ManyLost(vec![0, 1]).end_at(2), End::Fatal(NodeError::Config(_))));
    }
}
