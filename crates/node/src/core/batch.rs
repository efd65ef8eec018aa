//! One batch, once agreed: the protocol run (validity, coverage, the check against the database,
//! mirror attacks, verifications), the verdicts ([`verdicts`]), the commit, the replies.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use argus_iris::protocol::scheme::IrisScheme;
use argus_iris::protocol::Checked;
use argus_mpc::Party;
use argus_store::{IdentityId, Op};

use super::intake::{Queued, PRUNE_EVERY};
use super::session::remeasure_before;
use super::{error, reply_of, Core, End};
use crate::engine::Decision;
use crate::wire::{Item, ItemOp, Kind};
use crate::{failpoint, NodeError};

/// How often a busy node logs its activity (at info).
const LOG_EVERY: Duration = Duration::from_secs(60);

/// Why a submission was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// Its shares are not those of a valid template (no check ran).
    Invalid,
    /// An eye has too few valid bits (no check ran).
    Short,
    /// Unique as presented, its mirror image matches an enrolled identity.
    Mirror,
}

/// What a batch decides for a submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Refused(Refusal),
    /// Checked: whether it matched nothing (a verification: whether it is not the identity).
    Unique(bool),
}

/// Per submission, its refusal before any check: invalid shares first, then a short mask.
fn refusals(invalid: &[bool], short: &[bool]) -> Vec<Option<Refusal>> {
    invalid
        .iter()
        .zip(short)
        .map(|(&bad, &short)| match (bad, short) {
            (true, _) => Some(Refusal::Invalid),
            (false, true) => Some(Refusal::Short),
            _ => None,
        })
        .collect()
}

/// The submissions checked against the database together: those not refused and not
/// verifications (which are checked apart, each against its one identity).
fn checked_together(kinds: &[Kind], refused: &[Option<Refusal>]) -> Vec<usize> {
    (0..kinds.len()).filter(|&i| refused[i].is_none() && !matches!(kinds[i], Kind::Verify(_))).collect()
}

/// The verdicts of a batch's submissions (`kinds`, batch order) from what its run revealed:
/// `refused` per submission; `unique` and `mirror` per submission checked together
/// ([`checked_together`], in order); `verified` per verification not refused (whether the query
/// is the identity). A query unique as presented whose mirror image matches is refused as a
/// mirror attack; a verified query is "not unique" (it is identity `id`).
fn verdicts(
    kinds: &[Kind],
    refused: &[Option<Refusal>],
    unique: &[bool],
    mirror: &[bool],
    verified: &[bool],
) -> Vec<Verdict> {
    let (mut c, mut m, mut v) = (unique.iter(), mirror.iter(), verified.iter());
    kinds
        .iter()
        .zip(refused)
        .map(|(k, refused)| match (refused, k) {
            (Some(r), _) => Verdict::Refused(*r),
            (None, Kind::Verify(_)) => Verdict::Unique(!*v.next().expect("one per verification")),
            (None, _) => match (*c.next().expect("one per check"), *m.next().expect("one per check")) {
                (true, true) => Verdict::Refused(Refusal::Mirror),
                (unique, _) => Verdict::Unique(unique),
            },
        })
        .collect()
}

/// What a batch's protocol run revealed, per submission in batch order: whether it was refused
/// (and why); of those checked together, their items and what the check revealed; the
/// verifications' answers.
struct Ran {
    refused: Vec<Option<Refusal>>,
    checks: Vec<Item>,
    checked: Checked,
    /// Per checked query: a mirror attack.
    mirror: Vec<bool>,
    verified: Vec<bool>,
}

impl<S: IrisScheme> Core<S> {
    /// Runs batch `seq` on `items` (all held here): the protocol, then the commit, then replies.
    pub(super) fn run_batch(&mut self, p: &mut Party, seq: u64, items: &[Item]) -> Result<(), End> {
        let start = Instant::now();
        let r = self.run_batch_inner(p, seq, items);
        self.busy += start.elapsed();
        self.longest_batch = self.longest_batch.max(start.elapsed());
        self.publish();
        if r.is_ok() {
            self.log_activity(items.len() as u64, start.elapsed());
            if self.pruned_at.is_none_or(|t| t.elapsed() >= PRUNE_EVERY) {
                self.prune_pending();
            }
        }
        r
    }

