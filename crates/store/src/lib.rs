//! The durable store of one node of the iris uniqueness service.
//!
//! # Model
//!
//! The store keeps **opaque** share blobs: it never looks inside them and knows nothing about MPC. It
//! holds four kinds of state:
//!
//! - **identities**: the enrolled population, `id → share`, read in ascending id order at start-up
//!   ([`Store::for_each_identity`]) to load the node's database of shares;
//! - **pending** shares: a request's share, written durably ([`Store::put_pending`]) before the node
//!   takes part in the batch that checks it, so that a crash between the check and the enrolment loses
//!   nothing;
//! - the **commit log**: every node applies the same [`Commit`]s (numbered `1, 2, 3, …` without gaps)
//!   in the same order. A commit enrols pending shares as identities, deletes identities and records
//!   the [`Op`] of every request id, all in one transaction ([`Store::commit`]). Re-applying an old
//!   commit is a no-op, so a retry after a crash is safe; a node that missed commits fetches them from a
//!   peer with [`Store::commits_since`];
//! - **meta**: the last applied sequence number, the next free identity id and the schema version.
//!
//! The nodes compare their [`Summary`] (count and SHA-256 of the enrolled ids, last seq, next id) at
//! start-up: equal summaries mean the three stores hold the same population, without revealing shares.
//!
//! # Back-ends
//!
//! [`open`] picks the back-end from the URL:
//!
//! - **SQLite** (`sqlite:PATH` or a plain path), the default: embedded, needs no set-up. WAL journal with
//!   `synchronous=FULL`, so a returned call is on disk and a crash (even of the machine) leaves the
//!   last committed state; readers never block the writer.
//! - **PostgreSQL** (`postgres://…`, `postgresql://…`, any URL the `postgres` crate accepts), for
//!   deployments that already run a database server. Each node needs **its own database** (the tables
//!   have fixed names). TLS with libpq's URL parameters (`sslmode`, `sslrootcert`, optionally
//!   `sslcert`/`sslkey`); whenever the connection is encrypted the server's certificate chain and host
//!   name are verified ([`connect_postgres`]). Without them the connection is plain (loopback or a
//!   UNIX socket).
//!
//! Both back-ends use the same logical schema: `identities(id, share)`, `pending(request_id, share,
//! created_at)`, `outcomes(request_id, seq, op)`, `commits(seq, ops)` and `meta(key, value)`, with ops
//! stored as JSON. Ids and sequence numbers are stored as signed 64-bit integers, so values above
//! `i64::MAX` are refused ([`StoreError::OutOfRange`]).
//!
//! Nothing in this crate logs or formats share contents; errors name request ids and identity ids only.

#![warn(missing_docs)]

mod pg;
mod sqlite;

pub use pg::connect as connect_postgres;
pub use pg::create_database_if_missing as create_postgres_database_if_missing;

pub use argus_records::{Commit, IdentityId, Op, Summary};

use sha2::{Digest, Sha256};
use std::time::Duration;

/// The schema version this crate writes; a store with a newer version is refused.
pub const SCHEMA_VERSION: i64 = 1;

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An error of the SQLite back-end.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// An error of the PostgreSQL back-end (connection, query or server error).
    #[error("postgres: {}", pg_message(.0))]
    Postgres(#[from] postgres::Error),
    /// The stored data is inconsistent or undecodable.
    #[error("store corrupt: {0}")]
    Corrupt(String),
    /// A commit arrived out of order: the store expected `expected` (last applied + 1).
    #[error("commit out of order: expected seq {expected}, got {got}")]
    SeqGap {
        /// The sequence number the store can apply next.
        expected: u64,
        /// The sequence number of the refused commit.
        got: u64,
    },
    /// A commit enrols a request whose share was never put (or was pruned).
    #[error("no pending share for request `{request_id}`")]
    MissingPending {
        /// The request id without a pending share.
        request_id: String,
    },
    /// An identity id is enrolled already.
    #[error("identity {0} already exists")]
    DuplicateId(IdentityId),
    /// The store URL is not understood.
    #[error("bad store URL: {0}")]
    BadUrl(String),
    /// A PostgreSQL database is missing and this role may not create it (the message says how).
    #[error("{0}")]
    MissingDatabase(String),
    /// The store was written by a newer version of this crate.
    #[error("store schema version {found} is newer than the supported version {supported}: upgrade Argus")]
    UnsupportedSchema {
        /// The version found in the store.
        found: i64,
        /// The newest version this build understands.
        supported: i64,
    },
    /// A value does not fit the store's signed 64-bit columns.
    #[error("{what} {value} is out of range (at most {})", i64::MAX)]
    OutOfRange {
        /// What the value is (e.g. "identity id").
        what: &'static str,
        /// The refused value.
        value: u64,
    },
    /// The SQLite database could not be put in the required mode.
    #[error("sqlite set-up: {0}")]
    Setup(String),
}

