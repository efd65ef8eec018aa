//! Agreeing on a batch. Party 0 leads: it picks a batch from its queue ([`pick`](super::pick)),
//! proposes it (sequence number and items), reads from each follower which items it does not hold
//! (after the follower waited `batch.share_timeout_ms` for late shares), and confirms the rest to
//! both ([`propose`], [`answer`]); all three then run the confirmed batch, and answer the items
//! left out "retry". Between batches the leader pings its followers once a second.

use std::time::{Duration, Instant};

use argus_iris::protocol::scheme::IrisScheme;
use argus_mpc::Party;

use super::{error, recv, send, unexpected, Core, End, LEADER};
use crate::wire::{self, Item, PeerMsg};
use crate::NodeError;

/// How often an idle leader pings its followers.
const PING_EVERY: Duration = Duration::from_secs(1);

/// The leader's half of agreeing on batch `seq`: proposes `items` to both followers, reads what
/// each lacks, and confirms the rest to both. Returns the confirmed items.
fn propose(p: &Party, seq: u64, items: &[Item]) -> Result<Vec<Item>, End> {
    let proposal = PeerMsg::Propose { seq, items: items.to_vec() };
    send(p, 1, &proposal)?;
    send(p, 2, &proposal)?;
    let mut missing = Vec::new();
    for peer in [1, 2] {
        match recv(p, peer)? {
            PeerMsg::Missing(m) => missing.extend(m),
            other => return Err(unexpected("missing", &other)),
        }
    }
    let go: Vec<Item> = items.iter().filter(|it| !missing.contains(&it.request_id)).cloned().collect();
    send(p, 1, &PeerMsg::Go(go.clone()))?;
    send(p, 2, &PeerMsg::Go(go.clone()))?;
    Ok(go)
}

/// A follower's half, for a proposal of `items` of which it does not hold `missing`: reports
/// those and reads the confirmation, which may name only items proposed and held here
/// ([`unheld_in_go`]). Returns the confirmed items.
fn answer(p: &Party, items: &[Item], missing: Vec<String>) -> Result<Vec<Item>, End> {
    send(p, LEADER, &PeerMsg::Missing(missing.clone()))?;
    let go = match recv(p, LEADER)? {
        PeerMsg::Go(go) => go,
        other => return Err(unexpected("go", &other)),
    };
    unheld_in_go(items, &missing, &go).map_err(|why| End::Peer(NodeError::Protocol(why)))?;
    Ok(go)
}

/// A follower's check of a proposal: batch `seq` must follow its last commit `last` (the
/// catch-up at session start made all three agree on it).
fn in_sequence(seq: u64, last: u64) -> Result<(), End> {
    if seq == last + 1 {
        return Ok(());
    }
    Err(End::Fatal(NodeError::Inconsistent(format!("leader proposed batch {seq}, this node's last commit is {last}"))))
}

/// Refuses a leader's confirmation that names an item it did not propose, or one this node
/// reported missing: the follower could not run it (the session ends with a typed error).
fn unheld_in_go(proposed: &[Item], missing: &[String], go: &[Item]) -> Result<(), String> {
    match go.iter().find(|it| !proposed.contains(it) || missing.contains(&it.request_id)) {
        Some(it) => Err(format!(
            "the leader confirmed request {:?}, which this node {}",
            it.request_id,
            if proposed.contains(it) { "reported missing" } else { "was never proposed" }
        )),
        None => Ok(()),
    }
}

