//! One node's state and the transitions every node applies identically: decode and check a
//! batch, plan its commit from the revealed outcomes, apply the commit to the store and to the
//! in-memory database (kept in ascending identity order, the same on every node).

use std::collections::HashMap;

use argus_iris::protocol::scheme::{query_kind, IrisScheme, ShareKind};
use argus_iris::protocol::{Checked, Tuning};
use argus_iris::{IrisGeometry, MatchConfig};
use argus_mpc::{MpcError, Party};
use argus_net::PartyId;
use argus_prg::Prg;
use argus_store::{Commit, IdentityId, Op, Store, StoreError, Summary};

use crate::wire::{Item, ItemOp, Kind, Part};
use crate::NodeError;

/// What a batch decided for one submission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Checked: whether it matched nothing (for a verification: whether it is not the identity).
    Checked {
        /// No match.
        unique: bool,
    },
    /// Refused without a check: the reason its client is told.
    Refused(String),
}

/// A node's database and store under scheme `S`.
pub struct Engine<S: IrisScheme> {
    /// The scheme.
    pub scheme: S,
    /// Matching configuration.
    pub cfg: MatchConfig,
    /// How the MPC check runs (its comparison chunk is re-chosen by the core with
    /// `compare_chunk = "auto"`).
    pub tuning: Tuning,
    len: usize,
    geometry: IrisGeometry,
    query: ShareKind,
    db: S::Db,
    ids: Vec<IdentityId>,
    loaded: bool,
    next_id: IdentityId,
    last_seq: u64,
    /// The durable store.
    pub store: Box<dyn Store>,
}

impl<S: IrisScheme> Engine<S> {
    /// An engine over `store`; call [`load`](Engine::load) before serving.
    pub fn new(
        scheme: S,
        cfg: MatchConfig,
        tuning: Tuning,
        geometry: IrisGeometry,
        mut store: Box<dyn Store>,
    ) -> Result<Self, NodeError> {
        let len = geometry.bits();
        let query = query_kind(&cfg, geometry)?;
        let s = store.summary()?;
        Ok(Engine {
            query,
            geometry,
            db: scheme.new_db(len),
            scheme,
            cfg,
            tuning,
            len,
            ids: Vec::new(),
            loaded: false,
            next_id: s.next_id,
            last_seq: s.last_seq,
            store,
        })
    }

    /// Loads every enrolled share from the store into memory (ascending id), calling `progress`
    /// with the number loaded so far.
    pub fn load(&mut self, progress: &mut dyn FnMut(u64)) -> Result<(), NodeError> {
        let mut db = self.scheme.new_db(self.len);
        let mut ids = Vec::new();
        let (scheme, len, cfg) = (&self.scheme, self.len, &self.cfg);
        self.store.for_each_identity(&mut |id, bytes| {
            let share = scheme
                .decode(bytes, len, cfg, ShareKind::Enrollment)
                .map_err(|e| argus_store::StoreError::Corrupt(format!("identity {id}: {e}")))?;
            scheme
                .push(&mut db, &share)
                .map_err(|e| argus_store::StoreError::Corrupt(format!("identity {id}: {e}")))?;
            ids.push(id);
            if ids.len() % 1000 == 0 {
                progress(ids.len() as u64);
            }
            Ok(())
        })?;
        progress(ids.len() as u64);
        if ids.windows(2).any(|w| w[0] >= w[1]) {
            return Err(NodeError::Inconsistent("the store did not list identities in ascending order".into()));
        }
        let s = self.store.summary()?;
        (self.db, self.ids, self.loaded, self.next_id, self.last_seq) = (db, ids, true, s.next_id, s.last_seq);
        Ok(())
    }

    /// Enrolled identities in memory.
    pub fn count(&self) -> usize {
        self.ids.len()
    }

    /// The last applied commit.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Bytes of shares in memory.
    pub fn db_bytes(&self) -> usize {
        self.scheme.db_bytes(&self.db)
    }