    /// The protocol run of a batch's submissions (`shares`, `kinds` in batch order; `subs` their
    /// items). First the validity of the shares and the coverage step (issue 35, items 1 and
    /// 2): a query whose shares are not of a valid template, or whose mask leaves an eye too few
    /// valid bits, is refused and goes no further. Of the others, re-authentications (1:1) are
    /// checked apart, each against its one identity, the rest together against the database.
    fn run_protocol(
        &mut self,
        p: &mut Party,
        shares: &[S::Share],
        kinds: &[Kind],
        subs: &[&Item],
        dedup: bool,
    ) -> Result<Ran, NodeError> {
        let t0 = Instant::now();
        let refused = refusals(&self.engine.invalid(p, shares)?, &self.engine.short_masks(p, shares)?);
        let t_refusals = t0.elapsed();
        let checked_at = checked_together(kinds, &refused);
        let checked = match checked_at.len() {
            0 => Default::default(),
            n if n == shares.len() => self.engine.check(p, shares, dedup)?,
            _ => self.engine.check(p, &checked_at.iter().map(|&i| shares[i].clone()).collect::<Vec<_>>(), dedup)?,
        };
        let t_check = t0.elapsed() - t_refusals;
        let mut mirrored = 0;
        // Mirror attacks (issue 35, item 9): a query unique as presented whose mirror image
        // matches an enrolled identity. Only those are checked mirrored, so nothing more is
        // revealed of the others. Per checked query: whether it is such an attack.
        let mut mirror = vec![false; checked.unique.len()];
        if self.cfg.iris.mirror_check {
            let at: Vec<usize> = (0..mirror.len()).filter(|&j| checked.unique[j]).collect();
            if !at.is_empty() {
                let qs: Vec<S::Share> = at.iter().map(|&j| shares[checked_at[j]].clone()).collect();
                mirrored = qs.len();
                for (j, unique) in at.into_iter().zip(self.engine.mirror_unique(p, &qs)?) {
                    mirror[j] = !unique;
                }
            }
        }
        let t_mirror = t0.elapsed() - t_refusals - t_check;
        let mut verified = Vec::new();
        for (i, k) in kinds.iter().enumerate() {
            if let (Kind::Verify(id), None) = (k, refused[i]) {
                verified.push(self.engine.verify(p, &shares[i], *id)?);
            }
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        tracing::debug!(
            node = self.cfg.id,
            queries = shares.len(),
            checked = checked_at.len(),
            mirrored,
            refusals_ms = ms(t_refusals),
            check_ms = ms(t_check),
            mirror_ms = ms(t_mirror),
            verify_ms = ms(t0.elapsed() - t_refusals - t_check - t_mirror),
            "batch protocol phases"
        );
        Ok(Ran { refused, checks: checked_at.iter().map(|&i| subs[i].clone()).collect(), checked, mirror, verified })
    }

    fn run_batch_inner(&mut self, p: &mut Party, seq: u64, items: &[Item]) -> Result<(), End> {
        // Before the items leave the queue: a failure here leaves them to the session's end,
        // which answers them "retry".
        if remeasure_before(seq, items) {
            self.choose_compare_chunk(p, false)?;
        }
        let mut taken: Vec<Queued<S::Share>> = self.queue.take(items).map_err(|id| {
            End::Peer(NodeError::Protocol(format!("batch {seq} names request {id:?}, which this node does not hold")))
        })?;
        let shares: Vec<S::Share> = taken.iter_mut().filter_map(|q| q.share.take()).collect();
        let dedup = items.iter().any(|it| it.op == ItemOp::Submit(Kind::Enroll));
        let kinds: Vec<Kind> =
            items.iter().filter_map(|it| if let ItemOp::Submit(k) = it.op { Some(k) } else { None }).collect();
        let subs: Vec<&Item> = items.iter().filter(|it| matches!(it.op, ItemOp::Submit(_))).collect();
        let Ran { refused, checks, checked, mirror, verified } =
            match self.run_protocol(p, &shares, &kinds, &subs, dedup) {
                Ok(c) => c,
                Err(e) => {
                    let reply = error(format!("the protocol run failed ({e}); retry"), true);
                    taken.into_iter().for_each(|q| q.answer(&reply));
                    return Err(End::Peer(e));
                }
            };
        failpoint("after-reveal", seq);
        self.report_matches(seq, &checks, &checked);
        let decisions: Vec<Decision> = verdicts(&kinds, &refused, &checked.unique, &mirror, &verified)
            .into_iter()
            .map(|v| match v {
                Verdict::Unique(unique) => Decision::Checked { unique },
                Verdict::Refused(Refusal::Invalid) => {
                    self.refused_invalid += 1;
                    Decision::Refused(self.engine.invalid_reason())
                }
                Verdict::Refused(Refusal::Short) => {
                    self.refused_short += 1;
                    Decision::Refused(self.engine.short_reason())
                }
                Verdict::Refused(Refusal::Mirror) => {
                    self.refused_mirror += 1;
                    Decision::Refused(self.engine.mirror_reason())
                }
            })
            .collect();
        let commit = self.engine.plan(seq, items, &decisions);
        let mut fresh = HashMap::new();
        let mut s = shares.iter();
        for it in items {
            if let ItemOp::Submit(_) = it.op {
                let Some(share) = s.next() else {
                    return Err(End::Fatal(NodeError::Inconsistent(format!(
                        "batch {seq}: a submission without its share ({:?})",
                        it.request_id
                    ))));
                };
                if let Some(Op::Outcome { enrolled: Some(_), .. }) =
                    commit.ops.iter().find(|op| op.request_id() == it.request_id)
                {
                    fresh.insert(
                        it.request_id.clone(),
                        self.engine.scheme.enrollment_of(share).map_err(|e| End::Fatal(e.into()))?,
                    );
                }
            }
        }
        failpoint("before-commit", seq);
        if let Err(e) = self.engine.apply(&commit, &fresh) {
            let reply = error("the node could not commit the batch", true);
            taken.into_iter().for_each(|q| q.answer(&reply));
            return Err(End::Fatal(e));
        }
        failpoint("after-commit", seq);
        self.peer_bytes.1 = p.stats().bytes_sent;
        // Before the replies: a client that saw its outcome sees the status that includes it.
        self.publish();
        tracing::debug!(node = self.cfg.id, seq, items = items.len(), "batch committed");
        for (q, op) in taken.into_iter().zip(&commit.ops) {
            q.answer(&reply_of(seq, op));
        }
        Ok(())
    }

    /// With `iris.reveal_matches`: one info line per query that matched something, naming the
    /// enrolled identities and the earlier requests of the batch it matched (for the operator;
    /// positions are read before the batch commits, so they are the database the check saw).
    fn report_matches(&self, seq: u64, items: &[Item], checked: &Checked) {
        let subs: Vec<&Item> = items.iter().filter(|it| matches!(it.op, ItemOp::Submit(_))).collect();
        let s = self.engine.count();
        for (it, found) in subs.iter().zip(&checked.matches).filter(|(_, m)| !m.is_empty()) {
            let enrolled: Vec<IdentityId> = found.iter().filter_map(|&t| self.engine.id_at(t)).collect();
            let in_batch: Vec<&str> = found
                .iter()
                .filter(|&&t| t >= s)
                .filter_map(|&t| subs.get(t - s))
                .map(|i| i.request_id.as_str())
                .collect();
            tracing::info!(node = self.cfg.id, seq, request = %it.request_id, ?enrolled, ?in_batch, "query matched");
        }
    }

    /// Counts a finished batch and, once per [`LOG_EVERY`] with batches in it, logs one line of
    /// what the node did (the operator's view between status calls).
    fn log_activity(&mut self, requests: u64, took: Duration) {
        let (since, batches, done, busy) = &mut self.window;
        *batches += 1;
        *done += requests;
        *busy += took;
        let secs = since.elapsed().as_secs_f64();
        if secs >= LOG_EVERY.as_secs_f64() {
            tracing::info!(
                node = self.cfg.id,
                batches = *batches,
                requests = *done,
                per_sec = format!("{:.2}", *done as f64 / secs),
                busy = format!("{:.0}%", 100.0 * busy.as_secs_f64() / secs),
                waiting = self.queue.len(),
                count = self.engine.count(),
                last_seq = self.engine.last_seq(),
                "activity over the last {secs:.0} s"
            );
            self.window = (Instant::now(), 0, 0, Duration::ZERO);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Invalid shares are named before a short mask; the rest go on.
    #[test]
    fn invalid_shares_are_refused_before_short_masks() {
        let r = refusals(&[true, true, false, false], &[true, false, true, false]);
        assert_eq!(r, [Some(Refusal::Invalid), Some(Refusal::Invalid), Some(Refusal::Short), None]);
    }

    /// A batch of every kind: refusals keep their reason, verifications are answered from their
    /// own check, the others from the check together, where a query unique as presented whose
    /// mirror image matches is refused.
    #[test]
    fn every_submission_gets_the_verdict_of_its_own_check() {
        use Kind::*;
        let kinds = [Check, Enroll, Verify(3), Check, Enroll, Verify(5), Check];
        let refused = [None, Some(Refusal::Short), None, Some(Refusal::Invalid), None, None, None];
        assert_eq!(checked_together(&kinds, &refused), [0, 4, 6]);
        // Checked together: 0 unique, 4 unique but its mirror matches, 6 matched (its mirror
        // is not looked at: only unique queries are checked mirrored).
        let v = verdicts(&kinds, &refused, &[true, true, false], &[false, true, false], &[true, false]);
        assert_eq!(
            v,
            [
                Verdict::Unique(true),
                Verdict::Refused(Refusal::Short),
                Verdict::Unique(false),
                Verdict::Refused(Refusal::Invalid),
                Verdict::Refused(Refusal::Mirror),
                Verdict::Unique(true),
                Verdict::Unique(false),
            ]
        );
        assert!(verdicts(&[], &[], &[], &[], &[]).is_empty());
    }
}
