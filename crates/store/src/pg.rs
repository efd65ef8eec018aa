//! The PostgreSQL back-end (synchronous `postgres` client; TLS with the server's certificate
//! verified, as the URL asks: [`connect`]).

use crate::{
    decode_op, decode_ops, encode_op, encode_ops, from_i64, prune_cutoff, to_i64, unix_now, Commit, IdDigest,
    IdentityId, Op, Store, StoreError, Summary, IMPORT_BATCH, SCHEMA_VERSION,
};
use postgres::config::Host;
use postgres::{Client, Config, GenericClient, NoTls};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
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
                Op::Outcome { enrolled: None, .. } | Op::Refused { .. } => {}
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
        let (mut client, description) = connect_described(url)?;
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

/// Connects as the store does (for tools and tests: e.g. to ask the server whether the session
/// is encrypted). The URL takes libpq's TLS parameters:
///
/// - `sslmode=disable` (and, without `sslrootcert`, the default `prefer`): no TLS;
/// - `sslrootcert=PATH` (PEM: the CA certificates that may sign the server's), with `sslmode`
///   `require`, `verify-ca`, `verify-full` or unset: TLS is required and the server's certificate
///   chain *and* host name are verified (every mode that encrypts also authenticates the server:
///   an unauthenticated server could read every share). `require` without `sslrootcert` is
///   refused for that reason;
/// - `sslcert=PATH` and `sslkey=PATH` (PEM, PKCS#8 or SEC1 or PKCS#1 key): a client certificate,
///   for servers that authenticate clients by certificate.
pub fn connect(url: &str) -> Result<Client, StoreError> {
    Ok(connect_described(url)?.0)
}

/// [`connect`], and the store's description ("postgres user@host:port/db", TLS or not).
fn connect_described(url: &str) -> Result<(Client, String), StoreError> {
    let (url, tls) = tls_of(url)?;
    let mut config: Config = url.parse()?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    let description = describe(&config, tls.is_some());
    let client = match tls {
        Some(tls) => config.connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls))?,
        None => config.connect(NoTls)?,
    };
    Ok((client, description))
}

/// Creates the database `url` names when the server has none of that name (connecting to the
/// server's `postgres` database with the same role and parameters); `Ok(true)` if it did. A role
/// that may not create databases gets [`StoreError::MissingDatabase`] with the command to run.
pub fn create_database_if_missing(url: &str) -> Result<bool, StoreError> {
    let missing = |e: &postgres::Error| e.code() == Some(&postgres::error::SqlState::INVALID_CATALOG_NAME);
    match connect_described(url) {
        Ok(_) => return Ok(false),
        Err(StoreError::Postgres(e)) if missing(&e) => {}
        Err(e) => return Err(e),
    }
    let config: Config = tls_of(url)?.0.parse()?;
    let (name, user) = (config.get_dbname().unwrap_or_default().to_string(), config.get_user().unwrap_or_default());
    let (base, query) = url.split_once('?').map_or((url, ""), |(b, q)| (b, q));
    let slash = base.rfind('/').filter(|&i| i > base.find("://").map_or(0, |s| s + 2)).unwrap_or(base.len());
    let maintenance = format!("{}/postgres{}{query}", &base[..slash], if query.is_empty() { "" } else { "?" });
    let (mut client, description) = connect_described(&maintenance)?;
    let quoted = format!("\"{}\"", name.replace('"', "\"\""));
    match client.batch_execute(&format!("CREATE DATABASE {quoted}")) {
        Ok(()) => Ok(true),
        Err(e) if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => {
            let host = description.trim_start_matches("postgres ").split('/').next().unwrap_or("").to_string();
            Err(StoreError::MissingDatabase(format!(
                "database {name} does not exist and role {user} may not create it: create it as a role that \
                 may (e.g. `createdb -h HOST -p PORT -U postgres -O {user} {name}`, server {host}), or give \
                 {user} the right (`ALTER ROLE {user} CREATEDB`)"
            )))
        }
        Err(e) if e.code() == Some(&postgres::error::SqlState::DUPLICATE_DATABASE) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Takes libpq's TLS parameters out of a `postgres://` URL (see [`connect`]): the URL for the
/// driver (with `sslmode` `disable` or `require`) and, for TLS, the client configuration.
fn tls_of(url: &str) -> Result<(String, Option<rustls::ClientConfig>), StoreError> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let (mut mode, mut root, mut cert, mut key) = (None, None, None, None);
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let value = || percent_decode(v).map(PathBuf::from);
        match k {
            "sslmode" => mode = Some(v.to_string()),
            "sslrootcert" => root = Some(value()?),
            "sslcert" => cert = Some(value()?),
            "sslkey" => key = Some(value()?),
            _ => kept.push(pair),
        }
    }
    let bad = |m: String| Err(StoreError::BadUrl(m));
    let tls = match (mode.as_deref(), &root) {
        (Some("disable"), None) if cert.is_none() && key.is_none() => false,
        (Some("disable"), _) => return bad("sslmode=disable with TLS parameters (sslrootcert, sslcert, sslkey)".into()),
        (None | Some("prefer"), None) if cert.is_none() && key.is_none() => false,
        (None | Some("prefer" | "require" | "verify-ca" | "verify-full"), Some(_)) => true,
        (None | Some("prefer" | "require" | "verify-ca" | "verify-full"), None) => {
            return bad(format!(
                "sslmode={} needs sslrootcert=PATH (the CA certificate that signed the server's): Argus \
                 verifies the server whenever it uses TLS",
                mode.as_deref().unwrap_or("prefer")
            ))
        }
        (Some(m), _) => {
            return bad(format!("unknown sslmode `{m}` (disable, prefer, require, verify-ca or verify-full)"))
        }
    };
    kept.push(if tls { "sslmode=require" } else { "sslmode=disable" });
    let url = format!("{base}?{}", kept.join("&"));
    if !tls {
        return Ok((url, None));
    }
    let mut roots = rustls::RootCertStore::empty();
    let root = root.expect("TLS has a root certificate");
    for c in CertificateDer::pem_file_iter(&root).map_err(|e| pem_error(&root, e))? {
        roots.add(c.map_err(|e| pem_error(&root, e))?).map_err(|e| tls_error(&root, e))?;
    }
    if roots.is_empty() {
        return bad(format!("sslrootcert {} holds no certificate", root.display()));
    }
    let builder = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_error(&root, e))?
        .with_root_certificates(roots);
    let config = match (cert, key) {
        (None, None) => builder.with_no_client_auth(),
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_file_iter(&cert)
                .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                .map_err(|e| pem_error(&cert, e))?;
            let key_der = PrivateKeyDer::from_pem_file(&key).map_err(|e| pem_error(&key, e))?;
            builder.with_client_auth_cert(chain, key_der).map_err(|e| tls_error(&cert, e))?
        }
        _ => return bad("sslcert and sslkey go together".into()),
    };
    Ok((url, Some(config)))
}