    /// The store's summary (count, digest of ids, last commit, next id).
    pub fn summary(&mut self) -> Result<Summary, NodeError> {
        Ok(self.store.summary()?)
    }

    /// Parses and validates a client's query share. A share of the wrong shape says which
    /// settings it must have been made with: the usual cause is a `client.toml` whose `[iris]`
    /// differs from the nodes'.
    pub fn decode_query(&self, bytes: &[u8]) -> Result<S::Share, NodeError> {
        self.scheme.decode(bytes, self.len, &self.cfg, self.query).map_err(|e| match e {
            argus_iris::IrisError::BadShare(why) => NodeError::Input(format!(
                "invalid share: {why}; this node runs scheme {} on {}-bit codes with rotations {:?} and {:?} masks, \
                 and the client's [iris] settings (client.toml) must be the same",
                self.scheme.name(),
                self.len,
                self.cfg.rotations,
                self.cfg.mask_mode
            )),
            e => e.into(),
        })
    }

    /// The enrolment share contained in a query share, encoded for the store.
    pub fn enrollment_bytes(&self, q: &S::Share) -> Result<Vec<u8>, NodeError> {
        Ok(self.scheme.encode(&self.scheme.enrollment_of(q)?))
    }

    /// Runs the protocol on a batch of queries; `dedup`: a query that matches an earlier query of
    /// the batch is not unique (for enrolments).
    pub fn check(&self, p: &mut Party, queries: &[S::Share], dedup: bool) -> Result<Checked, MpcError> {
        self.scheme.check(p, queries, &self.db, &self.cfg, &self.tuning, dedup)
    }

    /// Per query, whether its shares are not those of a valid template ([`IrisScheme::invalid`]):
    /// one bit revealed per query.
    pub fn invalid(&self, p: &mut Party, queries: &[S::Share]) -> Result<Vec<bool>, MpcError> {
        self.scheme.invalid(p, queries, self.len)
    }

    /// What a client whose query [`invalid`](Self::invalid) found invalid is told.
    pub fn invalid_reason(&self) -> String {
        "the shares are not those of a valid template (a code value outside -1..1 or a mask value outside \
         0..1, rows that disagree, or the nodes' shares made from different templates); nothing of it was \
         checked or stored: share the template again with an argus client"
            .into()
    }

    /// The codes' geometry.
    pub fn geometry(&self) -> IrisGeometry {
        self.geometry
    }

    /// Per query, whether its mirror image ([`argus_iris::Template::mirrored`]) matches nothing
    /// enrolled ([`IrisScheme::mirrored`], checked against the database alone): `false` marks a
    /// mirror attack. One bit revealed per query.
    pub fn mirror_unique(&self, p: &mut Party, queries: &[S::Share]) -> Result<Vec<bool>, MpcError> {
        let ShareKind::Query { geometry, .. } = self.query else {
            return Err(MpcError::InvalidParameter("the engine's query kind is not a query".into()));
        };
        let mirrored = self.scheme.mirrored(p, queries, geometry)?;
        let cfg = MatchConfig { reveal_matches: false, ..self.cfg.clone() };
        Ok(self.scheme.check(p, &mirrored, &self.db, &cfg, &self.tuning, false)?.unique)
    }

    /// What a client whose query was found a mirror attack is told.
    pub fn mirror_reason(&self) -> String {
        "the template matches an enrolled identity with its eyes swapped and mirrored (a mirror attack: \
         iris.mirror_check); nothing of it was stored"
            .into()
    }

    /// Per query, whether an eye's mask leaves too few valid bits ([`IrisScheme::short_masks`]):
    /// one bit revealed per query.
    pub fn short_masks(&self, p: &mut Party, queries: &[S::Share]) -> Result<Vec<bool>, MpcError> {
        self.scheme.short_masks(p, queries, self.len, &self.cfg, &self.tuning)
    }

