//! Requests from the client port: answered at once (status, the commit log, a request already
//! decided, a refusal) or admitted to the [`Queue`] to wait for their batch; an enrolment's share
//! is stored as pending first. A follower lets go of requests its leader never proposes
//! ([`expired`]); abandoned pending shares are pruned ([`pending_keep`]).

use std::time::{Duration, Instant};

use argus_iris::protocol::scheme::IrisScheme;
use argus_net::PartyId;
use argus_store::Op;
use tokio::sync::oneshot;

use super::pick::{client_of, Waiting};
use super::{error, reply_of, Core, Incoming, LEADER, STOP_POLL};
use crate::wire::{Item, ItemOp, Kind, Reply, Request};

/// The least age of a pending share that [`Core::prune_pending`] deletes.
const PENDING_KEEP_MIN: Duration = Duration::from_secs(24 * 3600);
/// How often a serving node prunes abandoned pending shares.
pub(super) const PRUNE_EVERY: Duration = Duration::from_secs(600);

/// A request waiting for its batch.
pub(super) struct Queued<T> {
    pub(super) item: Item,
    /// The parsed share of a submission (`None` for a deletion, and once taken for its batch).
    pub(super) share: Option<T>,
    /// Hash of the share bytes: a retry must resend the very same share.
    fingerprint: u64,
    waiters: Vec<oneshot::Sender<Reply>>,
    since: Instant,
    /// The node's protocol time when it arrived: waiting behind earlier batches is not lateness.
    busy_at: Duration,
}

impl<T> Queued<T> {
    /// Answers every client waiting for this request.
    pub(super) fn answer(self, reply: &Reply) {
        for w in self.waiters {
            let _ = w.send(reply.clone());
        }
    }
}

/// The requests waiting for a batch, in arrival order. Times are passed in, so that its policies
/// are tested without waiting.
pub(super) struct Queue<T> {
    waiting: Vec<Queued<T>>,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue { waiting: Vec::new() }
    }
}

impl<T> Queue<T> {
    /// Requests waiting.
    pub(super) fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether a request with this id waits here (a retry joins it).
    fn holds(&self, request_id: &str) -> bool {
        self.waiting.iter().any(|q| q.item.request_id == request_id)
    }

    /// Adds a request that arrived at `now` (`busy`: the node's protocol time then), or joins
    /// `reply` to the same request already waiting (a retry: same item, same share bytes); a
    /// request id in use by a different request is answered so at once.
    fn add(
        &mut self,
        item: Item,
        fingerprint: u64,
        share: Option<T>,
        reply: oneshot::Sender<Reply>,
        now: Instant,
        busy: Duration,
    ) {
        if let Some(q) = self.waiting.iter_mut().find(|q| q.item.request_id == item.request_id) {
            if q.item == item && q.fingerprint == fingerprint {
                q.waiters.push(reply);
            } else {
                let _ = reply.send(error("request id already in use by a different request", false));
            }
            return;
        }
        self.waiting.push(Queued { item, share, fingerprint, waiters: vec![reply], since: now, busy_at: busy });
    }

    /// The waiting requests as the batch picker sees them at `now`.
    pub(super) fn waiting_at(&self, now: Instant) -> Vec<Waiting<'_>> {
        self.waiting
            .iter()
            .map(|q| Waiting {
                client: client_of(&q.item.request_id),
                class: match q.item.op {
                    ItemOp::Submit(k) => Some(k),
                    ItemOp::Delete(_) => None,
                },
                waited: now.saturating_duration_since(q.since),
            })
            .collect()
    }

    /// The item at position `i` (of [`waiting_at`](Self::waiting_at)).
    pub(super) fn item(&self, i: usize) -> &Item {
        &self.waiting[i].item
    }

    /// Proposed items not held here (or held as a different request).
    pub(super) fn missing(&self, items: &[Item]) -> Vec<String> {
        items.iter().filter(|it| !self.waiting.iter().any(|q| q.item == **it)).map(|it| it.request_id.clone()).collect()
    }

    /// Takes `items` out for their batch, in their order; if one is not held, takes nothing and
    /// names it.
    pub(super) fn take(&mut self, items: &[Item]) -> Result<Vec<Queued<T>>, String> {
        if let Some(id) = self.missing(items).into_iter().next() {
            return Err(id);
        }
        Ok(items
            .iter()
            .map(|it| {
                let i = self.waiting.iter().position(|q| q.item == *it).expect("held");
                self.waiting.remove(i)
            })
            .collect())
    }

    /// Takes out the `proposed` items that the confirmation `go` left out.
    pub(super) fn unconfirmed(&mut self, proposed: &[Item], go: &[Item]) -> Vec<Queued<T>> {
        let left_out = |q: &Queued<T>| proposed.contains(&q.item) && !go.contains(&q.item);
        let (out, keep) = std::mem::take(&mut self.waiting).into_iter().partition(left_out);
        self.waiting = keep;
        out
    }

    /// Takes out the requests past their time at `now` ([`expired`]); `busy` is the node's
    /// protocol time now.
    fn expired(&mut self, now: Instant, busy: Duration, age: Duration, longest: Duration) -> Vec<Queued<T>> {
        let late = |q: &Queued<T>| {
            expired(now.saturating_duration_since(q.since), busy.saturating_sub(q.busy_at), age, longest)
        };
        let (old, keep) = std::mem::take(&mut self.waiting).into_iter().partition(late);
        self.waiting = keep;
        old
    }

    /// Takes out everything.
    fn all(&mut self) -> Vec<Queued<T>> {
        std::mem::take(&mut self.waiting)
    }
}

