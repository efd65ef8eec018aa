//! The embedded SQLite back-end (WAL journal, `synchronous=FULL`).

use crate::{
    decode_op, decode_ops, encode_op, encode_ops, from_i64, prune_cutoff, to_i64, unix_now, Commit, IdDigest,
    IdentityId, Op, Store, StoreError, Summary, IMPORT_BATCH, SCHEMA_VERSION,
};
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Page size of a new database: a 64 KiB share spans 4 overflow pages instead of 16.
const PAGE_SIZE: i64 = 16 * 1024;
/// Page cache per connection, in KiB (negative `cache_size` = KiB).
const CACHE_KIB: i64 = 32 * 1024;
/// How long a statement waits for another connection's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Small columns come before the blobs, so reading them never walks a blob's overflow pages.
const SCHEMA: &str = "
CREATE TABLE identities(id INTEGER PRIMARY KEY, share BLOB NOT NULL);
CREATE TABLE pending(request_id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, share BLOB NOT NULL);
CREATE INDEX pending_created_at ON pending(created_at);
CREATE TABLE outcomes(request_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, op TEXT NOT NULL);
CREATE TABLE commits(seq INTEGER PRIMARY KEY, ops TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES ('last_seq', 0), ('next_id', 0);
";

pub(crate) struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// [`Store::commit`], or with `adopt` [`Store::adopt`]: an enrolment moves no pending share.
    fn apply(&mut self, c: &Commit, adopt: bool) -> Result<bool, StoreError> {
        // IMMEDIATE: take the write lock first, so the meta read below cannot go stale.
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let last_seq = meta(&tx, "last_seq")?;
        if c.seq <= last_seq {
            return Ok(false);
        }
        if c.seq != last_seq + 1 {
            return Err(StoreError::SeqGap { expected: last_seq + 1, got: c.seq });
        }
        let seq = to_i64("seq", c.seq)?;
        let mut next_id = meta(&tx, "next_id")?;
        for op in &c.ops {
            match op {
                Op::Outcome { enrolled: Some(id), .. } if adopt => next_id = next_id.max(id + 1),
                Op::Outcome { request_id, enrolled: Some(id), .. } => {
                    let moved = tx
                        .prepare_cached(
                            "INSERT INTO identities(id, share) SELECT ?1, share FROM pending WHERE request_id = ?2
                             ON CONFLICT DO NOTHING",
                        )?
                        .execute(params![to_i64("identity id", *id)?, request_id])?;
                    if moved == 0 {
                        let has_pending =
                            tx.prepare_cached("SELECT 1 FROM pending WHERE request_id = ?1")?.exists([request_id])?;
                        return Err(if has_pending {
                            StoreError::DuplicateId(*id)
                        } else {
                            StoreError::MissingPending { request_id: request_id.clone() }
                        });
                    }
                    next_id = next_id.max(id + 1);
                }
                Op::Outcome { enrolled: None, .. } | Op::Refused { .. } => {}
                Op::Delete { id, .. } => {
                    // Ids above i64::MAX cannot be enrolled, so there is nothing to delete.
                    if let Ok(id) = to_i64("identity id", *id) {
                        tx.prepare_cached("DELETE FROM identities WHERE id = ?1")?.execute([id])?;
                    }
                }
            }
            tx.prepare_cached(
                "INSERT INTO outcomes(request_id, seq, op) VALUES (?1, ?2, ?3)
                 ON CONFLICT(request_id) DO UPDATE SET seq = excluded.seq, op = excluded.op",
            )?
            .execute(params![op.request_id(), seq, encode_op(op)?])?;
        }
        for op in &c.ops {
            tx.prepare_cached("DELETE FROM pending WHERE request_id = ?1")?.execute([op.request_id()])?;
        }
        tx.prepare_cached("INSERT INTO commits(seq, ops) VALUES (?1, ?2)")?
            .execute(params![seq, encode_ops(&c.ops)?])?;
        set_meta(&tx, "last_seq", c.seq)?;
        set_meta(&tx, "next_id", next_id)?;
        tx.commit()?;
        if c.ops.iter().any(|op| matches!(op, Op::Delete { .. })) {
            // A deletion zeroes the share's pages (secure_delete); copying them into the database
            // file now and truncating the WAL leaves no copy of the share in either file.
            self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        }
        Ok(true)
    }

    pub(crate) fn open(path: &Path) -> Result<Self, StoreError> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Takes effect only on a new database (before the first table and before WAL), ignored otherwise.
        conn.pragma_update(None, "page_size", PAGE_SIZE)?;
        let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
            return Err(StoreError::Setup(format!("journal_mode is `{mode}`, WAL is required")));
        }
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.pragma_update(None, "cache_size", -CACHE_KIB)?;
        // Deleted rows (a deleted identity's share, a used or pruned pending share) are overwritten
        // with zeros, not left in free pages.
        conn.pragma_update(None, "secure_delete", "ON")?;
        let mut store = SqliteStore { conn, path: path.to_path_buf() };
        store.init_schema()?;
        Ok(store)
    }

    /// Creates the tables on a new database (atomically) or checks the version of an existing one.
    fn init_schema(&mut self) -> Result<(), StoreError> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute_batch("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);")?;
        let version: Option<i64> =
            tx.query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| r.get(0)).optional()?;
        match version {
            None => {
                tx.execute_batch(SCHEMA)?;
                tx.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?1)", [SCHEMA_VERSION])?;
            }
            Some(v) if v > SCHEMA_VERSION => {
                return Err(StoreError::UnsupportedSchema { found: v, supported: SCHEMA_VERSION })
            }
            Some(v) if v < 1 => return Err(StoreError::Corrupt(format!("schema version {v}"))),
            Some(_) => {}
        }
        tx.commit()?;
        Ok(())
    }
}

