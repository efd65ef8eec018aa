//! A node's event loop. Sessions: connect to the peers (mutual TLS), agree on the commit log
//! (catching up a node that is behind), check that all three hold the same identities, then serve
//! batches until a peer fails — and start over. Requests from the client port arrive on a channel.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use argus_iris::protocol::scheme::IrisScheme;
use argus_iris::protocol::Checked;
use argus_mpc::Party;
use argus_net::{tcp, NetConfig, PartyId};
use argus_store::{IdentityId, Op, Summary};
use crossbeam_channel::Receiver;
use tokio::sync::oneshot;

use crate::batching::{self, Waiting};
use crate::config::CompareChunk;
use crate::engine::{Decision, Engine};
use crate::wire::{self, Asks, Item, ItemOp, Kind, NodeStatus, Outcome, PeerMsg, Reply, Request};
use crate::{failpoint, NodeConfig, NodeError};

/// A request from the client port and where its reply goes.
/// The node's latest status, published by the core after start-up and after every batch, so
/// that status requests are answered at once instead of waiting for a running batch.
pub type StatusBoard = Arc<std::sync::Mutex<Option<NodeStatus>>>;

pub struct Incoming {
    /// The request.
    pub req: Request,
    /// The reply.
    pub reply: oneshot::Sender<Reply>,
}

/// A request waiting for its batch.
struct Queued<S: IrisScheme> {
    item: Item,
    share: Option<S::Share>,
    /// Hash of the share bytes: a retry must resend the very same share.
    fingerprint: u64,
    waiters: Vec<oneshot::Sender<Reply>>,
    since: Instant,
    /// The node's protocol time when it arrived: waiting behind earlier batches is not lateness.
    busy_at: Duration,
}

/// Why a query was refused without a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// Its shares are not those of a valid template.
    Invalid,
    /// An eye has too few valid bits.
    Short,
}

/// What a batch's protocol run revealed, per submission in batch order: whether it was refused
/// (and why); of those checked against the database, their items and what the check revealed;
/// the verifications' answers.
struct Ran {
    refused: Vec<Option<Refusal>>,
    checks: Vec<Item>,
    checked: Checked,
    /// Per checked query: a mirror attack.
    mirror: Vec<bool>,
    verified: Vec<bool>,
}

/// Why a session ended.
enum End {
    /// A peer failed: reconnect.
    Peer(NodeError),
    /// This node cannot go on.
    Fatal(NodeError),
}

impl From<argus_net::NetError> for End {
    fn from(e: argus_net::NetError) -> Self {
        End::Peer(e.into())
    }
}

/// The node's core: its engine, request queue and peers.
pub struct Core<S: IrisScheme> {
    cfg: NodeConfig,
    engine: Engine<S>,
    inbox: Receiver<Incoming>,
    queue: Vec<Queued<S>>,
    stop: Arc<AtomicBool>,
    loaded: bool,
    /// Payload bytes sent to peers in ended sessions, and in the current one.
    peer_bytes: (u64, u64),
    /// Total time spent running batches.
    busy: Duration,
    /// The longest batch so far (bounds how long the leader may hold a request).
    longest_batch: Duration,
    /// New requests refused as busy since start (`batch.max_queued`, `limits.pending_shares`).
    refused_busy: u64,
    /// Queries refused without a check since start: an eye with too few valid bits.
    refused_short: u64,
    /// Queries refused without a check since start: shares not of a valid template.
    refused_invalid: u64,
    /// Queries refused since start as mirror attacks.
    refused_mirror: u64,
    /// Whether the last new request was refused (logged once per spell of refusals).
    refusing: bool,
    /// In a session with both peers, past the consistency check (reported in the status).
    serving: bool,
    /// Activity since the last periodic log line: (start, batches, requests, busy time).
    window: (Instant, u64, u64, Duration),
    /// When abandoned pending shares were last pruned (`None`: not yet in this process).
    pruned_at: Option<Instant>,
    /// Where [`Core::publish`] puts the status.
    board: StatusBoard,
    /// The client that led the last batch ([`batching::pick`]).
    last_lead: Option<String>,
}

const LEADER: PartyId = 0;
/// Identities per page of share recovery (a page of GR parts of 12800-bit codes is ~6.5 MB).
const RECOVERY_PAGE: usize = 64;
/// Commits per message of share recovery's log transfer.
const RECOVERY_COMMITS: usize = 1000;
const PING_EVERY: Duration = Duration::from_secs(1);
/// A session that lasted this long resets the reconnection back-off.
const STABLE_SESSION: Duration = Duration::from_secs(10);
/// How often a busy node logs its activity (at info).
const LOG_EVERY: Duration = Duration::from_secs(60);
/// How often a node waiting for requests looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(100);
/// With `compare_chunk = "auto"`, the nodes measure their round time again before every batch
/// whose sequence number is a multiple of this (see [`remeasure_before`]): a link that changed
/// during a long session gets its chunk. Ten token trips, under 0.5 % of the batches' time even
/// at a 40 ms round trip.
const REMEASURE_EVERY: u64 = 256;