/// A request the queue takes: its item, the hash of its share bytes, its parsed share.
struct Admitted<T> {
    item: Item,
    fingerprint: u64,
    share: Option<T>,
}

/// A request answered without queueing.
struct Handled(Box<Reply>);

impl Handled {
    fn new(r: Reply) -> Self {
        Handled(Box::new(r))
    }
}

/// A request id of 1 to `max` printable ASCII characters: 128 as a client sends it, 512 once the
/// client port has bound it to its client (`name/id`, see `service::authorize`).
pub(crate) fn check_request_id(id: &str, max: usize) -> Result<(), String> {
    if id.is_empty() || id.len() > max || !id.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!("request ids are 1-{max} printable ASCII characters"));
    }
    Ok(())
}

fn fingerprint(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// Whether node `me` admits a new request while `waiting` wait for a batch: only the leader,
/// which forms the batches, refuses, and only at `batch.max_queued`. Followers refusing by their
/// own count would admit different requests at the margin, and a request missing at any node
/// is dropped from its batch.
fn admits(me: PartyId, waiting: usize, max_queued: usize) -> bool {
    me != LEADER || waiting < max_queued
}

/// The answer to a request (a submission if `submit`, else a deletion) whose id was decided in
/// commit `seq` as `op`: the same answer again (an idempotent retry), or an error if the id was
/// used for the other kind of request.
fn answer_decided(seq: u64, op: &Op, submit: bool) -> Reply {
    match (op, submit) {
        (Op::Outcome { .. } | Op::Refused { .. }, true) | (Op::Delete { .. }, false) => reply_of(seq, op),
        _ => error("request id already used by a different kind of request", false),
    }
}

/// The longest a leader holding at most `max_queued` requests, taking `max` per batch, can keep
/// one before proposing it: every batch of its full queue and one more at `longest_batch` each,
/// after `age` (the time to gather shares between batches).
fn longest_hold(max_queued: usize, max: usize, longest_batch: Duration, age: Duration) -> Duration {
    let batches = u32::try_from(max_queued.div_ceil(max.max(1)).saturating_add(1)).unwrap_or(u32::MAX);
    age.saturating_add(longest_batch.saturating_mul(batches))
}

/// How old a pending share must be to count as abandoned: a day, or twice the longest the leader
/// can hold a request (`hold`, see [`longest_hold`]) if that is longer, so that no share of a
/// request that may still be batched is deleted.
fn pending_keep(hold: Duration) -> Duration {
    PENDING_KEEP_MIN.max(hold.saturating_mul(2))
}

/// Whether a request that has waited `waited`, `busy` of it while this node ran batches, is past
/// `age` of idle waiting or `longest` in all (see [`Core::expire`]).
fn expired(waited: Duration, busy: Duration, age: Duration, longest: Duration) -> bool {
    waited.saturating_sub(busy) > age || waited > longest
}

impl<S: IrisScheme> Core<S> {
    /// Takes requests from the client port: the first waiting at most `wait`, then all ready ones.
    pub(super) fn drain(&mut self, wait: Duration) {
        let first = if wait.is_zero() { self.inbox.try_recv().ok() } else { self.inbox.recv_timeout(wait).ok() };
        let Some(first) = first else { return };
        self.handle(first);
        while let Ok(m) = self.inbox.try_recv() {
            self.handle(m);
        }
    }

    /// Answers requests for `d`, however many arrive (less if the node is stopped).
    pub(super) fn drain_for(&mut self, d: Duration) {
        let until = Instant::now() + d;
        while let Some(left) = until.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) {
            if self.stop.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            self.drain(left.min(STOP_POLL));
        }
    }

    fn handle(&mut self, m: Incoming) {
        match self.try_handle(m.req) {
            // Queued: the reply comes with the batch.
            Ok(a) => self.queue.add(a.item, a.fingerprint, a.share, m.reply, Instant::now(), self.busy),
            Err(Handled(reply)) => {
                let _ = m.reply.send(*reply);
            }
        }
    }

    /// The request to queue, or `Err(Handled(reply))` when answered at once.
    fn try_handle(&mut self, req: Request) -> Result<Admitted<S::Share>, Handled> {
        match req {
            Request::Status => Err(Handled::new(match self.status() {
                Ok(s) => Reply::Status(s),
                Err(e) => error(e.to_string(), true),
            })),
            Request::Commits { after } => Err(Handled::new(match self.engine.store.commits_since(after) {
                Ok(c) => Reply::Commits(c),
                Err(e) => error(e.to_string(), true),
            })),
            Request::Submit { request_id, kind, share } => {
                self.decided(&request_id, true)?;
                let fingerprint = fingerprint(&share);
                let item = Item { request_id, op: ItemOp::Submit(kind) };
                if self.queue.holds(&item.request_id) {
                    return Ok(Admitted { item, fingerprint, share: None });
                }
                self.admit()?;
                let parsed = self.engine.decode_query(&share).map_err(|e| Handled::new(error(e.to_string(), false)))?;
                if kind == Kind::Enroll {
                    self.room_for_pending(&item.request_id)?;
                    let bytes =
                        self.engine.enrollment_bytes(&parsed).map_err(|e| Handled::new(error(e.to_string(), false)))?;
                    self.engine.store.put_pending(&item.request_id, &bytes).map_err(|e| {
                        tracing::error!(node = self.cfg.id, "storing a pending share: {e}");
                        Handled::new(error("the node could not store the share", true))
                    })?;
                }
                Ok(Admitted { item, fingerprint, share: Some(parsed) })
            }
            Request::Delete { request_id, id } => {
                self.decided(&request_id, false)?;
                if !self.queue.holds(&request_id) {
                    self.admit()?;
                }
                Ok(Admitted { item: Item { request_id, op: ItemOp::Delete(id) }, fingerprint: 0, share: None })
            }
        }
    }

    /// The leader refuses a new request while `batch.max_queued` wait ([`admits`]), before its
    /// share is parsed or stored, so a refused request leaves nothing behind; a retry of a queued
    /// request always joins it. A follower holds what the leader has not proposed until the
    /// client's retry joins it or it expires (see [`Core::expire`]).
    fn admit(&mut self) -> Result<(), Handled> {
        let (waiting, max) = (self.queue.len(), self.cfg.batch.max_queued);
        if admits(self.cfg.id, waiting, max) {
            if std::mem::take(&mut self.refusing) {
                tracing::info!(node = self.cfg.id, waiting, "below batch.max_queued again: admitting new requests");
            }
            return Ok(());
        }
        self.refused_busy += 1;
        if !std::mem::replace(&mut self.refusing, true) {
            tracing::warn!(
                node = self.cfg.id,
                waiting,
                "batch.max_queued requests waiting: refusing new ones (retryable)"
            );
        }
        Err(Handled::new(error(
            format!(
                "node {} is busy: {waiting} requests are waiting for a batch (batch.max_queued); retry later",
                self.cfg.id
            ),
            true,
        )))
    }

    /// The leader stores a new enrolment's share only while fewer than `limits.pending_shares`
    /// wait on its disk (they leave when their batch commits, or as abandoned after a day); past
    /// it the request is refused as busy before its share is stored. A retry of a
    /// request whose share is stored replaces it and is admitted. Only the leader decides, as with
    /// `batch.max_queued` ([`admits`]): followers counting for themselves would each hold
    /// different requests at the margin, which then never reach all three; their pending shares
    /// are bounded by the requests they hold (`limits.in_flight`).
    fn room_for_pending(&mut self, request_id: &str) -> Result<(), Handled> {
        if self.cfg.id != LEADER {
            return Ok(());
        }
        let max = self.cfg.limits.pending_shares as u64;
        let store = &mut self.engine.store;
        let count = store.pending_count().and_then(|n| Ok((n, n >= max && store.pending(request_id)?.is_none())));
        match count {
            Ok((_, false)) => Ok(()),
            Ok((n, true)) => {
                self.refused_busy += 1;
                tracing::warn!(node = self.cfg.id, pending = n, "limits.pending_shares reached: refusing an enrolment");
                Err(Handled::new(error(
                    format!(
                        "node {} is busy: {n} enrolment shares wait for their batch (limits.pending_shares); retry later",
                        self.cfg.id
                    ),
                    true,
                )))
            }
            Err(e) => Err(Handled::new(error(format!("store: {e}"), true))),
        }
    }

    /// Answers a request id that was already decided ([`answer_decided`]).
    fn decided(&mut self, request_id: &str, submit: bool) -> Result<(), Handled> {
        check_request_id(request_id, 512).map_err(|e| Handled::new(error(e, false)))?;
        match self.engine.store.outcome(request_id) {
            Ok(None) => Ok(()),
            Ok(Some((seq, op))) => Err(Handled::new(answer_decided(seq, &op, submit))),
            Err(e) => Err(Handled::new(error(format!("store: {e}"), true))),
        }
    }

    /// How long a request may wait idle for its batch (4 × `share_timeout_ms`), and the longest
    /// the leader can hold one ([`longest_hold`]) given the longest batch so far.
    fn hold(&self) -> (Duration, Duration) {
        let age = Duration::from_millis(self.cfg.batch.share_timeout_ms) * 4;
        (age, longest_hold(self.cfg.batch.max_queued, self.cfg.batch.max, self.longest_batch, age))
    }

    /// Drops a follower's requests that the leader never proposes: those that waited longer than
    /// the idle `age` of [`Core::hold`] for a batch, not counting the time this node spent
    /// running other batches, and — so that a service busy without a pause still lets go of
    /// requests its leader refused — those that waited longer than the leader can hold one: its
    /// whole queue (`batch.max_queued`, `batch.max` per batch) at the longest batch seen, after
    /// `age`.
    pub(super) fn expire(&mut self) {
        let (age, longest) = self.hold();
        for q in self.queue.expired(Instant::now(), self.busy, age, longest) {
            self.forget_pending(&q.item);
            q.answer(&error("the request did not reach all three nodes in time; retry", true));
        }
    }

    /// Answers everything waiting with the retryable error `why`.
    pub(super) fn fail_queue(&mut self, why: &str) {
        let reply = error(why, true);
        for q in self.queue.all() {
            q.answer(&reply);
        }
    }

    /// Deletes the pending share of an enrolment that left the queue without a batch: dropped
    /// unconfirmed, or expired at a follower. No commit can name it (a batch needs all three to
    /// hold its requests), and its retry stores the share again; kept, such shares would fill the
    /// leader's `limits.pending_shares` (a client sending its shares to the leader alone) or a
    /// follower's disk until the day-old prune. (Not on a failed session: a peer may have
    /// committed a batch this node has not, and catching up needs its shares.)
    pub(super) fn forget_pending(&mut self, item: &Item) {
        if item.op == ItemOp::Submit(Kind::Enroll) {
            if let Err(e) = self.engine.store.delete_pending(&item.request_id) {
                tracing::warn!(node = self.cfg.id, "deleting a dropped request's pending share: {e}");
            }
        }
    }

    /// Deletes the pending shares of requests abandoned before their batch (a client that gave
    /// up, a request dropped because a node lacked it), which would otherwise stay in the store
    /// for good. Runs only while serving: a pending share is needed until its batch commits here,
    /// or, after a crash, until this node catches up from its peers, which it does before it
    /// serves. See [`pending_keep`] for the age.
    pub(super) fn prune_pending(&mut self) {
        let keep = pending_keep(self.hold().1);
        match self.engine.store.prune_pending(keep) {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                node = self.cfg.id,
                pruned = n,
                "deleted pending shares older than {} h: requests abandoned before their batch",
                keep.as_secs() / 3600
            ),
            Err(e) => tracing::warn!(node = self.cfg.id, "pruning abandoned pending shares: {e}"),
        }
        self.pruned_at = Some(Instant::now());
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::core) fn check(id: &str) -> Item {
        Item { request_id: id.into(), op: ItemOp::Submit(Kind::Check) }
    }

    /// A queue holding `ids` (checks, one share byte each), arrived at `t0`, with the receivers
    /// of their replies.
    pub(in crate::core) fn queue_of(ids: &[&str], t0: Instant) -> (Queue<u8>, Vec<oneshot::Receiver<Reply>>) {
        let mut q = Queue::default();
        let rx = ids
            .iter()
            .map(|id| {
                let (tx, rx) = oneshot::channel();
                q.add(check(id), 7, Some(1), tx, t0, Duration::ZERO);
                rx
            })
            .collect();
        (q, rx)
    }

    /// Whether the reply waiting on `rx` is a retryable error.
    pub(in crate::core) fn told_to_retry(rx: &mut oneshot::Receiver<Reply>) -> bool {
        matches!(rx.try_recv(), Ok(Reply::Error { retry: true, .. }))
    }

    /// A retry of the same request joins it (one batch, both answered); the same id with another
    /// share or kind is refused at once.
    #[test]
    fn a_retry_joins_its_request_and_a_reused_id_is_refused() {
        let t0 = Instant::now();
        let (mut q, _rx) = queue_of(&["a"], t0);
        let (retry, mut retry_rx) = oneshot::channel();
        q.add(check("a"), 7, None, retry, t0, Duration::ZERO);
        let (other, mut other_rx) = oneshot::channel();
        q.add(check("a"), 8, None, other, t0, Duration::ZERO);
        let (enrol, mut enrol_rx) = oneshot::channel();
        q.add(Item { request_id: "a".into(), op: ItemOp::Submit(Kind::Enroll) }, 7, None, enrol, t0, Duration::ZERO);
        assert_eq!(q.len(), 1);
        for rx in [&mut other_rx, &mut enrol_rx] {
            assert!(
                matches!(rx.try_recv(), Ok(Reply::Error { retry: false, message }) if message.contains("already in use"))
            );
        }
        let taken = q.take(&[check("a")]).unwrap();
        assert_eq!(taken.len(), 1);
        taken.into_iter().next().unwrap().answer(&error("done", false));
        assert!(matches!(retry_rx.try_recv(), Ok(Reply::Error { message, .. }) if message == "done"));
    }

    /// A batch takes its items in its order, or nothing if one is not held.
    #[test]
    fn a_batch_takes_all_its_items_or_none() {
        let (mut q, _rx) = queue_of(&["a", "b", "c"], Instant::now());
        assert_eq!(q.missing(&[check("c"), check("x"), check("a")]), ["x"]);
        assert_eq!(q.take(&[check("c"), check("x")]).err().as_deref(), Some("x"));
        assert_eq!(q.len(), 3, "nothing taken");
        let taken: Vec<String> =
            q.take(&[check("c"), check("a")]).unwrap().into_iter().map(|t| t.item.request_id).collect();
        assert_eq!(taken, ["c", "a"]);
        assert_eq!(q.missing(&[check("b")]), Vec::<String>::new());
    }

    /// The picker sees how long each request has waited at the time given.
    #[test]
    fn the_picker_sees_the_waiting_times_at_the_time_given() {
        let t0 = Instant::now();
        let (mut q, _rx) = queue_of(&["calm/1"], t0);
        let (tx, _rx2) = oneshot::channel();
        q.add(
            Item { request_id: "flood/2".into(), op: ItemOp::Delete(3) },
            0,
            None,
            tx,
            t0 + Duration::from_millis(30),
            Duration::ZERO,
        );
        let w = q.waiting_at(t0 + Duration::from_millis(50));
        assert_eq!((w[0].client, w[0].class, w[0].waited), ("calm", Some(Kind::Check), Duration::from_millis(50)));
        assert_eq!((w[1].client, w[1].class, w[1].waited), ("flood", None, Duration::from_millis(20)));
    }

    /// A follower lets go of a request after `age` of idle waiting — time spent running other
    /// batches does not count — or after `longest` in all; the others stay.
    #[test]
    fn the_queue_expires_by_idle_or_total_wait() {
        let (s, t0) = (Duration::from_secs, Instant::now());
        let (mut q, mut rx) = queue_of(&["a"], t0);
        let (tx, _rx_b) = oneshot::channel();
        q.add(check("b"), 7, None, tx, t0 + s(20), s(5));
        let (age, longest) = (s(12), s(100));
        assert!(q.expired(t0 + s(30), s(25), age, longest).is_empty(), "a: 5 s idle; b: 10 s idle");
        let old = q.expired(t0 + s(30), s(10), age, longest);
        assert_eq!(old.iter().map(|o| o.item.request_id.as_str()).collect::<Vec<_>>(), ["a"], "a: 20 s idle");
        assert_eq!(q.len(), 1);
        old.into_iter().for_each(|o| o.answer(&error("late; retry", true)));
        assert!(told_to_retry(&mut rx[0]));
        assert_eq!(q.expired(t0 + s(121), s(106), age, longest).len(), 1, "b: busy all along, past the longest hold");
    }

    /// A follower's request expires after `age` of idle waiting, or after `longest` in all even
    /// while its node never pauses between batches (the leader refused it and its client gave up).
    #[test]
    fn requests_expire_by_idle_or_total_wait() {
        let s = Duration::from_secs;
        let (age, longest) = (s(12), s(100));
        assert!(!expired(s(30), s(25), age, longest), "5 s idle: keeps waiting");
        assert!(expired(s(30), s(10), age, longest), "20 s idle");
        assert!(!expired(s(99), s(99), age, longest), "busy all along, within the leader's longest hold");
        assert!(expired(s(101), s(101), age, longest), "busy all along, past it");
        assert!(!expired(s(12), s(0), age, longest) && expired(s(13), s(0), age, longest));
    }

    /// The leader's longest hold: its full queue in batches, one more, at the longest batch.
    #[test]
    fn the_longest_hold_covers_a_full_queue() {
        let s = Duration::from_secs;
        // 1024 waiting, 32 per batch: 32 batches and the one running, 3 s each, after 12 s.
        assert_eq!(longest_hold(1024, 32, s(3), s(12)), s(12 + 33 * 3));
        assert_eq!(longest_hold(1000, 32, s(3), s(12)), s(12 + 33 * 3), "a partial batch counts");
        assert_eq!(longest_hold(1024, 32, Duration::ZERO, s(12)), s(12), "before any batch: the idle bound");
        assert!(longest_hold(usize::MAX, 1, s(1), s(1)) > s(1 << 31), "no overflow");
    }

    #[test]
    fn pending_shares_outlive_the_longest_hold() {
        let s = Duration::from_secs;
        assert_eq!(pending_keep(s(111)), PENDING_KEEP_MIN, "a day at least");
        assert_eq!(pending_keep(s(20 * 3600)), s(40 * 3600), "twice a long hold");
        let hold = longest_hold(usize::MAX, 1, s(1), s(1));
        assert!(pending_keep(hold) >= hold, "no overflow");
    }

    /// Only the leader refuses, and only once `batch.max_queued` wait.
    #[test]
    fn only_the_leader_refuses_a_full_queue() {
        assert!(admits(LEADER, 1023, 1024));
        assert!(!admits(LEADER, 1024, 1024));
        assert!(admits(1, 5000, 1024) && admits(2, 5000, 1024));
    }

    /// A decided request id answers its retry as before; used for the other kind, it is an error.
    #[test]
    fn a_decided_id_answers_its_retry_alike() {
        let outcome = Op::Outcome { request_id: "r".into(), unique: true, enrolled: Some(9) };
        assert!(matches!(answer_decided(4, &outcome, true), Reply::Outcome(o) if o.seq == 4 && o.enrolled == Some(9)));
        let refused = Op::Refused { request_id: "r".into(), reason: "short".into() };
        assert_eq!(answer_decided(4, &refused, true), error("short", false));
        let delete = Op::Delete { request_id: "r".into(), id: 9, existed: true };
        assert!(matches!(answer_decided(5, &delete, false), Reply::Deleted { existed: true, seq: 5, .. }));
        for (op, submit) in [(&delete, true), (&outcome, false)] {
            assert!(
                matches!(answer_decided(5, op, submit), Reply::Error { retry: false, message } if message.contains("different kind"))
            );
        }
    }

    #[test]
    fn request_ids_are_printable_ascii_of_bounded_length() {
        assert!(check_request_id("demo/r-1", 128).is_ok());
        assert!(check_request_id("", 128).is_err());
        assert!(check_request_id("a b", 128).is_err());
        assert!(check_request_id(&"x".repeat(129), 128).is_err());
        assert!(check_request_id(&"x".repeat(129), 512).is_ok());
    }
}