/// Reads one `meta` value.
fn meta(conn: &Connection, key: &'static str) -> Result<u64, StoreError> {
    let v: Option<i64> =
        conn.prepare_cached("SELECT value FROM meta WHERE key = ?1")?.query_row([key], |r| r.get(0)).optional()?;
    from_i64(key, v.ok_or_else(|| StoreError::Corrupt(format!("meta `{key}` missing")))?)
}

fn set_meta(conn: &Connection, key: &'static str, value: u64) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE meta SET value = ?2 WHERE key = ?1")?.execute(params![key, to_i64(key, value)?])?;
    Ok(())
}

impl Store for SqliteStore {
    fn describe(&self) -> String {
        format!("sqlite {}", self.path.display())
    }

    fn summary(&mut self) -> Result<Summary, StoreError> {
        // One read transaction: ids and meta from the same snapshot.
        let tx = self.conn.transaction()?;
        let mut digest = IdDigest::new();
        {
            let mut stmt = tx.prepare_cached("SELECT id FROM identities ORDER BY id")?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                digest.push(from_i64("identity id", row.get(0)?)?);
            }
        }
        let summary = digest.finish(meta(&tx, "last_seq")?, meta(&tx, "next_id")?);
        tx.commit()?;
        Ok(summary)
    }

    fn for_each_identity(
        &mut self,
        f: &mut dyn FnMut(IdentityId, &[u8]) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut stmt = self.conn.prepare_cached("SELECT id, share FROM identities ORDER BY id")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let id = from_i64("identity id", row.get(0)?)?;
            match row.get_ref(1)? {
                ValueRef::Blob(share) => f(id, share)?,
                _ => return Err(StoreError::Corrupt(format!("share of identity {id} is not a blob"))),
            }
        }
        Ok(())
    }

    fn identities_after(
        &mut self,
        after: Option<IdentityId>,
        limit: usize,
    ) -> Result<Vec<(IdentityId, Vec<u8>)>, StoreError> {
        let after = after.map_or(Ok(-1), |id| to_i64("identity id", id))?;
        let limit = to_i64("limit", limit as u64)?;
        let mut stmt =
            self.conn.prepare_cached("SELECT id, share FROM identities WHERE id > ?1 ORDER BY id LIMIT ?2")?;
        let rows = stmt.query_map(params![after, limit], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))?;
        rows.map(|r| {
            let (id, share) = r?;
            Ok((from_i64("identity id", id)?, share))
        })
        .collect()
    }

    fn put_pending(&mut self, request_id: &str, share: &[u8]) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT INTO pending(request_id, created_at, share) VALUES (?1, ?2, ?3)
                 ON CONFLICT(request_id) DO UPDATE SET created_at = excluded.created_at, share = excluded.share",
            )?
            .execute(params![request_id, unix_now(), share])?;
        Ok(())
    }

    fn delete_pending(&mut self, request_id: &str) -> Result<(), StoreError> {
        self.conn.prepare_cached("DELETE FROM pending WHERE request_id = ?1")?.execute([request_id])?;
        Ok(())
    }

    fn pending_count(&mut self) -> Result<u64, StoreError> {
        let n: i64 = self.conn.prepare_cached("SELECT COUNT(*) FROM pending")?.query_row([], |r| r.get(0))?;
        from_i64("pending shares", n)
    }

    fn pending(&mut self, request_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT share FROM pending WHERE request_id = ?1")?
            .query_row([request_id], |r| r.get(0))
            .optional()?)
    }

    fn outcome(&mut self, request_id: &str) -> Result<Option<(u64, Op)>, StoreError> {
        let row: Option<(i64, String)> = self
            .conn
            .prepare_cached("SELECT seq, op FROM outcomes WHERE request_id = ?1")?
            .query_row([request_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        row.map(|(seq, op)| Ok((from_i64("seq", seq)?, decode_op(&op)?))).transpose()
    }

    fn commit(&mut self, c: &Commit) -> Result<bool, StoreError> {
        self.apply(c, false)
    }

    fn adopt(&mut self, c: &Commit) -> Result<bool, StoreError> {
        self.apply(c, true)
    }

    fn commits_since(&mut self, after: u64) -> Result<Vec<Commit>, StoreError> {
        let Ok(after) = i64::try_from(after) else { return Ok(Vec::new()) };
        let mut stmt = self.conn.prepare_cached("SELECT seq, ops FROM commits WHERE seq > ?1 ORDER BY seq")?;
        let mut rows = stmt.query([after])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let ops: String = row.get(1)?;
            out.push(Commit { seq: from_i64("seq", row.get(0)?)?, ops: decode_ops(&ops)? });
        }
        Ok(out)
    }

    fn bulk_import(&mut self, rows: &mut dyn Iterator<Item = (IdentityId, Vec<u8>)>) -> Result<u64, StoreError> {
        let mut total = 0u64;
        loop {
            let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let (mut n, mut written) = (0, 0u64);
            let mut max_id = None;
            {
                let mut insert =
                    tx.prepare_cached("INSERT INTO identities(id, share) VALUES (?1, ?2) ON CONFLICT DO NOTHING")?;
                let mut held = tx.prepare_cached("SELECT share FROM identities WHERE id = ?1")?;
                while n < IMPORT_BATCH {
                    let Some((id, share)) = rows.next() else { break };
                    let key = to_i64("identity id", id)?;
                    if insert.execute(params![key, share])? == 1 {
                        written += 1;
                    } else if held.query_row([key], |r| r.get::<_, Vec<u8>>(0))? != share {
                        return Err(StoreError::DuplicateId(id));
                    }
                    max_id = max_id.max(Some(id));
                    n += 1;
                }
            }
            let Some(max_id) = max_id else { break };
            let next_id = meta(&tx, "next_id")?.max(max_id + 1);
            set_meta(&tx, "next_id", next_id)?;
            tx.commit()?;
            total += written;
            if n < IMPORT_BATCH {
                break;
            }
        }
        Ok(total)
    }

    fn prune_pending(&mut self, age: Duration) -> Result<u64, StoreError> {
        let n = self.conn.prepare_cached("DELETE FROM pending WHERE created_at <= ?1")?.execute([prune_cutoff(age)])?;
        Ok(n as u64)
    }

    fn share_bytes(&mut self) -> Result<u64, StoreError> {
        // length() of a blob reads its size from the record header, not the blob itself.
        let n: i64 = self.conn.query_row("SELECT COALESCE(SUM(length(share)), 0) FROM identities", [], |r| r.get(0))?;
        from_i64("share bytes", n)
    }
}