    /// What a client whose query [`short_masks`](Self::short_masks) found short is told.
    pub fn short_reason(&self) -> String {
        format!(
            "an eye of the template has fewer than {} valid (unmasked) code bits of {} (iris.min_valid = \
             {}); nothing of it was checked or stored: capture the eyes again",
            self.cfg.min_valid_bits(self.len),
            self.len,
            self.cfg.min_valid.as_f64()
        )
    }

    /// Share recovery, a helper's side: this node's (`me`) parts for node `lost` of up to `limit`
    /// identities with ids above `after`, in id order, encoded ([`IrisScheme::recovery_part`];
    /// `pad` is shared with the other helper alone).
    pub fn recovery_parts(
        &mut self,
        me: PartyId,
        lost: PartyId,
        after: Option<IdentityId>,
        limit: usize,
        pad: &mut Prg,
    ) -> Result<Vec<Part>, NodeError> {
        let page = self.store.identities_after(after, limit)?;
        page.into_iter()
            .map(|(id, bytes)| {
                let share = self
                    .scheme
                    .decode(&bytes, self.len, &self.cfg, ShareKind::Enrollment)
                    .map_err(|e| StoreError::Corrupt(format!("identity {id}: {e}")))?;
                Ok(Part { id, bytes: self.scheme.encode(&self.scheme.recovery_part(me, lost, &share, pad)?) })
            })
            .collect()
    }

    /// Share recovery, the lost node's side: adds up the two helpers' parts of the same
    /// identities into this node's shares and writes them to the store (before the database is
    /// loaded). Returns how many were written: an identity held already with the same share is
    /// skipped, so an interrupted recovery can run again.
    pub fn import_recovered(&mut self, a: Vec<Part>, b: Vec<Part>) -> Result<u64, NodeError> {
        if a.len() != b.len() || a.iter().zip(&b).any(|(x, y)| x.id != y.id) {
            return Err(NodeError::Protocol("the two peers sent parts of different identities".into()));
        }
        let part = |id: IdentityId, bytes: &[u8]| {
            self.scheme
                .decode(bytes, self.len, &self.cfg, ShareKind::Enrollment)
                .map_err(|e| NodeError::Protocol(format!("recovery part of identity {id}: {e}")))
        };
        let mut rows = Vec::with_capacity(a.len());
        for (x, y) in a.iter().zip(&b) {
            let share = self.scheme.recover(&part(x.id, &x.bytes)?, &part(x.id, &y.bytes)?)?;
            rows.push((x.id, self.scheme.encode(&share)));
        }
        self.store.bulk_import(&mut rows.into_iter()).map_err(|e| match e {
            StoreError::DuplicateId(id) => NodeError::Inconsistent(format!(
                "this store holds identity {id} with another share than its peers': it is not this \
                 deployment's store (move it aside and recover into an empty one)"
            )),
            e => e.into(),
        })
    }

    /// Share recovery: applies a commit of the peers' log without its enrolments' shares, which
    /// came back by [`import_recovered`](Self::import_recovered) ([`Store::adopt`]).
    pub fn adopt(&mut self, c: &Commit) -> Result<(), NodeError> {
        if self.loaded {
            return Err(NodeError::Inconsistent("share recovery comes before the database is loaded".into()));
        }
        self.store.adopt(c)?;
        self.last_seq = self.last_seq.max(c.seq);
        for op in &c.ops {
            if let Op::Outcome { enrolled: Some(id), .. } = op {
                self.next_id = self.next_id.max(id + 1);
            }
        }
        Ok(())
    }

    /// Whether the three nodes' databases hold consistent shares ([`IrisScheme::audit`]); `seed`
    /// is public and the same on all three.
    pub fn audit(&self, p: &mut Party, seed: &argus_prg::Seed) -> Result<bool, MpcError> {
        self.scheme.audit(p, &self.db, seed)
    }

    /// The identity enrolled at database position `pos` (as [`Checked::matches`] counts them).
    pub fn id_at(&self, pos: usize) -> Option<IdentityId> {
        self.ids.get(pos).copied()
    }

