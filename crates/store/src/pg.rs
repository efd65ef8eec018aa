//! The PostgreSQL back-end (synchronous `postgres` client, no TLS).

use crate::{
    decode_op, decode_ops, encode_op, encode_ops, from_i64, prune_cutoff, to_i64, unix_now, Commit, IdDigest,
    IdentityId, Op, Store, StoreError, Summary, IMPORT_BATCH, SCHEMA_VERSION,
};
use postgres::config::Host;
use postgres::{Client, Config, GenericClient, NoTls};
use std::time::Duration;

/// Rows fetched per round trip by [`Store::for_each_identity`] (a few MB of shares).
const FETCH_ROWS: i32 = 32;
/// Connection timeout unless the URL sets one.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Advisory lock key serialising schema creation by concurrent openers ("argus" in ASCII).
const SCHEMA_LOCK: i64 = 0x0061_7267_7573;

/// Shares are random-looking: store them out of line without trying to compress them.
const SCHEMA: &str = "
CREATE TABLE identities(id BIGINT PRIMARY KEY, share BYTEA NOT NULL);
ALTER TABLE identities ALTER COLUMN share SET STORAGE EXTERNAL;
CREATE TABLE pending(request_id TEXT PRIMARY KEY, created_at BIGINT NOT NULL, share BYTEA NOT NULL);
ALTER TABLE pending ALTER COLUMN share SET STORAGE EXTERNAL;
CREATE INDEX pending_created_at ON pending(created_at);
CREATE TABLE outcomes(request_id TEXT PRIMARY KEY, seq BIGINT NOT NULL, op TEXT NOT NULL);
CREATE TABLE commits(seq BIGINT PRIMARY KEY, ops TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES ('last_seq', 0), ('next_id', 0);
";

pub(crate) struct PgStore {
    client: Client,
    description: String,
}

impl PgStore {
    /// [`Store::commit`], or with `adopt` [`Store::adopt`]: an enrolment moves no pending share.
    fn apply(&mut self, c: &Commit, adopt: bool) -> Result<bool, StoreError> {
        let mut tx = self.client.transaction()?;
        // The row lock serialises concurrent writers on the same database.
        let last_seq = meta(&mut tx, "last_seq", true)?;
        if c.seq <= last_seq {
            return Ok(false);
        }
        if c.seq != last_seq + 1 {
            return Err(StoreError::SeqGap { expected: last_seq + 1, got: c.seq });
        }
        let seq = to_i64("seq", c.seq)?;
        let mut next_id = meta(&mut tx, "next_id", true)?;
        let enrol = tx.prepare(
            "INSERT INTO identities(id, share) SELECT $1, share FROM pending WHERE request_id = $2
             ON CONFLICT DO NOTHING",
        )?;
        let record = tx.prepare(
            "INSERT INTO outcomes(request_id, seq, op) VALUES ($1, $2, $3)
             ON CONFLICT(request_id) DO UPDATE SET seq = excluded.seq, op = excluded.op",
        )?;
        for op in &c.ops {
            match op {
                Op::Outcome { enrolled: Some(id), .. } if adopt => next_id = next_id.max(id + 1),
                Op::Outcome { request_id, enrolled: Some(id), .. } => {
                    if tx.execute(&enrol, &[&to_i64("identity id", *id)?, request_id])? == 0 {
                        let has_pending =
                            tx.query_opt("SELECT 1 FROM pending WHERE request_id = $1", &[request_id])?.is_some();
                        return Err(if has_pending {
                            StoreError::DuplicateId(*id)
                        } else {
                            StoreError::MissingPending { request_id: request_id.clone() }
                        });
                    }
                    next_id = next_id.max(id + 1);
                }
                Op::Outcome { enrolled: None, .. } => {}
                Op::Delete { id, .. } => {
                    // Ids above i64::MAX cannot be enrolled, so there is nothing to delete.
                    if let Ok(id) = to_i64("identity id", *id) {
                        tx.execute("DELETE FROM identities WHERE id = $1", &[&id])?;
                    }
                }
            }
            tx.execute(&record, &[&op.request_id(), &seq, &encode_op(op)?])?;
        }
        let ids: Vec<&str> = c.ops.iter().map(Op::request_id).collect();
        tx.execute("DELETE FROM pending WHERE request_id = ANY($1)", &[&ids])?;
        tx.execute("INSERT INTO commits(seq, ops) VALUES ($1, $2)", &[&seq, &encode_ops(&c.ops)?])?;
        set_meta(&mut tx, "last_seq", c.seq)?;
        set_meta(&mut tx, "next_id", next_id)?;
        tx.commit()?;
        Ok(true)
    }

    pub(crate) fn open(url: &str) -> Result<Self, StoreError> {
        let mut config: Config = url.parse()?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let description = describe(&config);
        let mut client = config.connect(NoTls)?;
        // Durability on return of every commit, whatever the server's default.
        client.batch_execute("SET synchronous_commit TO on")?;
        let mut store = PgStore { client, description };
        store.init_schema()?;
        Ok(store)
    }

    /// Creates the tables on a new database (atomically) or checks the version of an existing one.
    fn init_schema(&mut self) -> Result<(), StoreError> {
        let mut tx = self.client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])?;
        tx.batch_execute(
            "SET LOCAL client_min_messages TO warning;
             CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value BIGINT NOT NULL);",
        )?;
        let version: Option<i64> =
            tx.query_opt("SELECT value FROM meta WHERE key = 'schema_version'", &[])?.map(|r| r.get(0));
        match version {
            None => {
                tx.batch_execute(SCHEMA)?;
                tx.execute("INSERT INTO meta(key, value) VALUES ('schema_version', $1)", &[&SCHEMA_VERSION])?;
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

/// "postgres user@host:port/db", never the password.
fn describe(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    let at = if user.is_empty() { "" } else { "@" };
    format!("postgres {user}{at}{host}:{port}/{db}")
}

/// Reads one `meta` value; `lock` takes the row lock that serialises writers.
fn meta(c: &mut impl GenericClient, key: &'static str, lock: bool) -> Result<u64, StoreError> {
    let sql =
        if lock { "SELECT value FROM meta WHERE key = $1 FOR UPDATE" } else { "SELECT value FROM meta WHERE key = $1" };
    let row = c.query_opt(sql, &[&key])?.ok_or_else(|| StoreError::Corrupt(format!("meta `{key}` missing")))?;
    from_i64(key, row.get(0))
}

fn set_meta(c: &mut impl GenericClient, key: &'static str, value: u64) -> Result<(), StoreError> {
    c.execute("UPDATE meta SET value = $2 WHERE key = $1", &[&key, &to_i64(key, value)?])?;
    Ok(())
}

impl Store for PgStore {
    fn describe(&self) -> String {
        self.description.clone()
    }

    fn summary(&mut self) -> Result<Summary, StoreError> {
        // One snapshot for ids and meta.
        let mut tx = self
            .client
            .build_transaction()
            .read_only(true)
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .start()?;
        let mut digest = IdDigest::new();
        for row in tx.query("SELECT id FROM identities ORDER BY id", &[])? {
            digest.push(from_i64("identity id", row.get(0))?);
        }
        let summary = digest.finish(meta(&mut tx, "last_seq", false)?, meta(&mut tx, "next_id", false)?);
        tx.commit()?;
        Ok(summary)
    }

    fn for_each_identity(
        &mut self,
        f: &mut dyn FnMut(IdentityId, &[u8]) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        // A portal fetched in batches: at most FETCH_ROWS shares are in memory at a time.
        let mut tx = self.client.build_transaction().read_only(true).start()?;
        let portal = tx.bind("SELECT id, share FROM identities ORDER BY id", &[])?;
        loop {
            let rows = tx.query_portal(&portal, FETCH_ROWS)?;
            if rows.is_empty() {
                break;
            }
            for row in &rows {
                f(from_i64("identity id", row.get(0))?, row.get::<_, &[u8]>(1))?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn identities_after(
        &mut self,
        after: Option<IdentityId>,
        limit: usize,
    ) -> Result<Vec<(IdentityId, Vec<u8>)>, StoreError> {
        let after = after.map_or(Ok(-1), |id| to_i64("identity id", id))?;
        let limit = to_i64("limit", limit as u64)?;
        self.client
            .query("SELECT id, share FROM identities WHERE id > $1 ORDER BY id LIMIT $2", &[&after, &limit])?
            .iter()
            .map(|r| Ok((from_i64("identity id", r.get(0))?, r.get(1))))
            .collect()
    }

    fn put_pending(&mut self, request_id: &str, share: &[u8]) -> Result<(), StoreError> {
        self.client.execute(
            "INSERT INTO pending(request_id, created_at, share) VALUES ($1, $2, $3)
             ON CONFLICT(request_id) DO UPDATE SET created_at = excluded.created_at, share = excluded.share",
            &[&request_id, &unix_now(), &share],
        )?;
        Ok(())
    }

    fn pending(&mut self, request_id: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.client.query_opt("SELECT share FROM pending WHERE request_id = $1", &[&request_id])?.map(|r| r.get(0)))
    }

    fn outcome(&mut self, request_id: &str) -> Result<Option<(u64, Op)>, StoreError> {
        let row = self.client.query_opt("SELECT seq, op FROM outcomes WHERE request_id = $1", &[&request_id])?;
        row.map(|r| Ok((from_i64("seq", r.get(0))?, decode_op(r.get(1))?))).transpose()
    }

    fn commit(&mut self, c: &Commit) -> Result<bool, StoreError> {
        self.apply(c, false)
    }

    fn adopt(&mut self, c: &Commit) -> Result<bool, StoreError> {
        self.apply(c, true)
    }

    fn commits_since(&mut self, after: u64) -> Result<Vec<Commit>, StoreError> {
        let Ok(after) = i64::try_from(after) else { return Ok(Vec::new()) };
        self.client
            .query("SELECT seq, ops FROM commits WHERE seq > $1 ORDER BY seq", &[&after])?
            .iter()
            .map(|r| Ok(Commit { seq: from_i64("seq", r.get(0))?, ops: decode_ops(r.get(1))? }))
            .collect()
    }

    fn bulk_import(&mut self, rows: &mut dyn Iterator<Item = (IdentityId, Vec<u8>)>) -> Result<u64, StoreError> {
        let mut total = 0u64;
        loop {
            let mut tx = self.client.transaction()?;
            let insert = tx.prepare("INSERT INTO identities(id, share) VALUES ($1, $2) ON CONFLICT DO NOTHING")?;
            let held = tx.prepare("SELECT share FROM identities WHERE id = $1")?;
            let (mut n, mut written) = (0, 0u64);
            let mut max_id = None;
            while n < IMPORT_BATCH {
                let Some((id, share)) = rows.next() else { break };
                let key = to_i64("identity id", id)?;
                if tx.execute(&insert, &[&key, &share])? == 1 {
                    written += 1;
                } else if tx.query_one(&held, &[&key])?.get::<_, Vec<u8>>(0) != share {
                    return Err(StoreError::DuplicateId(id));
                }
                max_id = max_id.max(Some(id));
                n += 1;
            }
            let Some(max_id) = max_id else { break };
            let next_id = meta(&mut tx, "next_id", true)?.max(max_id + 1);
            set_meta(&mut tx, "next_id", next_id)?;
            tx.commit()?;
            total += written;
            if n < IMPORT_BATCH {
                break;
            }
        }
        Ok(total)
    }

    fn prune_pending(&mut self, age: Duration) -> Result<u64, StoreError> {
        Ok(self.client.execute("DELETE FROM pending WHERE created_at <= $1", &[&prune_cutoff(age)])?)
    }

    fn share_bytes(&mut self) -> Result<u64, StoreError> {
        let row = self.client.query_one("SELECT COALESCE(SUM(octet_length(share)), 0)::BIGINT FROM identities", &[])?;
        from_i64("share bytes", row.get(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_hides_the_password() {
        let d = |url: &str| describe(&url.parse().unwrap());
        assert_eq!(d("postgres://node0:pw123@db.local:6000/argus0"), "postgres node0@db.local:6000/argus0");
        assert_eq!(d("postgresql://node1@%2Frun%2Fpostgresql/argus1"), "postgres node1@/run/postgresql:5432/argus1");
        assert_eq!(d("postgres://127.0.0.1/"), "postgres 127.0.0.1:5432/");
    }
}