fn pem_error(path: &Path, e: rustls::pki_types::pem::Error) -> StoreError {
    StoreError::BadUrl(format!("reading {}: {e}", path.display()))
}

fn tls_error(path: &Path, e: rustls::Error) -> StoreError {
    StoreError::BadUrl(format!("{}: {e}", path.display()))
}

/// `%XX` escapes of a URL parameter (paths with spaces or `&`).
fn percent_decode(v: &str) -> Result<String, StoreError> {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = v.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(hex.ok_or_else(|| StoreError::BadUrl(format!("bad %-escape in `{v}`")))?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| StoreError::BadUrl(format!("`{v}` is not UTF-8")))
}

/// "postgres user@host:port/db", never the password; "(TLS)" when encrypted.
fn describe(config: &Config, tls: bool) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    let at = if user.is_empty() { "" } else { "@" };
    let tls = if tls { " (TLS)" } else { "" };
    format!("postgres {user}{at}{host}:{port}/{db}{tls}")
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

    fn delete_pending(&mut self, request_id: &str) -> Result<(), StoreError> {
        self.client.execute("DELETE FROM pending WHERE request_id = $1", &[&request_id])?;
        Ok(())
    }

    fn pending_count(&mut self) -> Result<u64, StoreError> {
        let row = self.client.query_one("SELECT COUNT(*) FROM pending", &[])?;
        from_i64("pending shares", row.get(0))
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
        let d = |url: &str| describe(&url.parse().unwrap(), false);
        assert_eq!(d("postgres://node0:pw123@db.local:6000/argus0"), "postgres node0@db.local:6000/argus0");
        assert_eq!(d("postgresql://node1@%2Frun%2Fpostgresql/argus1"), "postgres node1@/run/postgresql:5432/argus1");
        assert_eq!(d("postgres://127.0.0.1/"), "postgres 127.0.0.1:5432/");
        assert_eq!(describe(&"postgres://n@h/db".parse().unwrap(), true), "postgres n@h:5432/db (TLS)");
    }

    /// libpq's TLS parameters are taken out of the URL (the others stay), and every mode that
    /// encrypts needs a root certificate to verify the server with.
    #[test]
    fn tls_parameters() {
        let plain = |url: &str| {
            let (u, tls) = tls_of(url).unwrap();
            assert!(tls.is_none(), "{url}");
            u
        };
        assert_eq!(plain("postgres://a@h/db"), "postgres://a@h/db?sslmode=disable");
        assert_eq!(
            plain("postgres://a@h/db?connect_timeout=5&sslmode=prefer"),
            "postgres://a@h/db?connect_timeout=5&sslmode=disable"
        );
        let err = |url: &str| tls_of(url).err().unwrap().to_string();
        for mode in ["require", "verify-ca", "verify-full"] {
            assert!(err(&format!("postgres://h/db?sslmode={mode}")).contains("needs sslrootcert"), "{mode}");
        }
        assert!(err("postgres://h/db?sslmode=allow").contains("unknown sslmode `allow`"));
        assert!(err("postgres://h/db?sslmode=disable&sslrootcert=/x").contains("sslmode=disable with TLS"));
        assert!(err("postgres://h/db?sslrootcert=%2Fno%20such%2Fca.pem").contains("/no such/ca.pem"));
        assert!(err("postgres://h/db?sslrootcert=%zz").contains("bad %-escape"));

        let dir = std::env::temp_dir().join(format!("argus-pg-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, rcgen::generate_simple_self_signed(vec!["db.local".into()]).unwrap().cert.pem()).unwrap();
        let (u, tls) = tls_of(&format!("postgres://h/db?sslrootcert={}&application_name=n0", ca.display())).unwrap();
        assert!(tls.is_some());
        assert_eq!(u, "postgres://h/db?application_name=n0&sslmode=require");
        assert!(err(&format!("postgres://h/db?sslrootcert={}&sslcert={}", ca.display(), ca.display()))
            .contains("sslcert and sslkey go together"));
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        assert!(err(&format!("postgres://h/db?sslrootcert={}", empty.display())).contains("holds no certificate"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