/// The server's message for database errors (the driver's own `Display` only says "db error").
fn pg_message(e: &postgres::Error) -> String {
    match (e.as_db_error(), std::error::Error::source(e)) {
        (Some(db), _) => format!("{e}: {db}"),
        (None, Some(src)) => format!("{e}: {src}"),
        (None, None) => e.to_string(),
    }
}

/// The durable store of one node; see the crate documentation for the model.
pub trait Store: Send {
    /// Short description for logs, never containing a password (e.g. "sqlite /path/db" or "postgres host/db").
    fn describe(&self) -> String;

    /// The count and digest of the enrolled ids, the last applied seq and the next free id.
    fn summary(&mut self) -> Result<Summary, StoreError>;

    /// Calls `f(id, share)` for every enrolled identity in ascending id order, streaming (the blobs are
    /// never all held in memory at once). An error from `f` stops the iteration and is returned.
    #[allow(clippy::type_complexity)]
    fn for_each_identity(
        &mut self,
        f: &mut dyn FnMut(IdentityId, &[u8]) -> Result<(), StoreError>,
    ) -> Result<(), StoreError>;

    /// Up to `limit` enrolled identities with ids above `after` (from the smallest with `None`), in
    /// ascending id order: a page of the population, for a reader that must not hold the store
    /// while it works on each page (share recovery).
    fn identities_after(
        &mut self,
        after: Option<IdentityId>,
        limit: usize,
    ) -> Result<Vec<(IdentityId, Vec<u8>)>, StoreError>;

    /// Durably records a request's share before the node takes part in its batch (replaces an existing
    /// pending share of the same request id). Committed and synced to disk on return.
    fn put_pending(&mut self, request_id: &str, share: &[u8]) -> Result<(), StoreError>;

    /// The pending share of a request, if any.
    fn pending(&mut self, request_id: &str) -> Result<Option<Vec<u8>>, StoreError>;

    /// How many pending shares are stored (what a node bounds: `limits.pending_shares`).
    fn pending_count(&mut self) -> Result<u64, StoreError>;

    /// Deletes a request's pending share, if any (a request that left the queue without a batch:
    /// no commit can name it).
    fn delete_pending(&mut self, request_id: &str) -> Result<(), StoreError>;

    /// The committed op for this request id and its commit's seq, if any (idempotent retries). When
    /// several commits named the request, the latest wins.
    fn outcome(&mut self, request_id: &str) -> Result<Option<(u64, Op)>, StoreError>;

    /// Applies a commit in one transaction.
    ///
    /// - `c.seq <= last_seq`: already applied, a no-op returning `Ok(false)`;
    /// - `c.seq != last_seq + 1`: [`StoreError::SeqGap`];
    /// - [`Op::Outcome`] with `enrolled = Some(id)`: the pending share of the request becomes identity `id`
    ///   ([`StoreError::MissingPending`] if there is none, [`StoreError::DuplicateId`] if `id` is enrolled);
    ///   `next_id` becomes `max(next_id, id + 1)`;
    /// - [`Op::Delete`]: removes the identity if present.
    ///
    /// Every op is recorded under its request id (for [`Store::outcome`]), the commit is appended to the log
    /// (for [`Store::commits_since`]), the pending shares of all request ids in the commit are deleted and
    /// `last_seq` is set. Returns `Ok(true)` when applied; on any error nothing of the commit is kept.
    fn commit(&mut self, c: &Commit) -> Result<bool, StoreError>;

    /// Share recovery (a node rebuilt from its peers): [`commit`](Store::commit) without the shares.
    /// An enrolment moves no pending share and needs none (the identities come back through
    /// [`bulk_import`](Store::bulk_import), recovered from the peers) but still advances `next_id`;
    /// deletions, outcomes, the log and `last_seq` are as in `commit`.
    fn adopt(&mut self, c: &Commit) -> Result<bool, StoreError>;

    /// The logged commits with seq > `after`, ascending (how a node that crashed catches up from a peer).
    fn commits_since(&mut self, after: u64) -> Result<Vec<Commit>, StoreError>;

