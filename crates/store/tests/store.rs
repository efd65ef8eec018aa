//! argus-store against both back-ends: every check is one generic function run on SQLite and on PostgreSQL.
//!
//! PostgreSQL tests need a server: `ARGUS_TEST_POSTGRES_URL` (e.g. `postgres://argus@127.0.0.1:5432/postgres`,
//! a role allowed to CREATE DATABASE). Each test gets its own fresh database, dropped at the end. Without the
//! variable they are skipped, unless `ARGUS_REQUIRE_POSTGRES=1`, which makes them fail.

use argus_store::{open, Commit, IdentityId, Op, Store, StoreError, Summary, IMPORT_BATCH};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

// ---------------------------------------------------------------------------------------------------------
// Back-ends: a fresh, empty store location per test, removed on drop.

#[derive(Clone, Copy, Debug)]
enum Kind {
    Sqlite,
    Postgres,
}

/// A fresh store location: a temp dir with a SQLite file, or a new PostgreSQL database.
struct Fresh {
    url: String,
    sqlite_dir: Option<PathBuf>,
    pg: Option<(String, String)>, // (admin url, database name)
}

impl Fresh {
    /// `None` when the back-end is not available (PostgreSQL without a server: skipped).
    fn new(kind: Kind) -> Option<Fresh> {
        let tag = format!("{:016x}", rand::random::<u64>());
        match kind {
            Kind::Sqlite => {
                let dir = std::env::temp_dir().join(format!("argus-store-test-{}-{tag}", std::process::id()));
                std::fs::create_dir_all(&dir).unwrap();
                let url = format!("sqlite:{}", dir.join("node.db").display());
                Some(Fresh { url, sqlite_dir: Some(dir), pg: None })
            }
            Kind::Postgres => {
                let admin = postgres_admin_url()?;
                let db = format!("argus_test_{tag}");
                admin_client(&admin).batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
                Some(Fresh { url: with_db(&admin, &db), sqlite_dir: None, pg: Some((admin, db)) })
            }
        }
    }

    fn open(&self) -> Box<dyn Store> {
        open(&self.url).unwrap_or_else(|e| panic!("open {}: {e}", self.url))
    }

    /// Runs SQL directly on the store's database (for tampering tests).
    fn raw_sql(&self, sql: &str) {
        match (&self.sqlite_dir, &self.pg) {
            (Some(dir), _) => rusqlite::Connection::open(dir.join("node.db")).unwrap().execute_batch(sql).unwrap(),
            (_, Some(_)) => postgres::Client::connect(&self.url, postgres::NoTls).unwrap().batch_execute(sql).unwrap(),
            _ => unreachable!(),
        }
    }
}

impl Drop for Fresh {
    fn drop(&mut self) {
        if let Some(dir) = &self.sqlite_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Some((admin, db)) = &self.pg {
            if let Ok(mut c) = postgres::Client::connect(admin, postgres::NoTls) {
                let _ = c.batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"));
            }
        }
    }
}

/// The admin URL, or `None` (skip) when unset; panics when unset and `ARGUS_REQUIRE_POSTGRES=1`.
fn postgres_admin_url() -> Option<String> {
    match std::env::var("ARGUS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("ARGUS_REQUIRE_POSTGRES").as_deref() == Ok("1") => {
            panic!(
                "ARGUS_REQUIRE_POSTGRES=1 but ARGUS_TEST_POSTGRES_URL is unset: no PostgreSQL server to test against"
            )
        }
        _ => {
            println!("postgres tests skipped: set ARGUS_TEST_POSTGRES_URL");
            None
        }
    }
}

fn admin_client(admin: &str) -> postgres::Client {
    postgres::Client::connect(admin, postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot connect to ARGUS_TEST_POSTGRES_URL: {e}"))
}

/// `admin` with its database replaced by `db` (query parameters kept).
fn with_db(admin: &str, db: &str) -> String {
    let (base, query) = admin.split_once('?').map_or((admin, ""), |(b, q)| (b, q));
    let authority = base.find("://").expect("URL with a scheme") + 3;
    let path = base[authority..].find('/').map_or(base.len(), |i| authority + i);
    let query = if query.is_empty() { String::new() } else { format!("?{query}") };
    format!("{}/{db}{query}", &base[..path])
}

/// Runs `check` on a fresh store of `kind` (nothing when PostgreSQL is skipped).
fn on(kind: Kind, check: fn(&Fresh)) {
    if let Some(fresh) = Fresh::new(kind) {
        check(&fresh);
    }
}

// ---------------------------------------------------------------------------------------------------------
// Helpers.

fn digest_of(ids: impl IntoIterator<Item = IdentityId>) -> [u8; 32] {
    let mut h = Sha256::new();
    for id in ids {
        h.update(id.to_le_bytes());
    }
    h.finalize().into()
}

fn identities(s: &mut dyn Store) -> Vec<(IdentityId, Vec<u8>)> {
    let mut out = Vec::new();
    s.for_each_identity(&mut |id, share| {
        out.push((id, share.to_vec()));
        Ok(())
    })
    .unwrap();
    out
}

fn enrol(request_id: &str, id: IdentityId) -> Op {
    Op::Outcome { request_id: request_id.into(), unique: true, enrolled: Some(id) }
}

fn not_unique(request_id: &str) -> Op {
    Op::Outcome { request_id: request_id.into(), unique: false, enrolled: None }
}

fn delete(request_id: &str, id: IdentityId, existed: bool) -> Op {
    Op::Delete { request_id: request_id.into(), id, existed }
}

fn share(tag: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(tag)).collect()
}