    /// Whether `query` matches enrolled identity `id` alone (the 1:1 check of [`Kind::Verify`]):
    /// the identity's share from the store in a database of one, the scheme's check, one bit
    /// revealed. An id not enrolled is `false` on every node (the stores agree).
    pub fn verify(&mut self, p: &mut Party, query: &S::Share, id: IdentityId) -> Result<bool, NodeError> {
        let found = self.store.identities_after(id.checked_sub(1), 1)?;
        let Some((_, bytes)) = found.into_iter().find(|(i, _)| *i == id) else {
            return Ok(false);
        };
        let share = self.scheme.decode(&bytes, self.len, &self.cfg, ShareKind::Enrollment)?;
        let mut one = self.scheme.new_db(self.len);
        self.scheme.push(&mut one, &share)?;
        let cfg = MatchConfig { reveal_matches: false, ..self.cfg.clone() };
        let checked = self.scheme.check(p, std::slice::from_ref(query), &one, &cfg, &self.tuning, false)?;
        Ok(!checked.unique[0])
    }

    /// The commit of batch `seq`: the `i`-th submission of `items` gets `decisions[i]`; unique
    /// enrolments get the next identity ids in batch order.
    pub fn plan(&self, seq: u64, items: &[Item], decisions: &[Decision]) -> Commit {
        let mut next = self.next_id;
        let mut d = decisions.iter();
        let ops = items
            .iter()
            .map(|it| match it.op {
                ItemOp::Submit(kind) => match d.next().expect("one decision per submission") {
                    Decision::Refused(reason) => {
                        Op::Refused { request_id: it.request_id.clone(), reason: reason.clone() }
                    }
                    &Decision::Checked { unique } => {
                        let enrolled = (kind == Kind::Enroll && unique).then(|| {
                            next += 1;
                            next - 1
                        });
                        Op::Outcome { request_id: it.request_id.clone(), unique, enrolled }
                    }
                },
                ItemOp::Delete(id) => {
                    Op::Delete { request_id: it.request_id.clone(), id, existed: self.ids.binary_search(&id).is_ok() }
                }
            })
            .collect();
        Commit { seq, ops }
    }

    /// Applies a commit to the store (one transaction) and then to memory. Enrolment shares come
    /// from `fresh` (request id → share) or, when catching up, from the store's pending shares.
    pub fn apply(&mut self, c: &Commit, fresh: &HashMap<String, S::Share>) -> Result<(), NodeError> {
        if c.seq <= self.last_seq {
            return Ok(());
        }
        let mut enrol = Vec::new();
        if self.loaded {
            for op in &c.ops {
                if let Op::Outcome { request_id, enrolled: Some(id), .. } = op {
                    let share = match fresh.get(request_id) {
                        Some(s) => s.clone(),
                        None => {
                            let bytes = self.store.pending(request_id)?.ok_or_else(|| {
                                NodeError::Inconsistent(format!("no pending share for enrolled request {request_id}"))
                            })?;
                            self.scheme.decode(&bytes, self.len, &self.cfg, ShareKind::Enrollment)?
                        }
                    };
                    enrol.push((*id, share));
                }
            }
        }
        self.store.commit(c)?;
        self.last_seq = c.seq;
        for op in &c.ops {
            match op {
                Op::Outcome { enrolled: Some(id), .. } => self.next_id = self.next_id.max(id + 1),
                Op::Delete { id, .. } if self.loaded => {
                    if let Ok(i) = self.ids.binary_search(id) {
                        self.scheme.remove(&mut self.db, i)?;
                        self.ids.remove(i);
                    }
                }
                _ => {}
            }
        }
        for (id, share) in enrol {
            if self.ids.last().is_some_and(|&last| last >= id) {
                return Err(NodeError::Inconsistent(format!("identity {id} enrolled out of order")));
            }
            self.scheme.push(&mut self.db, &share)?;
            self.ids.push(id);
        }
        Ok(())
    }
}
