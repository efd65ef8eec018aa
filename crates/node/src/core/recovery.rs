//! Share recovery ([`argus_mpc::recovery`]): a lost node (`argus node --recover`) rebuilds its
//! store from its two peers, which must agree. Each helper sends, page by page in id order, its
//! part of the lost node's share of every identity it holds from the lost node's next id on (ids
//! are given in increasing order, so a store restored from an older backup lacks exactly those;
//! an empty store gets them all); the lost node adds the two parts up and imports the shares
//! (skipping any it holds already), then adopts the peers' log from its last commit on
//! ([`Engine::adopt`](crate::engine::Engine::adopt): deletions since apply, no pending share is
//! needed), and must then hold what its peers hold. The lost node learns its own shares and
//! nothing else; the helpers learn nothing.

use std::time::Instant;

use argus_iris::protocol::scheme::IrisScheme;
use argus_mpc::Party;
use argus_net::PartyId;
use argus_store::{IdentityId, Summary};

use super::{recv, send, unexpected, Core, End};
use crate::failpoint;
use crate::wire::{Asks, PeerMsg};
use crate::NodeError;

/// Identities per page of share recovery (a page of GR parts of 12800-bit codes is ~6.5 MB).
const RECOVERY_PAGE: usize = 64;
/// Commits per message of share recovery's log transfer.
const RECOVERY_COMMITS: usize = 1000;

/// A node's part in the recovery of node `lost`.
#[derive(Debug, PartialEq, Eq)]
enum Role {
    /// The lost node: it reads pages from both helpers, the log from the lower-numbered one.
    Lost { helpers: [PartyId; 2] },
    /// A helper: it pads its parts with `other`, the other helper, and sends the log if it is
    /// the lower-numbered of the two.
    Helper { other: PartyId, sends_log: bool },
}

impl Role {
    /// Node `me`'s part in the recovery of node `lost`.
    fn of(me: PartyId, lost: PartyId) -> Role {
        let (j, k) = ((lost + 1) % 3, (lost + 2) % 3);
        if me == lost {
            return Role::Lost { helpers: [j, k] };
        }
        let other = if me == j { k } else { j };
        Role::Helper { other, sends_log: me < other }
    }
}

/// Whether node `lost` needs recovering, given the three summaries `all`: its helpers must hold
/// the same identities (`Err` names the difference), and it must hold something else.
fn needs_recovery(all: &[Summary; 3], lost: PartyId) -> Result<bool, String> {
    let (j, k) = ((lost + 1) % 3, (lost + 2) % 3);
    if all[j] != all[k] {
        return Err(format!(
            "nodes {j} and {k} hold different identities ({:?} and {:?}): recovery needs two consistent nodes",
            all[j], all[k]
        ));
    }
    Ok(all[lost] != all[j])
}

impl<S: IrisScheme> Core<S> {
    /// Share recovery of node `lost` (module docs). Returns whether anything was recovered (the
    /// same on all three).
    pub(super) fn recover(&mut self, p: &mut Party, lost: PartyId) -> Result<bool, End> {
        let me = self.cfg.id;
        let mine = self.engine.summary().map_err(End::Fatal)?;
        let (all, _) = self.exchange(p, &mine, Asks::default())?;
        if !needs_recovery(&all, lost).map_err(|e| End::Fatal(NodeError::Inconsistent(e)))? {
            tracing::info!(node = me, lost, "nothing to recover: node {lost} holds what its peers hold");
            return Ok(false);
        }
        match Role::of(me, lost) {
            Role::Lost { helpers } => self.rebuild(p, helpers, all[lost].next_id, &all[helpers[0]])?,
            Role::Helper { other, sends_log } => self.help(p, lost, other, sends_log, &all[lost])?,
        }
        Ok(true)
    }