/// Everything observable of a store: summary, identities and log.
type Snapshot = (Summary, Vec<(IdentityId, Vec<u8>)>, Vec<Commit>);

/// Everything observable of a store, for "nothing changed" checks.
fn snapshot(s: &mut dyn Store) -> Snapshot {
    (s.summary().unwrap(), identities(s), s.commits_since(0).unwrap())
}

// ---------------------------------------------------------------------------------------------------------
// Checks.

fn commit_semantics(fresh: &Fresh) {
    let mut s = fresh.open();
    assert_eq!(s.summary().unwrap(), Summary { count: 0, digest: digest_of([]), last_seq: 0, next_id: 0 });
    assert_eq!(s.share_bytes().unwrap(), 0);

    let (a, b, c) = (share(1, 1000), share(2, 70_000), share(3, 10));
    s.put_pending("r1", &share(9, 5)).unwrap();
    s.put_pending("r1", &a).unwrap(); // replaces
    s.put_pending("r2", &b).unwrap();
    s.put_pending("r3", &c).unwrap();
    s.put_pending("r4", &c).unwrap();
    assert_eq!(s.pending("r1").unwrap(), Some(a.clone()));
    assert_eq!(s.pending("nope").unwrap(), None);

    // Seq 1: r1 enrolled as 0, r2 not unique.
    let c1 = Commit { seq: 1, ops: vec![enrol("r1", 0), not_unique("r2")] };
    assert!(s.commit(&c1).unwrap());
    assert_eq!(s.pending("r1").unwrap(), None);
    assert_eq!(s.pending("r2").unwrap(), None, "pending shares of every op are removed");
    assert_eq!(s.outcome("r1").unwrap(), Some((1, enrol("r1", 0))));
    assert_eq!(s.outcome("r2").unwrap(), Some((1, not_unique("r2"))));
    assert_eq!(s.outcome("nope").unwrap(), None);
    assert_eq!(identities(&mut *s), vec![(0, a.clone())]);

    // Re-applying an old seq is a no-op, whatever its ops.
    let before = snapshot(&mut *s);
    assert!(!s.commit(&c1).unwrap());
    assert!(!s.commit(&Commit { seq: 1, ops: vec![enrol("r3", 5)] }).unwrap());
    assert!(!s.commit(&Commit { seq: 0, ops: vec![] }).unwrap());
    assert_eq!(snapshot(&mut *s), before);

    // Errors leave nothing of the commit.
    assert!(matches!(s.commit(&Commit { seq: 3, ops: vec![] }), Err(StoreError::SeqGap { expected: 2, got: 3 })));
    assert!(matches!(
        s.commit(&Commit { seq: 2, ops: vec![enrol("r3", 7), enrol("r9", 8)] }),
        Err(StoreError::MissingPending { request_id }) if request_id == "r9"
    ));
    assert!(matches!(
        s.commit(&Commit { seq: 2, ops: vec![enrol("r3", 7), enrol("r4", 0)] }),
        Err(StoreError::DuplicateId(0))
    ));
    assert!(matches!(
        s.commit(&Commit { seq: 2, ops: vec![enrol("r3", 7), enrol("r4", u64::MAX)] }),
        Err(StoreError::OutOfRange { value: u64::MAX, .. })
    ));
    assert_eq!(snapshot(&mut *s), before);
    assert_eq!(s.pending("r3").unwrap(), Some(c.clone()), "a failed commit keeps the pending shares");
    assert_eq!(s.outcome("r3").unwrap(), None);

    // Seq 2: r3 → 7 (a gap in ids is fine), r4 → 3 (below next_id: next_id stays 8).
    assert!(s.commit(&Commit { seq: 2, ops: vec![enrol("r3", 7), enrol("r4", 3)] }).unwrap());
    let sm = s.summary().unwrap();
    assert_eq!((sm.count, sm.next_id, sm.last_seq), (3, 8, 2));

    // Seq 3: delete an existing and a missing identity.
    let c3 = Commit { seq: 3, ops: vec![delete("d1", 0, true), delete("d2", 42, false)] };
    assert!(s.commit(&c3).unwrap());
    assert_eq!(s.outcome("d2").unwrap(), Some((3, delete("d2", 42, false))));
    assert_eq!(identities(&mut *s), vec![(3, c.clone()), (7, c.clone())]);

    // An empty commit still advances the seq.
    assert!(s.commit(&Commit { seq: 4, ops: vec![] }).unwrap());

    assert_eq!(s.summary().unwrap(), Summary { count: 2, digest: digest_of([3, 7]), last_seq: 4, next_id: 8 });
    assert_eq!(s.share_bytes().unwrap(), 2 * c.len() as u64);

    let log = s.commits_since(0).unwrap();
    assert_eq!(log.iter().map(|c| c.seq).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    assert_eq!(log[0], c1);
    assert_eq!(log[2], c3);
    assert_eq!(s.commits_since(2).unwrap(), log[2..].to_vec());
    assert!(s.commits_since(4).unwrap().is_empty());
    assert!(s.commits_since(u64::MAX).unwrap().is_empty());

    // Replaying the log on a second store gives the same state (how a crashed node catches up).
    let peer = Fresh::new(fresh_kind(fresh)).unwrap();
    let mut p = peer.open();
    p.put_pending("r1", &a).unwrap();
    p.put_pending("r3", &c).unwrap();
    p.put_pending("r4", &c).unwrap();
    for commit in &log {
        assert!(p.commit(commit).unwrap());
    }
    assert_eq!(snapshot(&mut *p), snapshot(&mut *s));

    // The same request id in a later commit: the latest op wins.
    s.put_pending("r2", &b).unwrap();
    assert!(s.commit(&Commit { seq: 5, ops: vec![enrol("r2", 8)] }).unwrap());
    assert_eq!(s.outcome("r2").unwrap(), Some((5, enrol("r2", 8))));
    assert_eq!(s.summary().unwrap().next_id, 9);
}

fn fresh_kind(fresh: &Fresh) -> Kind {
    if fresh.sqlite_dir.is_some() {
        Kind::Sqlite
    } else {
        Kind::Postgres
    }
}

fn streaming_and_bulk_import(fresh: &Fresh) {
    let mut s = fresh.open();
    assert_eq!(s.bulk_import(&mut std::iter::empty()).unwrap(), 0);
    assert_eq!(s.summary().unwrap().next_id, 0);

    // More than one import transaction and many fetch batches, ~64 KB blobs, ids out of order.
    let n = IMPORT_BATCH + 44;
    let mut ids: Vec<IdentityId> = (0..n as u64).map(|i| 10 + 3 * i).collect();
    ids.reverse();
    ids.swap(0, n / 2);
    let blob = |id: IdentityId| share(id as u8, 64 * 1024 + id as usize % 7);
    assert_eq!(s.bulk_import(&mut ids.iter().map(|&id| (id, blob(id)))).unwrap(), n as u64);
    let max = *ids.iter().max().unwrap();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(
        s.summary().unwrap(),
        Summary { count: n as u64, digest: digest_of(sorted.clone()), last_seq: 0, next_id: max + 1 }
    );
    assert_eq!(s.share_bytes().unwrap(), sorted.iter().map(|&id| blob(id).len() as u64).sum::<u64>());
    assert!(s.commits_since(0).unwrap().is_empty(), "bulk import is not logged");

    // Streaming in ascending order, with the right contents.
    let mut seen = Vec::new();
    s.for_each_identity(&mut |id, sh| {
        assert_eq!(sh, &blob(id)[..], "share of {id}");
        seen.push(id);
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, sorted);

    // An error from the callback stops the iteration and leaves the store usable.
    let mut calls = 0;
    let err = s.for_each_identity(&mut |_, _| {
        calls += 1;
        if calls == 40 {
            Err(StoreError::Corrupt("stop".into()))
        } else {
            Ok(())
        }
    });
    assert!(matches!(err, Err(StoreError::Corrupt(m)) if m == "stop"));
    assert_eq!(calls, 40);
    let before = snapshot(&mut *s);

    // A duplicate (with an existing id, or twice in one import) rejects the whole transaction.
    let dup = sorted[5];
    assert!(matches!(
        s.bulk_import(&mut vec![(5000, vec![1]), (dup, vec![2])].into_iter()),
        Err(StoreError::DuplicateId(d)) if d == dup
    ));
    assert!(matches!(
        s.bulk_import(&mut vec![(6000, vec![1]), (6001, vec![1]), (6000, vec![2])].into_iter()),
        Err(StoreError::DuplicateId(6000))
    ));
    assert!(matches!(
        s.bulk_import(&mut vec![(7000, vec![1]), (u64::MAX, vec![2])].into_iter()),
        Err(StoreError::OutOfRange { .. })
    ));
    assert_eq!(snapshot(&mut *s), before);

    // An import run again (say, after an interruption) skips the rows it already wrote, and
    // writes the rest.
    let again: Vec<_> = sorted[..10].iter().map(|&id| (id, blob(id))).collect();
    assert_eq!(s.bulk_import(&mut again.clone().into_iter()).unwrap(), 0);
    assert_eq!(snapshot(&mut *s), before);
    let more = again.into_iter().chain([(11, blob(11)), (14, blob(14))]);
    assert_eq!(s.bulk_import(&mut more.into_iter()).unwrap(), 2, "only the two new rows are written");
    assert_eq!(s.summary().unwrap().count, n as u64 + 2);
    assert_eq!(s.summary().unwrap().next_id, max + 1);

    // Commits after an import enrol above it.
    s.put_pending("q", &[7; 3]).unwrap();
    assert!(s.commit(&Commit { seq: 1, ops: vec![enrol("q", max + 1)] }).unwrap());
    assert!(matches!(s.commit(&Commit { seq: 2, ops: vec![enrol("q", 10)] }), Err(StoreError::MissingPending { .. })));
    s.put_pending("q2", &[7; 3]).unwrap();
    assert!(matches!(s.commit(&Commit { seq: 2, ops: vec![enrol("q2", 10)] }), Err(StoreError::DuplicateId(10))));
    assert_eq!(s.summary().unwrap().next_id, max + 2);
}

fn prune_pending(fresh: &Fresh) {
    let mut s = fresh.open();
    s.put_pending("old1", &[1; 10]).unwrap();
    s.put_pending("old2", &[2; 10]).unwrap();
    s.put_pending("used", &[3; 10]).unwrap();
    s.put_pending("used", &[3; 10]).unwrap();
    assert_eq!(s.pending_count().unwrap(), 3, "a replaced share counts once");
    assert!(s.commit(&Commit { seq: 1, ops: vec![enrol("used", 0)] }).unwrap());
    assert_eq!(s.pending_count().unwrap(), 2, "a committed share is pending no more");
    assert_eq!(s.prune_pending(Duration::from_secs(3600)).unwrap(), 0, "nothing is an hour old");
    assert_eq!(s.pending("old1").unwrap(), Some(vec![1; 10]));
    // Age 0: everything pending now counts as abandoned; the committed share is an identity, untouched.
    assert_eq!(s.prune_pending(Duration::ZERO).unwrap(), 2);
    assert_eq!(s.pending("old1").unwrap(), None);
    assert_eq!(s.pending("old2").unwrap(), None);
    assert_eq!(identities(&mut *s), vec![(0, vec![3; 10])]);
    assert_eq!(s.prune_pending(Duration::ZERO).unwrap(), 0);
    assert_eq!(s.pending_count().unwrap(), 0);
    // A request that left the queue without a batch: its share deleted, nothing else touched.
    s.put_pending("gone", &[5; 10]).unwrap();
    s.delete_pending("gone").unwrap();
    s.delete_pending("never").unwrap();
    assert_eq!((s.pending("gone").unwrap(), s.pending_count().unwrap()), (None, 0));
    // A refused enrolment: its pending share goes, its refusal is its recorded outcome.
    s.put_pending("short", &[4; 10]).unwrap();
    let refused = Op::Refused { request_id: "short".into(), reason: "too few valid bits".into() };
    assert!(s.commit(&Commit { seq: 2, ops: vec![refused.clone()] }).unwrap());
    assert_eq!((s.pending("short").unwrap(), s.pending_count().unwrap()), (None, 0));
    assert_eq!(s.outcome("short").unwrap(), Some((2, refused.clone())));
    assert_eq!(s.commits_since(1).unwrap(), vec![Commit { seq: 2, ops: vec![refused] }]);
    assert_eq!(identities(&mut *s), vec![(0, vec![3; 10])]);
}

/// Share recovery's store side: a store rebuilt from the identities of another (`bulk_import`)
/// and its log (`adopt`) ends equal to it, log, outcomes and next id included: from empty, and
/// from an older backup that holds an identity deleted since. `adopt` needs no pending share.
fn adopt_rebuilds_a_store(fresh: &Fresh) {
    let source_at = Fresh::new(fresh_kind(fresh)).expect("a second store of the same kind");
    let mut source = source_at.open();
    let mut older = fresh.open();
    let batches = [
        vec![enrol("a", 0), enrol("b", 1), not_unique("c")],
        vec![enrol("d", 2), delete("x", 0, true)],
        vec![not_unique("e"), delete("y", 7, false), enrol("f", 3)],
    ];
    for (i, ops) in batches.iter().enumerate() {
        for op in ops {
            if let Op::Outcome { request_id, enrolled: Some(id), .. } = op {
                source.put_pending(request_id, &share(*id as u8, 100)).unwrap();
                if i == 0 {
                    older.put_pending(request_id, &share(*id as u8, 100)).unwrap();
                }
            }
        }
        let c = Commit { seq: i as u64 + 1, ops: ops.clone() };
        assert!(source.commit(&c).unwrap());
        if i == 0 {
            assert!(older.commit(&c).unwrap()); // a backup taken after batch 1: holds identity 0
        }
    }
    let want = snapshot(&mut *source);
    // Paging the population: pages of 2 give the ids 1, 2 | 3 | (none), shares and all.
    let mut pages = Vec::new();
    let mut after = None;
    loop {
        let page = source.identities_after(after, 2).unwrap();
        let Some(&(last, _)) = page.last() else { break };
        after = Some(last);
        pages.push(page);
    }
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [2, 1]);
    assert_eq!(pages.concat(), want.1);
    let outcome = |s: &mut dyn Store, r: &str| s.outcome(r).unwrap();
    let restored = Fresh::new(fresh_kind(fresh)).expect("a third store of the same kind");
    for (target, from) in [(restored.open(), 0u64), (older, 1)] {
        let mut target = target;
        let held = identities(&mut *source);
        target.bulk_import(&mut held.into_iter()).unwrap();
        for c in source.commits_since(from).unwrap() {
            assert!(target.adopt(&c).unwrap());
        }
        assert!(!target.adopt(&source.commits_since(2).unwrap()[0]).unwrap(), "an adopted seq is a no-op");
        assert_eq!(snapshot(&mut *target), want, "rebuilt from seq {from}");
        for r in ["a", "c", "d", "x", "y", "f"] {
            assert_eq!(outcome(&mut *target, r), outcome(&mut *source, r), "outcome of {r}");
        }
    }
}

fn reopen_persists(fresh: &Fresh) {
    let before;
    {
        let mut s = fresh.open();
        assert!(!s.describe().is_empty());
        s.bulk_import(&mut (0..5u64).map(|id| (id, share(id as u8, 2000)))).unwrap();
        s.put_pending("a", &share(50, 3000)).unwrap();
        s.put_pending("b", &share(51, 3000)).unwrap();
        s.put_pending("kept", &share(52, 10)).unwrap();
        assert!(s.commit(&Commit { seq: 1, ops: vec![enrol("a", 9), delete("d", 2, true)] }).unwrap());
        assert!(s.commit(&Commit { seq: 2, ops: vec![not_unique("b")] }).unwrap());
        before = snapshot(&mut *s);
    } // dropped: connection closed
    let mut s = fresh.open();
    assert_eq!(snapshot(&mut *s), before);
    assert_eq!(
        s.summary().unwrap(),
        Summary { count: 5, digest: digest_of([0, 1, 3, 4, 9]), last_seq: 2, next_id: 10 }
    );
    assert_eq!(s.pending("kept").unwrap(), Some(share(52, 10)));
    assert_eq!(s.outcome("d").unwrap(), Some((1, delete("d", 2, true))));
    assert!(!s.commit(&Commit { seq: 2, ops: vec![] }).unwrap());
    assert!(s.commit(&Commit { seq: 3, ops: vec![] }).unwrap());
    // Two handles on one store (e.g. a restarted process while the old one winds down) see the same data.
    let mut t = fresh.open();
    assert_eq!(t.summary().unwrap().last_seq, 3);
}

fn newer_schema_refused(fresh: &Fresh) {
    drop(fresh.open());
    fresh.raw_sql("UPDATE meta SET value = 99 WHERE key = 'schema_version'");
    match open(&fresh.url) {
        Err(e @ StoreError::UnsupportedSchema { found: 99, supported: 1 }) => {
            assert!(e.to_string().contains("newer"), "{e}")
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("a newer schema must be refused"),
    }
    fresh.raw_sql("UPDATE meta SET value = 1 WHERE key = 'schema_version'");
    drop(fresh.open());
}

// ---------------------------------------------------------------------------------------------------------
// Crash: a child process aborts in the middle of an import transaction; the committed part survives intact.

const CRASH_ENV: &str = "ARGUS_STORE_TEST_CRASH_URL";
const CRASH_AFTER: usize = IMPORT_BATCH + 30;

/// In the child: import rows until the process aborts inside the second transaction.
fn crash_child(url: &str) -> ! {
    let mut s = open(url).unwrap();
    s.put_pending("p", &[1; 100]).unwrap();
    let mut rows = (0u64..).map(|id| {
        if id as usize == CRASH_AFTER {
            std::process::abort(); // no unwinding, no destructors: like a kill -9
        }
        (id, share(id as u8, 20_000))
    });
    s.bulk_import(&mut rows).unwrap();
    unreachable!()
}

fn crash_mid_transaction(fresh: &Fresh, test_name: &str) {
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CRASH_ENV, &fresh.url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the child must have aborted");
    let mut s = fresh.open();
    let ids: Vec<u64> = (0..IMPORT_BATCH as u64).collect();
    assert_eq!(
        s.summary().unwrap(),
        Summary { count: IMPORT_BATCH as u64, digest: digest_of(ids), last_seq: 0, next_id: IMPORT_BATCH as u64 }
    );
    assert_eq!(s.pending("p").unwrap(), Some(vec![1; 100]));
    let mut n = 0;
    s.for_each_identity(&mut |id, sh| {
        assert_eq!(sh, &share(id as u8, 20_000)[..]);
        n += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(n, IMPORT_BATCH);
    // The store takes writes again.
    assert!(s.commit(&Commit { seq: 1, ops: vec![enrol("p", 1000)] }).unwrap());
    if let Some(dir) = &fresh.sqlite_dir {
        let c = rusqlite::Connection::open(dir.join("node.db")).unwrap();
        let check: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok");
    }
}

// ---------------------------------------------------------------------------------------------------------
// Property test: random commit sequences against an in-memory model.

#[derive(Clone, Debug)]
enum Act {
    /// Put a pending share and enrol it at next_id + gap.
    Enrol(Vec<u8>, u8),
    /// Enrol at an already enrolled id (pick among them): DuplicateId.
    EnrolExisting(u8),
    /// Put a pending share, not unique.
    NotUnique,
    /// Delete an enrolled identity (pick among them).
    Delete(u8),
    /// Delete an id that was never enrolled.
    DeleteMissing,
    /// Enrol without a pending share: MissingPending.
    Missing,
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        5 => (proptest::collection::vec(any::<u8>(), 0..48), 0u8..3).prop_map(|(s, g)| Act::Enrol(s, g)),
        1 => any::<u8>().prop_map(Act::EnrolExisting),
        1 => Just(Act::NotUnique),
        2 => any::<u8>().prop_map(Act::Delete),
        1 => Just(Act::DeleteMissing),
        1 => Just(Act::Missing),
    ]
}

#[derive(Clone, Default)]
struct Model {
    ids: BTreeMap<IdentityId, Vec<u8>>,
    last_seq: u64,
    next_id: IdentityId,
}

impl Model {
    fn summary(&self) -> Summary {
        Summary {
            count: self.ids.len() as u64,
            digest: digest_of(self.ids.keys().copied()),
            last_seq: self.last_seq,
            next_id: self.next_id,
        }
    }
}

fn model_matches(kind: Kind, batches: Vec<Vec<Act>>) -> Result<(), TestCaseError> {
    let Some(fresh) = Fresh::new(kind) else { return Ok(()) };
    let mut s = fresh.open();
    let mut model = Model::default();
    let mut req = 0u32;
    let mut applied: Vec<Commit> = Vec::new();
    for acts in batches {
        // Build the commit and what it should do to the model.
        let mut next = model.clone();
        let mut ops = Vec::new();
        let mut fails = false;
        let mut alloc = model.next_id;
        for a in acts {
            req += 1;
            let rid = format!("r{req}");
            match a {
                Act::Enrol(sh, gap) => {
                    let id = alloc + gap as u64;
                    alloc = id + 1;
                    s.put_pending(&rid, &sh).unwrap();
                    next.ids.insert(id, sh);
                    next.next_id = next.next_id.max(id + 1);
                    ops.push(enrol(&rid, id));
                }
                Act::EnrolExisting(pick) => {
                    let existing: Vec<_> = next.ids.keys().copied().collect();
                    if existing.is_empty() {
                        continue;
                    }
                    s.put_pending(&rid, &[pick]).unwrap();
                    ops.push(enrol(&rid, existing[pick as usize % existing.len()]));
                    fails = true;
                }
                Act::NotUnique => {
                    s.put_pending(&rid, &[1, 2, 3]).unwrap();
                    ops.push(not_unique(&rid));
                }
                Act::Delete(pick) => {
                    let existing: Vec<_> = next.ids.keys().copied().collect();
                    if existing.is_empty() {
                        continue;
                    }
                    let id = existing[pick as usize % existing.len()];
                    next.ids.remove(&id);
                    ops.push(delete(&rid, id, true));
                }
                Act::DeleteMissing => ops.push(delete(&rid, 1 << 40, false)),
                Act::Missing => {
                    ops.push(enrol(&rid, alloc));
                    alloc += 1;
                    fails = true;
                }
            }
        }
        let c = Commit { seq: model.last_seq + 1, ops };
        match s.commit(&c) {
            Ok(true) if !fails => {
                next.last_seq = c.seq;
                model = next;
                applied.push(c);
            }
            Err(StoreError::DuplicateId(_) | StoreError::MissingPending { .. }) if fails => {}
            other => return Err(TestCaseError::fail(format!("commit {c:?}: {other:?} (expected failure: {fails})"))),
        }
        prop_assert_eq!(s.summary().unwrap(), model.summary());
        // Re-applying the previous commit is a no-op.
        if let Some(prev) = applied.last() {
            prop_assert!(!s.commit(prev).unwrap());
        }
    }
    let stored = identities(&mut *s);
    let expected: Vec<_> = model.ids.clone().into_iter().collect();
    prop_assert_eq!(stored, expected);
    prop_assert_eq!(s.commits_since(0).unwrap(), applied);
    Ok(())
}

fn property(kind: Kind) {
    if matches!(kind, Kind::Postgres) && postgres_admin_url().is_none() {
        return;
    }
    let mut runner = TestRunner::new(Config { cases: 12, failure_persistence: None, ..Config::default() });
    let strategy = proptest::collection::vec(proptest::collection::vec(act(), 0..6), 1..10);
    if let Err(e) = runner.run(&strategy, |batches| model_matches(kind, batches)) {
        panic!("{kind:?}: {e}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// The tests: each check on both back-ends.

#[test]
fn sqlite_commit_semantics() {
    on(Kind::Sqlite, commit_semantics);
}
#[test]
fn postgres_commit_semantics() {
    on(Kind::Postgres, commit_semantics);
}

#[test]
fn sqlite_streaming_and_bulk_import() {
    on(Kind::Sqlite, streaming_and_bulk_import);
}
#[test]
fn postgres_streaming_and_bulk_import() {
    on(Kind::Postgres, streaming_and_bulk_import);
}

#[test]
fn sqlite_prune_pending() {
    on(Kind::Sqlite, prune_pending);
}
#[test]
fn postgres_prune_pending() {
    on(Kind::Postgres, prune_pending);
}

#[test]
fn sqlite_adopt_rebuilds_a_store() {
    on(Kind::Sqlite, adopt_rebuilds_a_store);
}
#[test]
fn postgres_adopt_rebuilds_a_store() {
    on(Kind::Postgres, adopt_rebuilds_a_store);
}

/// TLS to PostgreSQL (`.ci/run` gives its server a certificate from a throw-away CA, named by
/// `ARGUS_TEST_POSTGRES_CA`): with `sslrootcert` the server reports the session encrypted and
/// the store works over it; without TLS parameters it is not encrypted; a CA that did not sign
/// the server's certificate, `sslmode=require` without `sslrootcert`, and an unknown `sslmode`
/// are refused with errors that say why.
#[test]
fn postgres_tls() {
    let Some(fresh) = Fresh::new(Kind::Postgres) else { return };
    let Some(ca) = std::env::var("ARGUS_TEST_POSTGRES_CA").ok().filter(|c| !c.is_empty()) else {
        let required = std::env::var("ARGUS_REQUIRE_POSTGRES").as_deref() == Ok("1");
        assert!(!required, "ARGUS_TEST_POSTGRES_CA is not set: no TLS to test");
        return;
    };
    let with = |params: &str| format!("{}{}{params}", fresh.url, if fresh.url.contains('?') { '&' } else { '?' });
    let encrypted = |url: &str| -> bool {
        let mut c = argus_store::connect_postgres(url).unwrap();
        c.query_one("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[]).unwrap().get(0)
    };
    let url = with(&format!("sslmode=verify-full&sslrootcert={ca}"));
    assert!(encrypted(&url));
    assert!(encrypted(&with(&format!("sslrootcert={ca}"))), "a root certificate alone means TLS");
    assert!(!encrypted(&fresh.url));
    let mut s = open(&url).unwrap();
    assert!(s.describe().ends_with("(TLS)"), "{}", s.describe());
    s.bulk_import(&mut vec![(0, share(1, 100))].into_iter()).unwrap();
    assert_eq!(s.summary().unwrap().count, 1);

    let other = std::env::temp_dir().join(format!("argus-other-ca-{}.pem", std::process::id()));
    std::fs::write(&other, rcgen::generate_simple_self_signed(vec!["elsewhere".into()]).unwrap().cert.pem()).unwrap();
    let e = open(&with(&format!("sslmode=verify-full&sslrootcert={}", other.display()))).err().unwrap().to_string();
    let _ = std::fs::remove_file(&other);
    assert!(e.to_lowercase().contains("certificate"), "{e}");
    let e = open(&with("sslmode=require")).err().unwrap().to_string();
    assert!(e.contains("needs sslrootcert"), "{e}");
    let e = open(&with("sslmode=sometimes")).err().unwrap().to_string();
    assert!(e.contains("unknown sslmode"), "{e}");
    let e = open(&with("sslrootcert=/nonexistent/ca.pem")).err().unwrap().to_string();
    assert!(e.contains("/nonexistent/ca.pem"), "{e}");

    // A client certificate (`.ci/run`'s role argus_cert may log in with nothing else).
    let (Ok(cert), Ok(key)) =
        (std::env::var("ARGUS_TEST_POSTGRES_CLIENT_CERT"), std::env::var("ARGUS_TEST_POSTGRES_CLIENT_KEY"))
    else {
        return;
    };
    let as_cert = with(&format!("sslrootcert={ca}")).replacen("://argus@", "://argus_cert@", 1);
    assert!(as_cert.contains("argus_cert@"), "{as_cert}");
    let mut c = argus_store::connect_postgres(&format!("{as_cert}&sslcert={cert}&sslkey={key}")).unwrap();
    let user: String = c.query_one("SELECT current_user::TEXT", &[]).unwrap().get(0);
    assert_eq!(user, "argus_cert");
    assert!(argus_store::connect_postgres(&as_cert).is_err(), "without its certificate the role is refused");
}

/// A deleted identity's share leaves the SQLite files: after the deleting commit, neither the
/// database nor its WAL holds the share's bytes (secure_delete, and a checkpoint that truncates
/// the WAL). The pending copy, moved at enrolment, is gone as well.
#[test]
fn sqlite_deletion_leaves_no_copy_of_the_share() {
    let fresh = Fresh::new(Kind::Sqlite).unwrap();
    let mut s = fresh.open();
    let marker: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let files = || -> Vec<u8> {
        let dir = fresh.sqlite_dir.as_ref().unwrap();
        ["node.db", "node.db-wal"].iter().flat_map(|f| std::fs::read(dir.join(f)).unwrap_or_default()).collect()
    };
    let holds = |bytes: &[u8]| bytes.windows(64).any(|w| w == &marker[5000..5064]);
    s.put_pending("keep", &share(7, 20_000)).unwrap();
    s.put_pending("gone", &marker).unwrap();
    assert!(s.commit(&Commit { seq: 1, ops: vec![enrol("keep", 0), enrol("gone", 1)] }).unwrap());
    assert!(holds(&files()), "the share is on disk while enrolled");
    assert!(s.commit(&Commit { seq: 2, ops: vec![delete("d", 1, true)] }).unwrap());
    assert!(!holds(&files()), "a copy of the deleted share is left on disk");
    assert_eq!(identities(&mut *s), vec![(0, share(7, 20_000))]);
}

#[test]
fn sqlite_reopen_persists() {
    on(Kind::Sqlite, reopen_persists);
}
#[test]
fn postgres_reopen_persists() {
    on(Kind::Postgres, reopen_persists);
}

#[test]
fn sqlite_newer_schema_refused() {
    on(Kind::Sqlite, newer_schema_refused);
}
#[test]
fn postgres_newer_schema_refused() {
    on(Kind::Postgres, newer_schema_refused);
}

#[test]
fn sqlite_crash_mid_transaction() {
    if let Ok(url) = std::env::var(CRASH_ENV) {
        crash_child(&url);
    }
    on(Kind::Sqlite, |f| crash_mid_transaction(f, "sqlite_crash_mid_transaction"));
}
#[test]
fn postgres_crash_mid_transaction() {
    if let Ok(url) = std::env::var(CRASH_ENV) {
        crash_child(&url);
    }
    on(Kind::Postgres, |f| crash_mid_transaction(f, "postgres_crash_mid_transaction"));
}

#[test]
fn sqlite_matches_model() {
    property(Kind::Sqlite);
}
#[test]
fn postgres_matches_model() {
    property(Kind::Postgres);
}

#[test]
fn urls() {
    for bad in ["", "sqlite:", "sqlite://", "mysql://host/db"] {
        assert!(matches!(open(bad), Err(StoreError::BadUrl(_))), "{bad:?}");
    }
    let dir = std::env::temp_dir().join(format!("argus-store-url-{}-{:x}", std::process::id(), rand::random::<u64>()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("plain.db");
    let plain = open(path.to_str().unwrap()).unwrap();
    assert_eq!(plain.describe(), format!("sqlite {}", path.display()));
    drop(plain);
    // sqlite:///abs/path and sqlite:/abs/path name the same file as the plain path.
    let mut s = open(&format!("sqlite://{}", path.display())).unwrap();
    s.put_pending("x", &[1]).unwrap();
    drop(s);
    assert_eq!(open(&format!("sqlite:{}", path.display())).unwrap().pending("x").unwrap(), Some(vec![1]));
    // WAL mode is on.
    let c = rusqlite::Connection::open(&path).unwrap();
    let mode: String = c.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    let page: i64 = c.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    assert_eq!(page, 16 * 1024, "big pages for big blobs");
    drop(c);
    let _ = std::fs::remove_dir_all(&dir);
    // A PostgreSQL server that is not there: an error (no hang), and no password in the message.
    match open("postgres://argus:s3cret@127.0.0.1:1/nodb?connect_timeout=2") {
        Err(e) => assert!(!e.to_string().contains("s3cret"), "{e}"),
        Ok(_) => panic!("nothing listens on port 1"),
    }
}

#[test]
fn postgres_describe_hides_password() {
    let Some(admin) = postgres_admin_url() else { return };
    let (scheme, rest) = admin.split_once("://").unwrap();
    // Add a password the trust-auth test server ignores; it must not appear in the description.
    let rest = match rest.split_once('@') {
        Some((user, host)) if !user.contains(':') => format!("{user}:hunter2@{host}"),
        _ => return, // the URL has a password already or no user: nothing to add
    };
    let fresh = Fresh::new(Kind::Postgres).unwrap();
    let url = with_db(&format!("{scheme}://{rest}"), &fresh.pg.as_ref().unwrap().1);
    let s = open(&url).unwrap();
    let d = s.describe();
    assert!(d.starts_with("postgres ") && d.contains(&fresh.pg.as_ref().unwrap().1), "{d}");
    assert!(!d.contains("hunter2"), "{d}");
}

/// `argus setup` and `argus demo` create the nodes' PostgreSQL databases where the role may
/// (issue 36, item 10): a missing database is created once, then found; a role that may not
/// create databases (`.ci/run`'s argus_cert) is told the command to run.
#[test]
fn postgres_databases_are_created_when_missing() {
    let Some(admin) = postgres_admin_url() else { return };
    let name = format!("argus_created_{}_{}", std::process::id(), rand::random::<u32>());
    let url = with_db(&admin, &name);
    assert!(argus_store::create_postgres_database_if_missing(&url).unwrap(), "created");
    assert!(!argus_store::create_postgres_database_if_missing(&url).unwrap(), "found the second time");
    let mut s = open(&url).unwrap();
    assert_eq!(s.summary().unwrap().count, 0);
    drop(s);
    admin_client(&admin).batch_execute(&format!("DROP DATABASE {name}")).unwrap();

    let (Ok(ca), Ok(cert), Ok(key)) = (
        std::env::var("ARGUS_TEST_POSTGRES_CA"),
        std::env::var("ARGUS_TEST_POSTGRES_CLIENT_CERT"),
        std::env::var("ARGUS_TEST_POSTGRES_CLIENT_KEY"),
    ) else {
        return;
    };
    let as_cert = with_db(&admin, &format!("{name}_cert")).replacen("://argus@", "://argus_cert@", 1);
    let sep = if as_cert.contains('?') { '&' } else { '?' };
    let as_cert = format!("{as_cert}{sep}sslrootcert={ca}&sslcert={cert}&sslkey={key}");
    let e = argus_store::create_postgres_database_if_missing(&as_cert).unwrap_err().to_string();
    assert!(e.contains("may not create it") && e.contains("ALTER ROLE argus_cert CREATEDB"), "{e}");
}