impl<S: IrisScheme> Core<S> {
    pub(super) fn lead(&mut self, p: &mut Party) -> Result<(), End> {
        let wait = Duration::from_millis(self.cfg.batch.wait_ms.max(1));
        let mut last_sent = Instant::now();
        while !self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            // The leader expires nothing: what it holds is proposed in arrival order, and what a
            // follower lacks is dropped at confirmation.
            self.drain(wait);
            let Some(items) = self.pick_batch(wait) else {
                if last_sent.elapsed() >= PING_EVERY {
                    send(p, 1, &PeerMsg::Ping)?;
                    send(p, 2, &PeerMsg::Ping)?;
                    last_sent = Instant::now();
                }
                continue;
            };
            let seq = self.engine.last_seq() + 1;
            let go = propose(p, seq, &items)?;
            last_sent = Instant::now();
            self.drop_unconfirmed(&items, &go);
            if !go.is_empty() {
                self.run_batch(p, seq, &go)?;
            }
        }
        Ok(())
    }

    pub(super) fn follow(&mut self, p: &mut Party) -> Result<(), End> {
        let share_timeout = Duration::from_millis(self.cfg.batch.share_timeout_ms);
        while !self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            self.drain(Duration::ZERO);
            self.expire();
            let Some(bytes) = p.net().recv_within(LEADER, Duration::from_millis(5))? else { continue };
            match wire::decode::<PeerMsg>(&bytes).map_err(|e| End::Peer(e.into()))? {
                PeerMsg::Ping => {}
                PeerMsg::Propose { seq, items } => {
                    in_sequence(seq, self.engine.last_seq())?;
                    // Shares sent to the three nodes at once may arrive here after the proposal.
                    let deadline = Instant::now() + share_timeout;
                    let mut missing = self.queue.missing(&items);
                    while !missing.is_empty() && Instant::now() < deadline {
                        self.drain(Duration::from_millis(2));
                        missing = self.queue.missing(&items);
                    }
                    let go = answer(p, &items, missing)?;
                    self.drop_unconfirmed(&items, &go);
                    if !go.is_empty() {
                        self.run_batch(p, seq, &go)?;
                    }
                }
                other => return Err(End::Peer(NodeError::Protocol(format!("unexpected {other:?} between batches")))),
            }
        }
        Ok(())
    }

    /// Items proposed but left out (not held by every node) are dropped with a retryable error.
    /// Their enrolment shares are deleted ([`Core::forget_pending`]).
    fn drop_unconfirmed(&mut self, proposed: &[Item], go: &[Item]) {
        for q in self.queue.unconfirmed(proposed, go) {
            self.forget_pending(&q.item);
            q.answer(&error("the request's share did not reach all three nodes in time; retry", true));
        }
    }

    /// The next batch, fair between clients ([`pick`](super::pick::pick)): once full, or once one
    /// of its requests has waited `wait`.
    fn pick_batch(&mut self, wait: Duration) -> Option<Vec<Item>> {
        let waiting = self.queue.waiting_at(Instant::now());
        let (taken, lead) = super::pick::pick(&waiting, self.last_lead.as_deref(), self.cfg.batch.max, wait)?;
        self.last_lead = Some(lead);
        Some(taken.into_iter().map(|i| self.queue.item(i).clone()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::super::intake::tests::{check, queue_of, told_to_retry};
    use super::super::pick::pick;
    use super::*;
    use argus_mpc::local::{run3, Backend};
    use argus_net::NetConfig;

    /// A confirmation is a subset of the proposal without what this node lacks; anything else
    /// is named.
    #[test]
    fn a_confirmation_of_an_item_not_held_is_refused() {
        let proposed = [check("a"), check("b"), check("c")];
        let missing = vec!["b".to_string()];
        assert!(unheld_in_go(&proposed, &missing, &[check("a"), check("c")]).is_ok());
        assert!(unheld_in_go(&proposed, &missing, &[]).is_ok());
        let e = unheld_in_go(&proposed, &missing, &[check("a"), check("b")]).unwrap_err();
        assert!(e.contains("\"b\"") && e.contains("reported missing"), "{e}");
        let e = unheld_in_go(&proposed, &missing, &[check("z")]).unwrap_err();
        assert!(e.contains("never proposed"), "{e}");
    }

    #[test]
    fn a_proposal_must_follow_the_last_commit() {
        assert!(in_sequence(8, 7).is_ok());
        for (seq, last) in [(7, 7), (9, 7), (0, 0)] {
            assert!(
                matches!(in_sequence(seq, last), Err(End::Fatal(NodeError::Inconsistent(_)))),
                "{seq} after {last}"
            );
        }
    }

    /// The three nodes, each with its own queue, agree on a batch over in-memory links: the
    /// leader picks and proposes, follower 1 lacks `b`, follower 2 lacks `c`; all three confirm
    /// `a` and `d` and take them for the batch, and every node that held `b` or `c` tells its
    /// client to retry. No sleeps: the queues' times are given.
    #[test]
    fn the_nodes_run_what_all_three_hold_and_the_rest_retries() {
        let held: [&[&str]; 3] = [&["a", "b", "c", "d"], &["a", "c", "d"], &["a", "b", "d"]];
        let out = run3(Backend::Memory, NetConfig::default(), |p| {
            let t0 = Instant::now();
            let (mut queue, mut replies) = queue_of(held[p.id()], t0);
            let agreed = if p.id() == LEADER {
                let waiting = queue.waiting_at(t0 + Duration::from_millis(5));
                let (at, _) = pick(&waiting, None, 32, Duration::from_millis(5)).expect("a batch is due");
                let items: Vec<Item> = at.into_iter().map(|i| queue.item(i).clone()).collect();
                propose(p, 1, &items).map(|go| (items, go))
            } else {
                let Ok(PeerMsg::Propose { seq, items }) = recv(p, LEADER) else { panic!("a proposal") };
                in_sequence(seq, 0).unwrap();
                let missing = queue.missing(&items);
                answer(p, &items, missing).map(|go| (items, go))
            };
            let (items, go) = agreed.unwrap_or_else(|e| panic!("party {}: {e:?}", p.id()));
            let dropped: Vec<String> = queue
                .unconfirmed(&items, &go)
                .into_iter()
                .map(|q| {
                    let id = q.item.request_id.clone();
                    q.answer(&error("retry", true));
                    id
                })
                .collect();
            let ran: Vec<String> = queue.take(&go).unwrap().into_iter().map(|q| q.item.request_id).collect();
            let retried: Vec<&str> =
                held[p.id()].iter().zip(&mut replies).filter_map(|(id, rx)| told_to_retry(rx).then_some(*id)).collect();
            assert_eq!(queue.len(), 0, "party {}", p.id());
            Ok((ran, dropped, retried.join(",")))
        })
        .unwrap();
        for (ran, _, _) in &out {
            assert_eq!(ran, &["a", "d"]);
        }
        assert_eq!(out[0].1, ["b", "c"]);
        assert_eq!((out[1].1.as_slice(), out[2].1.as_slice()), (&["c".to_string()][..], &["b".to_string()][..]));
        assert_eq!([&out[0].2, &out[1].2, &out[2].2], ["b,c", "c", "b"]);
    }

    /// A leader that confirms what a follower reported missing is refused by that follower (a
    /// protocol error: the session ends), not run with a share it lacks.
    #[test]
    fn a_follower_refuses_a_confirmation_of_what_it_lacks() {
        let out = run3(Backend::Memory, NetConfig::default(), |p| {
            let items = [check("a"), check("b")];
            if p.id() == LEADER {
                send(p, 1, &PeerMsg::Propose { seq: 1, items: items.to_vec() }).unwrap();
                send(p, 2, &PeerMsg::Propose { seq: 1, items: items.to_vec() }).unwrap();
                for peer in [1, 2] {
                    assert!(matches!(recv(p, peer), Ok(PeerMsg::Missing(_))));
                    send(p, peer, &PeerMsg::Go(items.to_vec())).unwrap();
                }
                return Ok(String::new());
            }
            let Ok(PeerMsg::Propose { items, .. }) = recv(p, LEADER) else { panic!("a proposal") };
            let missing = if p.id() == 1 { vec!["b".to_string()] } else { Vec::new() };
            Ok(match answer(p, &items, missing) {
                Ok(go) => format!("ran {}", go.len()),
                Err(End::Peer(NodeError::Protocol(why))) => why,
                Err(e) => panic!("{e:?}"),
            })
        })
        .unwrap();
        assert!(out[1].contains("\"b\", which this node reported missing"), "{}", out[1]);
        assert_eq!(out[2], "ran 2");
    }
}