    /// Bulk import of existing shares (seeding a deployment): inserts `(id, share)` rows in transactions of
    /// [`IMPORT_BATCH`] rows. A row whose id is already held with the same share is skipped, so an
    /// interrupted import can simply be run again; an id held with another share is
    /// [`StoreError::DuplicateId`], with nothing of that transaction kept (earlier transactions stay).
    /// Advances `next_id` past the largest id. Not logged as a commit. Returns the number of rows
    /// written (not counting those skipped).
    fn bulk_import(&mut self, rows: &mut dyn Iterator<Item = (IdentityId, Vec<u8>)>) -> Result<u64, StoreError>;

    /// Deletes the pending shares older than `age` (second resolution) that no commit used: abandoned
    /// requests. Returns how many were deleted.
    fn prune_pending(&mut self, age: Duration) -> Result<u64, StoreError>;

    /// Total bytes of enrolled share blobs (for the memory/storage report).
    fn share_bytes(&mut self) -> Result<u64, StoreError>;
}

/// Rows per transaction of [`Store::bulk_import`].
pub const IMPORT_BATCH: usize = 256;

/// Opens (creating the schema if needed) the store at `url`.
///
/// - `postgres://…` or `postgresql://…`: PostgreSQL; the database must exist and belong to this node
///   alone. TLS with libpq's URL parameters (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`; the
///   server is always verified when TLS is used): [`connect_postgres`].
/// - `sqlite:PATH` (also `sqlite://PATH`, so `sqlite:///abs/path` works) or a plain file path: SQLite in WAL
///   mode with `synchronous=FULL`, foreign keys on and a busy timeout; the file is created if missing.
///
/// Refuses a store whose schema version is newer than [`SCHEMA_VERSION`].
pub fn open(url: &str) -> Result<Box<dyn Store>, StoreError> {
    let url = url.trim();
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return Ok(Box::new(pg::PgStore::open(url)?));
    }
    let path = if let Some(rest) = url.strip_prefix("sqlite:") {
        rest.strip_prefix("//").unwrap_or(rest)
    } else if let Some((scheme, _)) = url.split_once("://") {
        return Err(StoreError::BadUrl(format!("unknown scheme `{scheme}` (expected postgres, postgresql or sqlite)")));
    } else {
        url
    };
    if path.is_empty() {
        return Err(StoreError::BadUrl("empty SQLite path".into()));
    }
    Ok(Box::new(sqlite::SqliteStore::open(std::path::Path::new(path))?))
}

// ---- helpers shared by the back-ends ----

/// Incremental digest of ascending ids for [`Summary`].
pub(crate) struct IdDigest {
    hasher: Sha256,
    count: u64,
}

impl IdDigest {
    pub(crate) fn new() -> Self {
        IdDigest { hasher: Sha256::new(), count: 0 }
    }

    pub(crate) fn push(&mut self, id: IdentityId) {
        self.hasher.update(id.to_le_bytes());
        self.count += 1;
    }

    pub(crate) fn finish(self, last_seq: u64, next_id: IdentityId) -> Summary {
        Summary { count: self.count, digest: self.hasher.finalize().into(), last_seq, next_id }
    }
}

/// `u64` → the signed column type.
pub(crate) fn to_i64(what: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::OutOfRange { what, value })
}

/// The signed column type → `u64`; negative values mean a damaged store.
pub(crate) fn from_i64(what: &'static str, value: i64) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| StoreError::Corrupt(format!("negative {what} {value}")))
}

pub(crate) fn encode_op(op: &Op) -> Result<String, StoreError> {
    serde_json::to_string(op).map_err(|e| StoreError::Corrupt(format!("encoding op: {e}")))
}

pub(crate) fn decode_op(json: &str) -> Result<Op, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Corrupt(format!("undecodable op: {e}")))
}

pub(crate) fn encode_ops(ops: &[Op]) -> Result<String, StoreError> {
    serde_json::to_string(ops).map_err(|e| StoreError::Corrupt(format!("encoding ops: {e}")))
}

pub(crate) fn decode_ops(json: &str) -> Result<Vec<Op>, StoreError> {
    serde_json::from_str(json).map_err(|e| StoreError::Corrupt(format!("undecodable commit: {e}")))
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The `created_at` bound of [`Store::prune_pending`]: rows created at or before it are old enough.
pub(crate) fn prune_cutoff(age: Duration) -> i64 {
    unix_now().saturating_sub(i64::try_from(age.as_secs()).unwrap_or(i64::MAX))
}