/// Whether the round time is measured again before batch `seq`: every [`REMEASURE_EVERY`]
/// batches, if it compares (a batch of deletions runs no protocol). All three nodes run the same
/// batches with the same items, so they measure together.
fn remeasure_before(seq: u64, items: &[Item]) -> bool {
    seq.is_multiple_of(REMEASURE_EVERY) && items.iter().any(|it| matches!(it.op, ItemOp::Submit(_)))
}

fn send(p: &Party, to: PartyId, m: &PeerMsg) -> Result<(), End> {
    Ok(p.net().send(to, wire::encode(m))?)
}

fn recv(p: &Party, from: PartyId) -> Result<PeerMsg, End> {
    wire::decode(&p.net().recv(from)?).map_err(|e| End::Peer(e.into()))
}

fn fingerprint(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
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

fn error(message: impl Into<String>, retry: bool) -> Reply {
    Reply::Error { message: message.into(), retry }
}

/// The reply a committed op gives.
fn reply_of(seq: u64, op: &Op) -> Reply {
    match op {
        Op::Outcome { request_id, unique, enrolled } => {
            Reply::Outcome(Outcome { request_id: request_id.clone(), unique: *unique, enrolled: *enrolled, seq })
        }
        Op::Delete { request_id, existed, .. } => {
            Reply::Deleted { request_id: request_id.clone(), existed: *existed, seq }
        }
        Op::Refused { reason, .. } => error(reason.clone(), false),
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

impl<S: IrisScheme> Core<S> {
    /// A core over `engine`, fed by `inbox`; stops when `stop` is set; publishes its status on
    /// `board`.
    pub fn new(
        cfg: NodeConfig,
        engine: Engine<S>,
        inbox: Receiver<Incoming>,
        stop: Arc<AtomicBool>,
        board: StatusBoard,
    ) -> Self {
        Core {
            cfg,
            engine,
            inbox,
            queue: Vec::new(),
            stop,
            loaded: false,
            peer_bytes: (0, 0),
            busy: Duration::ZERO,
            longest_batch: Duration::ZERO,
            refused_busy: 0,
            refused_short: 0,
            refused_invalid: 0,
            refused_mirror: 0,
            refusing: false,
            serving: false,
            window: (Instant::now(), 0, 0, Duration::ZERO),
            pruned_at: None,
            board,
            last_lead: None,
        }
    }

    /// Publishes the current status (see [`StatusBoard`]); a store error leaves the old one.
    fn publish(&mut self) {
        if let Ok(s) = self.status() {
            *self.board.lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
        }
    }

    /// Runs sessions until stopped or a fatal error (an inconsistent store, a store failure).
    pub fn run(mut self) -> Result<(), NodeError> {
        let identity = tcp::TlsIdentity::from_pem_dir(&self.cfg.pki, self.cfg.id)?;
        let id = self.cfg.id;
        // One listener for the node's life: a peer that dials between two of our attempts waits
        // in its backlog instead of being refused, so attempts out of phase still meet.
        let addr = self.cfg.peers[id];
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|e| NodeError::Io { context: format!("listening for peers on {addr}"), source: e })?;
        let mut pause = RETRY_MIN;
        // A first snapshot (the store's summary) so that status is answered while the node waits
        // for its peers, before its first session.
        self.publish();
        while !self.stop.load(Ordering::Relaxed) {
            tracing::info!(node = id, "connecting to peers");
            let Some(attempt) = self.connect(&listener, &identity) else { break };
            // The seeds are agreed over the new links (one round): a peer that goes away meanwhile
            // (a rolling restart) fails this attempt like a failed connection, not the node.
            let party = attempt.and_then(|net| {
                net.set_timeout(self.cfg.peer_timeout());
                Ok(Party::new(net)?)
            });
            let mut p = match party {
                Ok(p) => p,
                Err(e) => {
                    tracing::warn!(node = id, "peers not reachable: {e}");
                    self.fail_queue("this node is not connected to its peers");
                    // Some failures are immediate (a refused identity): pause, answering clients.
                    self.drain_for(pause);
                    pause = (pause * 2).min(RETRY_MAX);
                    continue;
                }
            };
            let started = Instant::now();
            let end = self.session(&mut p);
            self.serving = false;
            self.peer_bytes = (self.peer_bytes.0 + p.stats().bytes_sent, 0);
            self.publish();
            match end {
                Ok(()) => break,
                Err(End::Fatal(e)) => return Err(e),
                Err(End::Peer(e)) => {
                    tracing::warn!(node = id, "session ended: {e}");
                    self.fail_queue("a peer failed; retry");
                    // A session that fails as soon as it starts (a peer failing it each time)
                    // backs off like a failed connection instead of reconnecting in a loop.
                    if started.elapsed() < STABLE_SESSION {
                        self.drain_for(pause);
                        pause = (pause * 2).min(RETRY_MAX);
                    } else {
                        pause = RETRY_MIN;
                    }
                }
            }
        }
        // Stopped, between batches: what waits has no batch here any more, so its clients retry
        // (at a node that is back, or at the restarted one: request ids keep that idempotent).
        let why = format!("node {id} is shutting down; retry");
        let mut waiting = self.queue.len();
        self.fail_queue(&why);
        // And what the client port handed over since the last batch, still unread.
        while let Ok(m) = self.inbox.try_recv() {
            waiting += 1;
            let _ = m.reply.send(error(why.as_str(), true));
        }
        tracing::info!(node = id, last_seq = self.engine.last_seq(), waiting, "stopped (no batch running)");
        Ok(())
    }

    /// One attempt (of up to [`CONNECT`]) to connect to the peers, on a helper thread so that a
    /// stop is not held up by peers that are down: `None` if the node is stopped meanwhile (the
    /// attempt is then left to end by itself).
    fn connect(
        &self,
        listener: &std::net::TcpListener,
        identity: &tcp::TlsIdentity,
    ) -> Option<Result<argus_net::Network, NodeError>> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let (id, peers, identity) = (self.cfg.id, self.cfg.peers.clone(), identity.clone());
        let listener = listener.try_clone();
        std::thread::spawn(move || {
            let attempt =
                listener.map_err(|e| NodeError::Io { context: "peer listener".into(), source: e }).and_then(|l| {
                    tcp::connect_with_listener(id, l, &peers, &identity, NetConfig::with_timeout(CONNECT))
                        .map_err(NodeError::from)
                });
            let _ = tx.send(attempt);
        });
        loop {
            match rx.recv_timeout(STOP_POLL) {
                Ok(attempt) => return Some(attempt),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) if !self.stop.load(Ordering::Relaxed) => {}
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => return None,
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                    return Some(Err(NodeError::Protocol("the connection attempt ended without a result".into())))
                }
            }
        }
    }

    fn session(&mut self, p: &mut Party) -> Result<(), End> {
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
                other => return Err(End::Peer(NodeError::Protocol(format!("expected settings, got {other:?}")))),
            }
        }
        match theirs.into_iter().find_map(|(peer, t)| settings_differ(self.cfg.id, &mine, peer, &t)) {
            Some(e) => Err(End::Fatal(NodeError::Config(e))),
            None => Ok(()),
        }
    }

    /// With `compare_chunk = "auto"`, the comparisons per chunk, from the round time the three
    /// nodes measure between them (all three learn node 0's figure, so they choose alike; the
    /// settings check has made sure all three are on `auto`). Measured at session start (`first`,
    /// logged at info) and every [`REMEASURE_EVERY`] batches (logged at info only when the choice
    /// changes).
    fn choose_compare_chunk(&mut self, p: &Party, first: bool) -> Result<(), End> {
        if self.cfg.iris.compare_chunk != CompareChunk::Auto {
            return Ok(());
        }
        let (round, chunk) =
            argus_iris::protocol::choose_compare_chunk(p, self.engine.tuning.adder).map_err(|e| End::Peer(e.into()))?;
        let (node, round_ms) = (self.cfg.id, round.as_secs_f64() * 1e3);
        if first || chunk != self.engine.tuning.compare_chunk {
            tracing::info!(node, round_ms, compare_chunk = chunk, "rounds measured; comparisons per chunk chosen");
        } else {
            tracing::debug!(node, round_ms, compare_chunk = chunk, "rounds measured again; comparisons per chunk kept");
        }
        self.engine.tuning.compare_chunk = chunk;
        Ok(())
    }

    /// Sends our summary (and what we ask of the session) to both peers and returns all three of
    /// each, indexed by party.
    fn exchange(&mut self, p: &Party, mine: &Summary, ask: Asks) -> Result<([Summary; 3], [Asks; 3]), End> {
        let (a, b) = (p.next(), p.prev());
        let hello = PeerMsg::Hello { summary: *mine, asks: ask };
        send(p, a, &hello)?;
        send(p, b, &hello)?;
        let (mut all, mut asks) = ([*mine; 3], [ask; 3]);
        for peer in [a, b] {
            match recv(p, peer)? {
                PeerMsg::Hello { summary, asks: theirs } => (all[peer], asks[peer]) = (summary, theirs),
                other => return Err(End::Peer(NodeError::Protocol(format!("expected a hello, got {other:?}")))),
            }
        }
        Ok((all, asks))
    }

    /// Brings every node to the latest commit: the lowest-numbered node holding it sends the
    /// missing commits to each node behind (all three know who, from the summaries). A node that
    /// asks to be recovered (`argus node --recover`, before its first load) neither sends nor
    /// receives commits: its store is not trusted, and it gets the peers' log in
    /// [`recover`](Self::recover). Returns that node, and whether a node asked for an audit.
    fn sync(&mut self, p: &mut Party) -> Result<(Option<PartyId>, bool), End> {
        let mine = self.engine.summary().map_err(End::Fatal)?;
        let me = self.cfg.id;
        let first = !self.loaded;
        let ask = Asks { recover: self.cfg.recover && first, audit: self.cfg.audit && first };
        let (all, asks) = self.exchange(p, &mine, ask)?;
        let audit = asks.iter().any(|a| a.audit);
        let lost = match (0..3).filter(|&i| asks[i].recover).collect::<Vec<_>>()[..] {
            [] => None,
            [l] => Some(l),
            ref many => {
                return Err(End::Fatal(NodeError::Config(format!(
                    "nodes {many:?} all started with --recover: recovery rebuilds one node from the other two, \
                     whose stores must be intact"
                ))))
            }
        };
        let trusted = |i: &usize| Some(*i) != lost;
        let latest = (0..3).filter(trusted).map(|i| all[i].last_seq).max().unwrap_or(0);
        if let Some(l) = lost.filter(|&l| all[l].last_seq > latest) {
            let why = format!(
                "node {l} started with --recover holds commits up to {}, beyond its peers' {latest}: its store \
                 is not behind theirs, so there is nothing to rebuild it from (start it without --recover)",
                all[l].last_seq
            );
            return Err(if me == l {
                End::Fatal(NodeError::Config(why))
            } else {
                End::Peer(NodeError::Inconsistent(why))
            });
        }
        let source = (0..3).filter(trusted).find(|&i| all[i].last_seq == latest).unwrap_or(0);
        if me == source {
            for peer in [p.next(), p.prev()] {
                if all[peer].last_seq < latest && trusted(&peer) {
                    let commits =
                        self.engine.store.commits_since(all[peer].last_seq).map_err(|e| End::Fatal(e.into()))?;
                    tracing::info!(node = me, peer, commits = commits.len(), "sending commits to a node behind");
                    send(p, peer, &PeerMsg::Commits(commits))?;
                }
            }
        } else if mine.last_seq < latest && trusted(&me) {
            let commits = match recv(p, source)? {
                PeerMsg::Commits(c) => c,
                other => return Err(End::Peer(NodeError::Protocol(format!("expected commits, got {other:?}")))),
            };
            tracing::info!(node = me, from = mine.last_seq, to = latest, "catching up");
            for c in &commits {
                self.engine.apply(c, &HashMap::new()).map_err(|e| End::Fatal(behind_without_shares(e)))?;
            }
        }
        Ok((lost, audit))
    }

    /// The audit of the three databases ([`IrisScheme::audit`]), before serving: a share that is
    /// not consistent with its peers' (a corrupted store, a wrong recovery) would silently change
    /// results, so the nodes refuse to serve. Reveals nothing; the Shamir schemes' weights come
    /// from a seed the three nodes draw together now (`audit::joint_seed`), after the shares are
    /// fixed: a corrupted share escapes with probability at most 2^-40.
    fn audit(&mut self, p: &mut Party, agreed: &Summary) -> Result<(), End> {
        let (me, t) = (self.cfg.id, Instant::now());
        let seed = argus_mpc::audit::joint_seed(p).map_err(|e| End::Peer(e.into()))?;
        let ok = self.engine.audit(p, &seed).map_err(|e| End::Peer(e.into()))?;
        if !ok {
            return Err(End::Fatal(NodeError::Inconsistent(
                "the audit found the three nodes' shares inconsistent: some identity's share differs from what its \
                 peers' shares imply (a corrupted store, or a wrong recovery); not serving"
                    .into(),
            )));
        }
        tracing::info!(node = me, count = agreed.count, secs = t.elapsed().as_secs_f64(), "audit: shares consistent");
        Ok(())
    }

    /// Share recovery ([`argus_mpc::recovery`]): node `lost` rebuilds its store from its two
    /// peers, which must agree. Each helper sends, page by page in id order, its part of the lost
    /// node's share of every identity it holds from the lost node's next id on (ids are given in
    /// increasing order, so a store restored from an older backup lacks exactly those; an empty
    /// store gets them all); the lost node adds the two parts up and imports the shares
    /// (skipping any it holds already), then adopts the peers' log from its last commit on
    /// ([`Engine::adopt`]: deletions since apply, no pending share is needed), and must then hold
    /// what its peers hold. The lost node learns its own shares and nothing else; the helpers
    /// learn nothing.
    /// Returns whether anything was recovered (the same on all three).
    fn recover(&mut self, p: &mut Party, lost: PartyId) -> Result<bool, End> {
        let me = self.cfg.id;
        let (j, k) = ((lost + 1) % 3, (lost + 2) % 3);
        let mine = self.engine.summary().map_err(End::Fatal)?;
        let (all, _) = self.exchange(p, &mine, Asks::default())?;
        if all[j] != all[k] {
            return Err(End::Fatal(NodeError::Inconsistent(format!(
                "nodes {j} and {k} hold different identities ({:?} and {:?}): recovery needs two consistent nodes",
                all[j], all[k]
            ))));
        }
        if all[lost] == all[j] {
            tracing::info!(node = me, lost, "nothing to recover: node {lost} holds what its peers hold");
            return Ok(false);
        }
        if me == lost {
            self.rebuild(p, [j, k], all[lost].next_id, &all[j])?;
        } else {
            self.help(p, lost, if me == j { k } else { j }, &all[lost])?;
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
            other => Err(End::Peer(NodeError::Protocol(format!("expected recovery parts, got {other:?}")))),
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
                other => return Err(End::Peer(NodeError::Protocol(format!("expected commits, got {other:?}")))),
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
    /// shared with `other`, the other helper; the lower-numbered helper then sends the log after
    /// the lost node's last commit.
    fn help(&mut self, p: &mut Party, lost: PartyId, other: PartyId, has: &Summary) -> Result<(), End> {
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
                    other => return Err(End::Peer(NodeError::Protocol(format!("expected PartsTaken, got {other:?}")))),
                }
            }
            if last {
                break;
            }
        }
        if me < other {
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

    fn lead(&mut self, p: &mut Party) -> Result<(), End> {
        let wait = Duration::from_millis(self.cfg.batch.wait_ms.max(1));
        let mut last_sent = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
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
            let propose = PeerMsg::Propose { seq, items: items.clone() };
            send(p, 1, &propose)?;
            send(p, 2, &propose)?;
            let mut missing = Vec::new();
            for peer in [1, 2] {
                match recv(p, peer)? {
                    PeerMsg::Missing(m) => missing.extend(m),
                    other => return Err(End::Peer(NodeError::Protocol(format!("expected missing, got {other:?}")))),
                }
            }
            let go: Vec<Item> = items.iter().filter(|it| !missing.contains(&it.request_id)).cloned().collect();
            send(p, 1, &PeerMsg::Go(go.clone()))?;
            send(p, 2, &PeerMsg::Go(go.clone()))?;
            last_sent = Instant::now();
            self.drop_unconfirmed(&items, &go);
            if !go.is_empty() {
                self.run_batch(p, seq, &go)?;
            }
        }
        Ok(())
    }

    fn follow(&mut self, p: &mut Party) -> Result<(), End> {
        let share_timeout = Duration::from_millis(self.cfg.batch.share_timeout_ms);
        while !self.stop.load(Ordering::Relaxed) {
            self.drain(Duration::ZERO);
            self.expire();
            let Some(bytes) = p.net().recv_within(LEADER, Duration::from_millis(5))? else { continue };
            match wire::decode::<PeerMsg>(&bytes).map_err(|e| End::Peer(e.into()))? {
                PeerMsg::Ping => {}
                PeerMsg::Propose { seq, items } => {
                    if seq != self.engine.last_seq() + 1 {
                        return Err(End::Fatal(NodeError::Inconsistent(format!(
                            "leader proposed batch {seq}, this node's last commit is {}",
                            self.engine.last_seq()
                        ))));
                    }
                    let deadline = Instant::now() + share_timeout;
                    let mut missing = self.missing(&items);
                    while !missing.is_empty() && Instant::now() < deadline {
                        self.drain(Duration::from_millis(2));
                        missing = self.missing(&items);
                    }
                    send(p, LEADER, &PeerMsg::Missing(missing))?;
                    let go = match recv(p, LEADER)? {
                        PeerMsg::Go(go) => go,
                        other => return Err(End::Peer(NodeError::Protocol(format!("expected go, got {other:?}")))),
                    };
                    // what the leader confirms must be what it proposed and this node holds
                    unheld_in_go(&items, &self.missing(&items), &go)
                        .map_err(|why| End::Peer(NodeError::Protocol(why)))?;
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

    /// Proposed items this node does not hold (or holds as a different request).
    /// (A confirmation naming one of them is refused by [`unheld_in_go`].)
    fn missing(&self, items: &[Item]) -> Vec<String> {
        items.iter().filter(|it| !self.queue.iter().any(|q| q.item == **it)).map(|it| it.request_id.clone()).collect()
    }

    /// Items proposed but left out (not held by every node) are dropped with a retryable error.
    /// Their enrolment shares are deleted ([`Core::forget_pending`]).
    fn drop_unconfirmed(&mut self, proposed: &[Item], go: &[Item]) {
        for it in proposed.iter().filter(|it| !go.contains(it)) {
            if let Some(i) = self.queue.iter().position(|q| q.item == *it) {
                let q = self.queue.remove(i);
                self.forget_pending(&q.item);
                for w in q.waiters {
                    let _ = w.send(error("the request's share did not reach all three nodes in time; retry", true));
                }
            }
        }
    }

    /// Deletes the pending share of an enrolment that left the queue without a batch: dropped
    /// unconfirmed, or expired at a follower. No commit can name it (a batch needs all three to
    /// hold its requests), and its retry stores the share again; kept, such shares would fill the
    /// leader's `limits.pending_shares` (a client sending its shares to the leader alone) or a
    /// follower's disk until the day-old prune. (Not on a failed session: a peer may have
    /// committed a batch this node has not, and catching up needs its shares.)
    fn forget_pending(&mut self, item: &Item) {
        if item.op == ItemOp::Submit(Kind::Enroll) {
            if let Err(e) = self.engine.store.delete_pending(&item.request_id) {
                tracing::warn!(node = self.cfg.id, "deleting a dropped request's pending share: {e}");
            }
        }
    }

    /// The next batch, fair between clients ([`batching::pick`]): once full, or once one of its
    /// requests has waited `wait`.
    fn pick_batch(&mut self, wait: Duration) -> Option<Vec<Item>> {
        let waiting: Vec<Waiting> = self
            .queue
            .iter()
            .map(|q| Waiting {
                client: batching::client_of(&q.item.request_id),
                class: match q.item.op {
                    ItemOp::Submit(k) => Some(k),
                    ItemOp::Delete(_) => None,
                },
                waited: q.since.elapsed(),
            })
            .collect();
        let (taken, lead) = batching::pick(&waiting, self.last_lead.as_deref(), self.cfg.batch.max, wait)?;
        self.last_lead = Some(lead);
        Some(taken.into_iter().map(|i| self.queue[i].item.clone()).collect())
    }

    /// Runs batch `seq` on `items` (all held here): the protocol, then the commit, then replies.
    fn run_batch(&mut self, p: &mut Party, seq: u64, items: &[Item]) -> Result<(), End> {
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

    /// Deletes the pending shares of requests abandoned before their batch (a client that gave
    /// up, a request dropped because a node lacked it), which would otherwise stay in the store
    /// for good. Runs only while serving: a pending share is needed until its batch commits here,
    /// or, after a crash, until this node catches up from its peers, which it does before it
    /// serves. See [`pending_keep`] for the age.
    fn prune_pending(&mut self) {
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

    fn run_batch_inner(&mut self, p: &mut Party, seq: u64, items: &[Item]) -> Result<(), End> {
        // Before the items leave the queue: a failure here leaves them to the session's end,
        // which answers them "retry".
        if remeasure_before(seq, items) {
            self.choose_compare_chunk(p, false)?;
        }
        let mut taken: Vec<Queued<S>> = Vec::with_capacity(items.len());
        for it in items {
            let Some(i) = self.queue.iter().position(|q| q.item == *it) else {
                return Err(End::Peer(NodeError::Protocol(format!(
                    "batch {seq} names request {:?}, which this node does not hold",
                    it.request_id
                ))));
            };
            taken.push(self.queue.remove(i));
        }
        let shares: Vec<S::Share> = taken.iter_mut().filter_map(|q| q.share.take()).collect();
        let dedup = items.iter().any(|it| it.op == ItemOp::Submit(Kind::Enroll));
        // Submissions in batch order. First the validity of the shares and the coverage step
        // (issue 35, items 1 and 2): a query whose shares are not of a valid template, or whose
        // mask leaves an eye too few valid bits, is refused and goes no further. Of the others,
        // re-authentications (1:1) are checked apart, each against its one identity, the rest
        // together against the database.
        let kinds: Vec<Kind> =
            items.iter().filter_map(|it| if let ItemOp::Submit(k) = it.op { Some(k) } else { None }).collect();
        let subs: Vec<&Item> = items.iter().filter(|it| matches!(it.op, ItemOp::Submit(_))).collect();
        let verify = |k: &Kind| matches!(k, Kind::Verify(_));
        let run = |core: &mut Self, p: &mut Party| -> Result<Ran, NodeError> {
            let invalid = core.engine.invalid(p, &shares)?;
            let short = core.engine.short_masks(p, &shares)?;
            let refused: Vec<Option<Refusal>> = invalid
                .iter()
                .zip(&short)
                .map(|(&bad, &short)| match (bad, short) {
                    (true, _) => Some(Refusal::Invalid),
                    (false, true) => Some(Refusal::Short),
                    _ => None,
                })
                .collect();
            let checked_at: Vec<usize> =
                (0..shares.len()).filter(|&i| refused[i].is_none() && !verify(&kinds[i])).collect();
            let checked = match checked_at.len() {
                0 => Default::default(),
                n if n == shares.len() => core.engine.check(p, &shares, dedup)?,
                _ => core.engine.check(p, &checked_at.iter().map(|&i| shares[i].clone()).collect::<Vec<_>>(), dedup)?,
            };
            // Mirror attacks (issue 35, item 9): a query unique as presented whose mirror image
            // matches an enrolled identity. Only those are checked mirrored, so nothing more is
            // revealed of the others. Per checked query: whether it is such an attack.
            let mut mirror = vec![false; checked.unique.len()];
            if core.cfg.iris.mirror_check {
                let at: Vec<usize> = (0..mirror.len()).filter(|&j| checked.unique[j]).collect();
                if !at.is_empty() {
                    let qs: Vec<S::Share> = at.iter().map(|&j| shares[checked_at[j]].clone()).collect();
                    for (j, unique) in at.into_iter().zip(core.engine.mirror_unique(p, &qs)?) {
                        mirror[j] = !unique;
                    }
                }
            }
            let mut verified = Vec::new();
            for (i, k) in kinds.iter().enumerate() {
                if let (Kind::Verify(id), None) = (k, refused[i]) {
                    verified.push(core.engine.verify(p, &shares[i], *id)?);
                }
            }
            Ok(Ran {
                refused,
                checks: checked_at.iter().map(|&i| subs[i].clone()).collect(),
                checked,
                mirror,
                verified,
            })
        };
        let Ran { refused, checks, checked, mirror, verified } = match run(self, p) {
            Ok(c) => c,
            Err(e) => {
                for q in taken {
                    for w in q.waiters {
                        let _ = w.send(error(format!("the protocol run failed ({e}); retry"), true));
                    }
                }
                return Err(End::Peer(e));
            }
        };
        failpoint("after-reveal", seq);
        self.report_matches(seq, &checks, &checked);
        // In batch order: a verified query is "not unique" (it is identity `id`).
        let (mut c, mut v, mut mirrors) = (checked.unique.iter(), verified.iter(), mirror.into_iter());
        let decisions: Vec<Decision> = kinds
            .iter()
            .zip(&refused)
            .map(|(k, refused)| {
                if let Some(Refusal::Invalid) = refused {
                    self.refused_invalid += 1;
                    Decision::Refused(self.engine.invalid_reason())
                } else if let Some(Refusal::Short) = refused {
                    self.refused_short += 1;
                    Decision::Refused(self.engine.short_reason())
                } else if verify(k) {
                    Decision::Checked { unique: !*v.next().expect("one per verification") }
                } else {
                    let (unique, mirror) = (*c.next().expect("one per check"), mirrors.next().expect("one per check"));
                    if unique && mirror {
                        self.refused_mirror += 1;
                        Decision::Refused(self.engine.mirror_reason())
                    } else {
                        Decision::Checked { unique }
                    }
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
            for q in taken {
                for w in q.waiters {
                    let _ = w.send(error("the node could not commit the batch", true));
                }
            }
            return Err(End::Fatal(e));
        }
        failpoint("after-commit", seq);
        self.peer_bytes.1 = p.stats().bytes_sent;
        // Before the replies: a client that saw its outcome sees the status that includes it.
        self.publish();
        tracing::debug!(node = self.cfg.id, seq, items = items.len(), "batch committed");
        for (q, op) in taken.into_iter().zip(&commit.ops) {
            for w in q.waiters {
                let _ = w.send(reply_of(seq, op));
            }
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

    /// Takes requests from the client port: the first waiting at most `wait`, then all ready ones.
    fn drain(&mut self, wait: Duration) {
        let first = if wait.is_zero() { self.inbox.try_recv().ok() } else { self.inbox.recv_timeout(wait).ok() };
        let Some(first) = first else { return };
        self.handle(first);
        while let Ok(m) = self.inbox.try_recv() {
            self.handle(m);
        }
    }

    /// Answers requests for `d`, however many arrive (less if the node is stopped).
    fn drain_for(&mut self, d: Duration) {
        let until = Instant::now() + d;
        while let Some(left) = until.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            self.drain(left.min(STOP_POLL));
        }
    }

    fn handle(&mut self, m: Incoming) {
        let reply = match self.try_handle(m.req) {
            Ok(Some((r, share))) => {
                // Queued: the reply comes with the batch.
                self.enqueue(r, share, m.reply);
                return;
            }
            Ok(None) => unreachable!("handled requests reply"),
            Err(Handled(reply)) => *reply,
        };
        let _ = m.reply.send(reply);
    }

    fn enqueue(&mut self, item: (Item, u64), share: Option<S::Share>, reply: oneshot::Sender<Reply>) {
        let (item, fingerprint) = item;
        if let Some(q) = self.queue.iter_mut().find(|q| q.item.request_id == item.request_id) {
            if q.item == item && q.fingerprint == fingerprint {
                q.waiters.push(reply);
            } else {
                let _ = reply.send(error("request id already in use by a different request", false));
            }
            return;
        }
        self.queue.push(Queued {
            item,
            share,
            fingerprint,
            waiters: vec![reply],
            since: Instant::now(),
            busy_at: self.busy,
        });
    }

    /// `Err(Handled(reply))` when answered at once; `Ok(Some(..))` when the request is to be queued.
    #[allow(clippy::type_complexity)]
    fn try_handle(&mut self, req: Request) -> Result<Option<((Item, u64), Option<S::Share>)>, Handled> {
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
                let fp = fingerprint(&share);
                if self.is_queued(&request_id) {
                    return Ok(Some(((Item { request_id, op: ItemOp::Submit(kind) }, fp), None)));
                }
                self.admit()?;
                let parsed = self.engine.decode_query(&share).map_err(|e| Handled::new(error(e.to_string(), false)))?;
                if kind == Kind::Enroll {
                    self.room_for_pending(&request_id)?;
                    let bytes =
                        self.engine.enrollment_bytes(&parsed).map_err(|e| Handled::new(error(e.to_string(), false)))?;
                    self.engine.store.put_pending(&request_id, &bytes).map_err(|e| {
                        tracing::error!(node = self.cfg.id, "storing a pending share: {e}");
                        Handled::new(error("the node could not store the share", true))
                    })?;
                }
                Ok(Some(((Item { request_id, op: ItemOp::Submit(kind) }, fp), Some(parsed))))
            }
            Request::Delete { request_id, id } => {
                self.decided(&request_id, false)?;
                if !self.is_queued(&request_id) {
                    self.admit()?;
                }
                Ok(Some(((Item { request_id, op: ItemOp::Delete(id) }, 0), None)))
            }
        }
    }

    /// Whether a request with this id waits for a batch here (a retry joins it).
    fn is_queued(&self, request_id: &str) -> bool {
        self.queue.iter().any(|q| q.item.request_id == request_id)
    }

    /// The leader refuses a new request while `batch.max_queued` wait (before its share is parsed
    /// or stored, so a refused request leaves nothing behind); a retry of a queued request always
    /// joins it. Only the leader, which forms the batches, decides: followers refusing by their own
    /// count would admit different requests at the margin, and a request missing at any node is
    /// dropped from its batch. A follower holds what the leader has not proposed until the client's
    /// retry joins it or it expires (see [`Core::expire`]).
    fn admit(&mut self) -> Result<(), Handled> {
        let (waiting, max) = (self.queue.len(), self.cfg.batch.max_queued);
        if self.cfg.id != LEADER || waiting < max {
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
    /// `batch.max_queued` ([`Core::admit`]): followers counting for themselves would each hold
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

    /// Answers a request id that was already decided (an idempotent retry).
    fn decided(&mut self, request_id: &str, submit: bool) -> Result<(), Handled> {
        check_request_id(request_id, 512).map_err(|e| Handled::new(error(e, false)))?;
        match self.engine.store.outcome(request_id) {
            Ok(None) => Ok(()),
            Ok(Some((seq, op))) => match (&op, submit) {
                (Op::Outcome { .. } | Op::Refused { .. }, true) | (Op::Delete { .. }, false) => {
                    Err(Handled::new(reply_of(seq, &op)))
                }
                _ => Err(Handled::new(error("request id already used by a different kind of request", false))),
            },
            Err(e) => Err(Handled::new(error(format!("store: {e}"), true))),
        }
    }

    fn status(&mut self) -> Result<NodeStatus, NodeError> {
        let host = argus_math::kernels::host();
        Ok(NodeStatus {
            id: self.cfg.id,
            scheme: self.engine.scheme.name().to_string(),
            summary: self.engine.summary()?,
            db_bytes: self.engine.db_bytes() as u64,
            rss_bytes: crate::rss_bytes(),
            share_bytes_per_code_bit: self.engine.scheme.share_bytes_per_code_bit(),
            peer_bytes_sent: self.peer_bytes.0 + self.peer_bytes.1,
            queued: self.queue.len(),
            refused_busy: self.refused_busy,
            refused_short: self.refused_short,
            refused_invalid: self.refused_invalid,
            refused_mirror: self.refused_mirror,
            serving: self.serving,
            kernel: argus_iris::protocol::kernel_name(
                &self.engine.scheme,
                self.engine.geometry(),
                &self.engine.cfg,
                self.cfg.batch.max,
            ),
            cpu: host.cpu,
            isa: host.isa.to_string(),
        })
    }

    /// How long a request may wait idle for its batch (4 × `share_timeout_ms`), and the longest
    /// the leader can hold one ([`longest_hold`]) given the longest batch so far.
    fn hold(&self) -> (Duration, Duration) {
        let age = Duration::from_millis(self.cfg.batch.share_timeout_ms) * 4;
        (age, longest_hold(self.cfg.batch.max_queued, self.cfg.batch.max, self.longest_batch, age))
    }

    /// Drops a follower's requests that the leader never proposes: those that waited longer than
    /// the idle `age` of [`Core::hold`] for a batch, not counting the time this node spent running other batches, and — so
    /// that a service busy without a pause still lets go of requests its leader refused — those
    /// that waited longer than the leader can hold one: its whole queue (`batch.max_queued`,
    /// `batch.max` per batch) at the longest batch seen, after `age`.
    fn expire(&mut self) {
        let busy = self.busy;
        let (age, longest) = self.hold();
        let (old, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.queue)
            .into_iter()
            .partition(|q| expired(q.since.elapsed(), busy - q.busy_at, age, longest));
        self.queue = keep;
        for q in old {
            self.forget_pending(&q.item);
            for w in q.waiters {
                let _ = w.send(error("the request did not reach all three nodes in time; retry", true));
            }
        }
    }

    fn fail_queue(&mut self, why: &str) {
        for q in std::mem::take(&mut self.queue) {
            for w in q.waiters {
                let _ = w.send(error(why, true));
            }
        }
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

/// The least age of a pending share that [`Core::prune_pending`] deletes.
const PENDING_KEEP_MIN: Duration = Duration::from_secs(24 * 3600);
/// How often a serving node prunes abandoned pending shares.
const PRUNE_EVERY: Duration = Duration::from_secs(600);

/// Whether a request that has waited `waited`, `busy` of it while this node ran batches, is past
/// `age` of idle waiting or `longest` in all (see [`Core::expire`]).
fn expired(waited: Duration, busy: Duration, age: Duration, longest: Duration) -> bool {
    waited.saturating_sub(busy) > age || waited > longest
}

/// How long one attempt to connect to the peers may take.
const CONNECT: Duration = Duration::from_secs(10);
/// The pause after a failed attempt, doubling up to the maximum.
const RETRY_MIN: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// A request answered without queueing.
struct Handled(Box<Reply>);

impl Handled {
    fn new(r: Reply) -> Self {
        Handled(Box::new(r))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A confirmation is a subset of the proposal without what this node lacks; anything else
    /// is named.
    #[test]
    fn a_confirmation_of_an_item_not_held_is_refused() {
        let item = |id: &str| Item { request_id: id.into(), op: ItemOp::Submit(Kind::Check) };
        let proposed = [item("a"), item("b"), item("c")];
        let missing = vec!["b".to_string()];
        assert!(unheld_in_go(&proposed, &missing, &[item("a"), item("c")]).is_ok());
        assert!(unheld_in_go(&proposed, &missing, &[]).is_ok());
        let e = unheld_in_go(&proposed, &missing, &[item("a"), item("b")]).unwrap_err();
        assert!(e.contains("\"b\"") && e.contains("reported missing"), "{e}");
        let e = unheld_in_go(&proposed, &missing, &[item("z")]).unwrap_err();
        assert!(e.contains("never proposed"), "{e}");
    }

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
}