    /// Share recovery, the lost node's side: the helpers' pages of parts (from this node's next
    /// id `from_id` on), added up and written, then their log from this node's last commit; the
    /// result must be the helpers' `target`.
    fn rebuild(
        &mut self,
        p: &mut Party,
        [j, k]: [PartyId; 2],
        from_id: IdentityId,
        target: &Summary,
    ) -> Result<(), End> {
        let (me, t) = (self.cfg.id, Instant::now());
        tracing::info!(
            node = me,
            count = target.count,
            last_seq = target.last_seq,
            from_id,
            "recovering from the peers"
        );
        let page = |from| match recv(p, from)? {
            PeerMsg::Parts(parts) => Ok(parts),
            other => Err(unexpected("recovery parts", &other)),
        };
        let (mut written, mut pages) = (0, 0);
        loop {
            let (a, b) = (page(j)?, page(k)?);
            let last = a.len() < RECOVERY_PAGE;
            written += self.engine.import_recovered(a, b).map_err(End::Fatal)?;
            pages += 1;
            failpoint("recovered-page", pages);
            send(p, j, &PeerMsg::PartsTaken)?;
            send(p, k, &PeerMsg::PartsTaken)?;
            if last {
                break;
            }
        }
        let mut adopted = 0;
        loop {
            match recv(p, j.min(k))? {
                PeerMsg::Commits(c) if c.is_empty() => break,
                PeerMsg::Commits(c) => {
                    for c in &c {
                        self.engine.adopt(c).map_err(End::Fatal)?;
                    }
                    adopted += c.len();
                }
                other => return Err(unexpected("commits", &other)),
            }
        }
        let now = self.engine.summary().map_err(End::Fatal)?;
        if now != *target {
            return Err(End::Fatal(NodeError::Inconsistent(format!(
                "after recovery this node holds {now:?}, its peers {target:?}: its store is not an older copy of \
                 this node's (move it aside and recover into an empty one)"
            ))));
        }
        tracing::info!(node = me, written, adopted, secs = t.elapsed().as_secs_f64(), "recovered");
        Ok(())
    }

    /// Share recovery, a helper's side: pages of this node's parts for node `lost`, whose store
    /// is `has`, from its next id on (one page in flight, paced by its `PartsTaken`), with a pad
    /// shared with `other`, the other helper; then, if `sends_log`, the log after the lost node's
    /// last commit.
    fn help(
        &mut self,
        p: &mut Party,
        lost: PartyId,
        other: PartyId,
        sends_log: bool,
        has: &Summary,
    ) -> Result<(), End> {
        let (me, t, bytes) = (self.cfg.id, Instant::now(), p.stats().bytes_sent);
        let mut pad = p.stream_with(other).map_err(|e| End::Fatal(e.into()))?;
        let (mut after, mut unanswered, mut sent) = (has.next_id.checked_sub(1), 0, 0);
        loop {
            let parts = self.engine.recovery_parts(me, lost, after, RECOVERY_PAGE, &mut pad).map_err(End::Fatal)?;
            let last = parts.len() < RECOVERY_PAGE;
            after = parts.last().map(|x| x.id).or(after);
            sent += parts.len();
            send(p, lost, &PeerMsg::Parts(parts))?;
            unanswered += 1;
            // One page in flight while the next is read: the lost node's writes pace us.
            while unanswered > usize::from(!last) {
                match recv(p, lost)? {
                    PeerMsg::PartsTaken => unanswered -= 1,
                    other => return Err(unexpected("PartsTaken", &other)),
                }
            }
            if last {
                break;
            }
        }
        if sends_log {
            let commits = self.engine.store.commits_since(has.last_seq).map_err(|e| End::Fatal(e.into()))?;
            for page in commits.chunks(RECOVERY_COMMITS) {
                send(p, lost, &PeerMsg::Commits(page.to_vec()))?;
            }
            send(p, lost, &PeerMsg::Commits(Vec::new()))?;
        }
        tracing::info!(
            node = me,
            lost,
            identities = sent,
            mb = (p.stats().bytes_sent - bytes) as f64 / 1e6,
            secs = t.elapsed().as_secs_f64(),
            "helped a node recover"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For every lost node: the other two help, pad with each other, and exactly one sends the
    /// log — the one the lost node reads it from.
    #[test]
    fn the_two_helpers_pair_up_and_the_lower_sends_the_log() {
        for lost in 0..3 {
            let Role::Lost { helpers } = Role::of(lost, lost) else { panic!("node {lost} is the lost one") };
            let mut senders = Vec::new();
            for me in (0..3).filter(|&i| i != lost) {
                assert!(helpers.contains(&me));
                let Role::Helper { other, sends_log } = Role::of(me, lost) else { panic!("node {me} helps") };
                assert!(other != me && other != lost);
                if sends_log {
                    senders.push(me);
                }
            }
            assert_eq!(senders, [helpers[0].min(helpers[1])], "lost {lost}");
        }
    }

    /// Recovery needs its helpers to agree, and runs only for a node that differs from them.
    #[test]
    fn recovery_needs_two_agreeing_helpers() {
        let s = |count| Summary { count, digest: [0; 32], last_seq: count, next_id: count + 1 };
        assert_eq!(needs_recovery(&[s(0), s(7), s(7)], 0), Ok(true));
        assert_eq!(needs_recovery(&[s(7), s(7), s(7)], 2), Ok(false));
        let e = needs_recovery(&[s(7), s(0), s(6)], 1).unwrap_err();
        assert!(e.starts_with("nodes 2 and 0 hold different identities"), "{e}");
    }
}
