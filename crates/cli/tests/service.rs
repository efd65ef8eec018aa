//! The iris service as three `argus node` processes on small codes (and once on open-iris codes
//! from open-iris files): enrolment, check-only queries, in-batch duplicates, deletion, idempotent
//! retries, refusals of bad input (nothing changes), crash recovery — a node killed at any point of
//! a batch restarts into the state of its peers and the retried request gets its one outcome —
//! back-pressure, and stopping: a node stopped by a signal finishes its batch, and a rolling
//! restart under load loses nothing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use argus_client::wire::Request;
use argus_client::{new_request_id, Client, ClientConfig, ClientError, Kind, Outcome};
use argus_iris::{find_matches, Generator, IrisCode, IrisGeometry, MatchConfig, Template};
use argus_store::Op;

const EXE: &str = env!("CARGO_BIN_EXE_argus");
const LAYOUT: &str = "layout = { rows = 4, cols = 32, filters = 2, parts = 2 }";

struct Cluster {
    dir: PathBuf,
    nodes: Vec<Option<Child>>,
    rt: tokio::runtime::Runtime,
    client: Arc<Client>,
    /// The operator's client (`operator.toml`: deletions, the commit log).
    operator: Arc<Client>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..3 {
            self.kill(i);
        }
        if std::thread::panicking() {
            // The nodes' own account of a failure (CI keeps nothing else).
            for i in 0..3 {
                eprintln!("---- node {i} log ({}) ----\n{}", self.dir.display(), self.log(i));
            }
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn rewrite(path: &Path, f: impl Fn(String) -> String) {
    let s = std::fs::read_to_string(path).unwrap();
    std::fs::write(path, f(s)).unwrap();
}

impl Cluster {
    /// A running cluster on the default scheme.
    fn new(name: &str) -> Cluster {
        Cluster::with_scheme(name, None, false)
    }

    /// A running cluster on `scheme` (or the default); `reveal`: the nodes log what each query
    /// matched (`iris.reveal_matches`).
    fn with_scheme(name: &str, scheme: Option<&str>, reveal: bool) -> Cluster {
        Cluster::with_store(name, scheme, reveal, None)
    }

    /// As [`Cluster::with_scheme`], on the stores `store` + 0, 1, 2 (`argus setup --store`; default:
    /// SQLite files).
    fn with_store(name: &str, scheme: Option<&str>, reveal: bool, store: Option<&str>) -> Cluster {
        let mut args = Vec::new();
        if let Some(s) = scheme {
            args.extend(["--scheme", s]);
        }
        if let Some(s) = store {
            args.extend(["--store", s]);
        }
        Cluster::with_setup(name, &args, reveal)
    }

    /// A running cluster that `argus setup` made with `args`; the deployed layout becomes the
    /// small test codes, any other stays.
    fn with_setup(name: &str, args: &[&str], reveal: bool) -> Cluster {
        Cluster::with_setup_edited(name, args, reveal, |s| s)
    }

    /// A running cluster on the default scheme whose leader waits up to 1 s to fill a batch:
    /// for tests whose case is two requests in one batch (they assert it from the commit log),
    /// which the default 150 ms may miss on a loaded machine.
    fn waiting(name: &str) -> Cluster {
        Cluster::with_setup_edited(name, &[], false, |s| s.replace("wait_ms = 150", "wait_ms = 1000"))
    }

    /// As [`Cluster::with_setup`], with `edit` applied to the node configurations last.
    fn with_setup_edited(name: &str, args: &[&str], reveal: bool, edit: impl Fn(String) -> String) -> Cluster {
        let dir = std::env::temp_dir().join(format!("argus-service-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let out = Command::new(EXE).args(["setup", "--dir"]).arg(&dir).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for f in ["party0.toml", "party1.toml", "party2.toml", "client.toml", "operator.toml"] {
            rewrite(&dir.join(f), |s| {
                s.replace("layout = \"deployed\"", LAYOUT)
                    .replace("share_timeout_ms = 3000", "share_timeout_ms = 600")
                    .replace("wait_ms = 20", "wait_ms = 150")
                    .replace("retries = 8", "retries = 12")
                    .replace(
                        "reveal_matches = false",
                        if reveal { "reveal_matches = true" } else { "reveal_matches = false" },
                    )
            });
            rewrite(&dir.join(f), &edit);
        }
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let (client, operator) = {
            let _g = rt.enter();
            let load = |f: &str| Arc::new(Client::new(ClientConfig::load(&dir.join(f)).unwrap()).unwrap());
            (load("client.toml"), load("operator.toml"))
        };
        let mut c = Cluster { dir, nodes: vec![None, None, None], rt, client, operator };
        for i in 0..3 {
            c.start(i, None);
        }
        c
    }

    fn start(&mut self, i: usize, failpoint: Option<&str>) {
        self.start_with(i, failpoint, &[]);
    }

    /// Starts node `i` with extra arguments to `argus node`.
    fn start_with(&mut self, i: usize, failpoint: Option<&str>, args: &[&str]) {
        let log =
            std::fs::OpenOptions::new().create(true).append(true).open(self.dir.join(format!("node{i}.log"))).unwrap();
        let mut cmd = Command::new(EXE);
        cmd.args(["node", "--config"])
            .arg(self.dir.join(format!("party{i}.toml")))
            .args(args)
            .env("RUST_LOG", "info,argus_net=debug");
        cmd.stdout(Stdio::null()).stderr(log);
        match failpoint {
            Some(f) => cmd.env("ARGUS_FAILPOINT", f),
            None => cmd.env_remove("ARGUS_FAILPOINT"),
        };
        self.nodes[i] = Some(cmd.spawn().unwrap());
    }

    fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.nodes[i].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Waits until node `i` exits by itself (a failpoint, a signal) and returns its status.
    fn wait_exit(&mut self, i: usize, within: Duration) -> std::process::ExitStatus {
        let t = Instant::now();
        while t.elapsed() < within {
            if let Some(Ok(Some(status))) = self.nodes[i].as_mut().map(|c| c.try_wait()) {
                self.nodes[i] = None;
                return status;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("node {i} did not exit within {within:?}; log:\n{}", self.log(i));
    }

    /// Submits `t` for enrolment without waiting for the outcome.
    fn spawn_enrol(&self, t: Template) -> tokio::task::JoinHandle<Result<Outcome, ClientError>> {
        let client = self.client.clone();
        self.rt.spawn(async move { client.submit(&t, Kind::Enroll).await })
    }

    /// Waits until node `i`'s log says `stalling` at `failpoint`.
    fn wait_stall(&self, i: usize, failpoint: &str) {
        let t0 = Instant::now();
        while !self.log(i).contains(&format!("failpoint {failpoint}: stalling")) {
            assert!(t0.elapsed() < Duration::from_secs(60), "node {i} never reached {failpoint}:\n{}", self.log(i));
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Restarts all three nodes with their configuration edited by `edit`, node 0 at `failpoint`.
    fn restart_edited(&mut self, edit: impl Fn(String) -> String, failpoint: Option<&str>) {
        for i in 0..3 {
            self.kill(i);
            rewrite(&self.dir.join(format!("party{i}.toml")), &edit);
        }
        self.start(0, failpoint);
        self.start(1, None);
        self.start(2, None);
    }

    /// Sends SIGTERM to node `i`.
    fn terminate(&self, i: usize) {
        let pid = self.nodes[i].as_ref().expect("node running").id();
        // SAFETY: `kill` with a child's pid and a valid signal number.
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) }, 0);
    }

    fn log(&self, i: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("node{i}.log"))).unwrap_or_default()
    }

    fn submit(&self, t: &Template, kind: Kind) -> Result<Outcome, ClientError> {
        self.rt.block_on(self.client.submit(t, kind))
    }

    /// Waits (up to 60 s) until all three nodes serve and agree; returns the count.
    fn serving_count(&self) -> u64 {
        let t = Instant::now();
        loop {
            if let Ok(s) = self.rt.block_on(self.client.status()) {
                if s.iter().all(|n| n.serving && n.summary == s[0].summary) {
                    return s[0].summary.count;
                }
            }
            assert!(t.elapsed() < Duration::from_secs(60), "the nodes do not serve together");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// All three nodes agree on (count, digest, last batch, next id); returns the count. Each
    /// names the kernel it planned (a correlation path of the default scheme) and its host.
    fn consistent_count(&self) -> u64 {
        let s = self.rt.block_on(self.client.status()).unwrap();
        assert!(s.iter().all(|n| n.summary == s[0].summary), "{s:?}");
        for n in &s {
            let planned = n.kernel.parse::<argus_math::kernels::CorrelationPath>().is_ok();
            assert!(planned || n.kernel.starts_with("gemm-"), "kernel {:?}", n.kernel);
            if planned {
                // Planned by the first node to start, remembered next to the configuration, and
                // found there by the others (they wait for its lock). (Node 0's comparison
                // chunk is remembered there too, on a line of its own.)
                let plans = std::fs::read_to_string(self.dir.join("kernel-plans.txt")).unwrap_or_default();
                let remembered: Vec<_> = plans
                    .lines()
                    .filter(|l| l.starts_with("correlation "))
                    .filter_map(|l| l.split_once('\t'))
                    .collect();
                assert!(remembered.len() == 1 && remembered[0].1 == n.kernel, "{plans}");
            }
            let host = argus_math::kernels::host();
            assert_eq!((n.cpu.as_str(), n.isa.as_str()), (host.cpu.as_str(), host.isa.name()));
        }
        s[0].summary.count
    }
}

fn generator(seed: u64) -> Generator {
    Generator::new(IrisGeometry::new(4, 32, 2, 2).unwrap(), seed).unwrap()
}

#[test]
fn enrol_check_delete_and_refusals() {
    enrol_check_delete_and_refuse(None);
}

/// The same on Shamir over F_65519, where shares must also be canonical field elements.
#[test]
fn enrol_check_delete_and_refusals_over_f65519() {
    enrol_check_delete_and_refuse(Some("mpclift-F16-shamir"));
}

fn enrol_check_delete_and_refuse(scheme: Option<&str>) {
    // The default scheme's run also reveals the matches to the operators (node logs).
    let c = Cluster::with_scheme(&format!("e2e-{}", scheme.unwrap_or("default")), scheme, scheme.is_none());
    let mut gen = generator(1);
    let people: Vec<Template> = (0..5).map(|_| gen.random_template()).collect();
    for (i, p) in people.iter().enumerate() {
        let o = c.submit(p, Kind::Enroll).unwrap();
        assert!(o.unique, "person {i}");
        assert_eq!(o.enrolled, Some(i as u64));
    }
    // A re-capture is refused; check-only queries enrol nothing.
    let again = gen.genuine_template(&people[2]).unwrap();
    assert!(!c.submit(&again, Kind::Enroll).unwrap().unique);
    for node in 0..3 {
        let log = c.log(node);
        let said = log.lines().any(|l| l.contains("query matched") && l.contains("enrolled=[2]"));
        assert_eq!(said, scheme.is_none(), "node {node} names the matched identity only if configured:\n{log}");
        // `compare_chunk = "auto"` (as `argus setup` writes it): the nodes measured their rounds
        // (the choice depends on how busy this machine is).
        let chosen = log.lines().any(|l| l.contains("comparisons per chunk chosen") && l.contains("round_ms="));
        assert!(chosen, "node {node} measured its rounds and chose a chunk:\n{log}");
        // Node 0 alone planned a chunk on its host (the schemes that time their comparison).
        let planned = log.lines().any(|l| l.contains("comparison chunk planned") && l.contains("compare_chunk="));
        let timed = !matches!(scheme, Some("mpclift-F16-shamir" | "plain-mask-Z16-rep3"));
        assert_eq!(planned, node == 0 && timed, "node {node}:\n{log}");
    }
    // All three use the same chunk (node 0's figures).
    let chunk_of = |node: usize| {
        let log = c.log(node);
        let line = log.lines().find(|l| l.contains("comparisons per chunk chosen")).unwrap_or_default().to_string();
        line.split_whitespace().find(|w| w.starts_with("compare_chunk=")).map(str::to_string)
    };
    assert!(chunk_of(0).is_some());
    assert_eq!([chunk_of(1), chunk_of(2)], [chunk_of(0), chunk_of(0)]);
    assert!(!c.submit(&gen.genuine_template(&people[3]).unwrap(), Kind::Check).unwrap().unique);
    let stranger = gen.random_template();
    let o = c.submit(&stranger, Kind::Check).unwrap();
    assert!(o.unique && o.enrolled.is_none());
    assert_eq!(c.consistent_count(), 5);

    // Two captures of a new person in one batch: exactly one is enrolled. Two check-only
    // captures in one batch are both unique (only the database counts).
    let newcomer = gen.random_template();
    let (a, b) = (gen.genuine_template(&newcomer).unwrap(), gen.genuine_template(&newcomer).unwrap());
    let both = |kind| {
        c.rt.block_on(async {
            let (x, y) = tokio::join!(c.client.submit(&a, kind), c.client.submit(&b, kind));
            (x.unwrap(), y.unwrap())
        })
    };
    let (x, y) = both(Kind::Check);
    assert!(x.unique && y.unique, "check-only: {x:?} {y:?}");
    let (x, y) = both(Kind::Enroll);
    assert_eq!(x.seq, y.seq, "the test wants both in one batch");
    assert_eq!([x.unique, y.unique].iter().filter(|u| **u).count(), 1, "{x:?} {y:?}");
    assert_eq!(c.consistent_count(), 6);

    // Retrying a decided request returns its outcome and changes nothing.
    let shares = c.client.make_shares(&gen.random_template()).unwrap();
    let id = new_request_id();
    let first = c.rt.block_on(c.client.submit_shares(id.clone(), Kind::Enroll, shares.clone())).unwrap();
    let retry = c.rt.block_on(c.client.submit_shares(id.clone(), Kind::Enroll, shares.clone())).unwrap();
    assert_eq!(first, retry);
    assert_eq!(c.consistent_count(), 7);

    // Re-authentication (1:1): a re-capture of person 2 is identity 2 and not identity 3; an id
    // never enrolled is a no; a verification and a check sent together are both answered.
    let recapture = gen.genuine_template(&people[2]).unwrap();
    assert!(c.rt.block_on(c.client.verify(&recapture, 2)).unwrap());
    assert!(!c.rt.block_on(c.client.verify(&recapture, 3)).unwrap());
    assert!(!c.rt.block_on(c.client.verify(&recapture, 999)).unwrap());
    let stranger2 = gen.random_template();
    let (v, k) =
        c.rt.block_on(async { tokio::join!(c.client.verify(&recapture, 2), c.client.submit(&stranger2, Kind::Check)) });
    assert!(v.unwrap() && k.unwrap().unique);
    assert_eq!(c.consistent_count(), 7, "verification enrols nothing");

    // Roles: an enrolling client may not delete nor read the commit log (every client's
    // outcomes); the operator may.
    let e = c.rt.block_on(c.client.delete(0)).unwrap_err().to_string();
    assert!(e.contains("may not delete identities") && e.contains("role-operator"), "{e}");
    let e = c.rt.block_on(c.client.commits(0, 0)).unwrap_err().to_string();
    assert!(e.contains("may not read the commit log"), "{e}");
    let log = c.rt.block_on(c.operator.commits(0, 0)).unwrap();
    assert!(log
        .iter()
        .flat_map(|c| &c.ops)
        .any(|op| matches!(op, argus_store::Op::Outcome { request_id, .. } if *request_id == format!("demo/{id}"))));
    // Request ids are bound to their client: the operator sending the demo client's id gets a
    // fresh request of its own (a check, not demo's enrolment), never demo's outcome.
    let other = c.client.make_shares(&gen.random_template()).unwrap();
    let theirs = c.rt.block_on(c.operator.submit_shares(id.clone(), Kind::Check, other)).unwrap();
    assert!(theirs.unique && theirs.enrolled.is_none() && theirs.seq != first.seq, "{theirs:?} {first:?}");
    assert_eq!(c.consistent_count(), 7);

    // Deletion: the deleted person is new again.
    assert!(c.rt.block_on(c.operator.delete(0)).unwrap());
    assert!(!c.rt.block_on(c.operator.delete(0)).unwrap());
    assert_eq!(c.consistent_count(), 6);
    assert!(c.submit(&gen.genuine_template(&people[0]).unwrap(), Kind::Check).unwrap().unique);
    assert!(!c.submit(&gen.genuine_template(&people[1]).unwrap(), Kind::Check).unwrap().unique);

    // Bad input is refused with a reason, and nothing changes.
    let refused = |shares: [Vec<u8>; 3], want: &str| {
        let e = c.rt.block_on(c.client.submit_shares(new_request_id(), Kind::Enroll, shares)).unwrap_err();
        assert!(e.to_string().contains(want), "{e} does not say {want:?}");
    };
    let mut short = shares.clone();
    short[1].truncate(short[1].len() - 2);
    refused(short, "invalid share");
    if scheme == Some("mpclift-F16-shamir") {
        let mut outside = shares.clone();
        let n = outside[2].len();
        outside[2][n - 2..].copy_from_slice(&0xffffu16.to_le_bytes());
        refused(outside, "not an element of F_65519");
    }
    let other_layout = Generator::new(IrisGeometry::new(4, 16, 2, 2).unwrap(), 3).unwrap().random_template();
    let e = c.submit(&other_layout, Kind::Enroll).unwrap_err();
    assert!(e.to_string().contains("layout"), "{e}");
    // A decided request id reused for a deletion (by the client that used it).
    let del = Request::Delete { request_id: id.clone(), id: 3 };
    let e = c.rt.block_on(c.operator.send_all([del.clone(), del.clone(), del])).unwrap_err();
    assert!(e.to_string().contains("different kind"), "{e}");
    // A share set whose parts carry different request ids never runs.
    let mut cfg = ClientConfig::load(&c.dir.join("client.toml")).unwrap();
    cfg.retries = 0;
    let strict = {
        let _e = c.rt.enter();
        Client::new(cfg).unwrap()
    };
    let reqs: [Request; 3] = std::array::from_fn(|i| Request::Submit {
        request_id: new_request_id(),
        kind: Kind::Enroll,
        share: shares[i].clone(),
    });
    let e = c.rt.block_on(strict.send_all(reqs)).unwrap_err();
    assert!(e.to_string().contains("did not reach all three nodes"), "{e}");
    assert_eq!(c.consistent_count(), 6);
    // A client whose [iris] rotations differ from the nodes' is told which settings to match.
    let mut narrow = ClientConfig::load(&c.dir.join("client.toml")).unwrap();
    (narrow.iris.rotations, narrow.retries) = (3, 0);
    let narrow = {
        let _e = c.rt.enter();
        Client::new(narrow).unwrap()
    };
    let e = c.rt.block_on(narrow.submit(&gen.random_template(), Kind::Check)).unwrap_err().to_string();
    assert!(e.contains("rows per eye") && e.contains("client's [iris] settings (client.toml) must be the same"), "{e}");
    assert_eq!(c.consistent_count(), 6);

    // An unknown client is refused.
    let mut guest = ClientConfig::load(&c.dir.join("client.toml")).unwrap();
    let paths = argus_net::tcp::PemPaths::client(c.dir.join("pki"), "guest");
    guest.identity = argus_net::tcp::TlsIdentity::from_pem_files(&paths.ca, &paths.cert, &paths.key).unwrap();
    guest.retries = 0;
    let g = {
        let _e = c.rt.enter();
        Client::new(guest).unwrap()
    };
    let e = c.rt.block_on(g.status()).unwrap_err();
    assert!(e.to_string().contains("unknown client"), "{e}");

    // The threshold is strict and exact: against a fully valid enrolled template, a query valid
    // on 200 bits with 69 of them differing (hd/ml = 0.345 exactly) is not a match; 68 is.
    let geometry = IrisGeometry::new(4, 32, 2, 2).unwrap();
    let full = |c: &IrisCode| IrisCode::unmasked(geometry, c.code().clone()).unwrap();
    let base = gen.random_template();
    let base = Template::new(full(&base.left), full(&base.right)).unwrap();
    assert!(c.submit(&base, Kind::Enroll).unwrap().unique);
    let at = |hd: usize| {
        let eye = |e: &IrisCode| {
            let (mut code, mut mask) = (e.code().clone(), argus_math::BitVec::zeros(geometry.bits()));
            (0..hd).for_each(|i| code.set(i, !code.get(i)));
            (0..200).for_each(|i| mask.set(i, true));
            IrisCode::new(geometry, code, mask).unwrap()
        };
        Template::new(eye(&base.left), eye(&base.right)).unwrap()
    };
    assert!(c.submit(&at(69), Kind::Check).unwrap().unique, "hd/ml = 0.345 is not a match");
    assert!(!c.submit(&at(68), Kind::Check).unwrap().unique, "hd/ml = 0.34 is");
}

/// An open-iris deployment from the command line: `argus setup --layout open-iris` on the
/// default scheme (16384-bit codes on 16-bit shares), a person enrolled from open-iris
/// IrisTemplate JSON files (`argus enroll --open-iris LEFT RIGHT`), a re-capture of them refused
/// by `argus check`, and a new person found unique without being enrolled.
#[test]
fn an_open_iris_deployment_takes_open_iris_files() {
    let c = Cluster::with_setup("open-iris", &["--layout", "open-iris"], false);
    let config = std::fs::read_to_string(c.dir.join("party0.toml")).unwrap();
    assert!(config.contains("layout = \"open-iris\"") && config.contains("mpclift-GR16-shamir"), "{config}");
    let mut gen = Generator::new(IrisGeometry::OPEN_IRIS, 4).unwrap();
    let person = gen.random_template();
    let run = |cmd: &str, t: &Template, name: &str| {
        let (l, r) = (c.dir.join(format!("{name}-left.json")), c.dir.join(format!("{name}-right.json")));
        t.write_open_iris_files(&l, &r).unwrap();
        let client = c.dir.join("client.toml");
        let out =
            Command::new(EXE).args([cmd, "--client"]).arg(client).arg("--open-iris").args([l, r]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(c.serving_count(), 0);
    assert!(run("enroll", &person, "person").contains("unique: enrolled as identity 0"));
    let again = gen.genuine_template(&person).unwrap();
    assert!(run("check", &again, "again").contains("not unique"));
    assert!(run("check", &gen.random_template(), "new").starts_with("unique"));
    assert_eq!(c.consistent_count(), 1);
    // Re-authentication from the command line: exit status 0 for yes, 1 for no.
    let verify = |id: &str, t: &Template| {
        let (l, r) = (c.dir.join("v-left.json"), c.dir.join("v-right.json"));
        t.write_open_iris_files(&l, &r).unwrap();
        let out = Command::new(EXE)
            .args(["verify", "--id", id, "--client"])
            .arg(c.dir.join("client.toml"))
            .arg("--open-iris")
            .args([l, r])
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (code, out) = verify("0", &gen.genuine_template(&person).unwrap());
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("verified: the template is identity 0"), "{out}");
    let (code, out) = verify("0", &gen.random_template());
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("not verified"), "{out}");
    assert_eq!(c.consistent_count(), 1, "verification enrols nothing");
}

/// A status request is answered while the node runs a batch (from the snapshot of the last one),
/// not after it: node 1 stalls inside batch 2, and its status comes back before the batch ends.
#[test]
fn status_does_not_wait_for_a_running_batch() {
    let mut c = Cluster::new("status-during-batch");
    c.kill(1);
    c.start(1, Some("after-reveal:2:stall-8000"));
    let mut gen = generator(9);
    assert_eq!(c.submit(&gen.random_template(), Kind::Enroll).unwrap().enrolled, Some(0));
    let pending = c.spawn_enrol(gen.random_template());
    c.wait_stall(1, "after-reveal:2:stall-8000");
    let s = c.rt.block_on(c.client.status()).unwrap();
    assert!(!pending.is_finished(), "the batch was still stalled when the status came back");
    assert_eq!(s[1].summary.count, 1, "node 1 reports its last finished batch: {s:?}");
    let o = c.rt.block_on(pending).unwrap().unwrap();
    assert_eq!(o.enrolled, Some(1));
    assert_eq!(c.consistent_count(), 2);
}

/// A full leader refuses new requests with a retryable "busy" error and stores nothing for them;
/// its clients back off and retry, and every request still gets its one outcome. The leader
/// takes one request at a time (`batch.max = max_queued = 1`) and stalls in batch 2 while four
/// more arrive: it admits one of them and refuses three.
#[test]
fn a_full_leader_refuses_and_clients_retry() {
    let mut c = Cluster::new("busy");
    c.restart_edited(
        |s| s.replace("max = 32", "max = 1").replace("max_queued = 1024", "max_queued = 1"),
        Some("after-reveal:2:stall-2000"),
    );
    let mut gen = generator(11);
    assert_eq!(c.submit(&gen.random_template(), Kind::Enroll).unwrap().enrolled, Some(0));
    let stalled = c.spawn_enrol(gen.random_template());
    c.wait_stall(0, "after-reveal:2:stall-2000");
    let more: Vec<_> = (0..4).map(|_| c.spawn_enrol(gen.random_template())).collect();
    let mut ids: Vec<u64> = std::iter::once(stalled)
        .chain(more)
        .map(|h| c.rt.block_on(h).unwrap().unwrap_or_else(|e| panic!("{e}\nlog:\n{}", c.log(0))))
        .map(|o| {
            assert!(o.unique, "{o:?}");
            o.enrolled.expect("a unique request is enrolled")
        })
        .collect();
    ids.sort();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    assert_eq!(c.consistent_count(), 6);
    let s = c.rt.block_on(c.client.status()).unwrap();
    assert!(s[0].refused_busy >= 3, "the leader admitted one of the four and refused the others: {s:?}");
    let log = c.log(0);
    assert!(log.contains("refusing new ones") && log.contains("admitting new requests"), "{log}");
    assert!(s.iter().all(|n| n.queued == 0), "{s:?}");
}

/// A query whose mask leaves an eye fewer valid bits than `iris.min_valid` asks (a quarter) is
/// refused, decided in MPC, with the reason; nothing of it is stored, a retry of the same request
/// gets the same refusal, the status counts it, and the other query of its batch is enrolled.
#[test]
fn a_template_with_too_few_valid_bits_is_refused_and_its_batch_goes_on() {
    let c = Cluster::waiting("short-masks");
    let mut gen = generator(31);
    let geometry = IrisGeometry::new(4, 32, 2, 2).unwrap();
    let t = gen.random_template();
    // 127 of 512 bits valid on the left eye: one short of a quarter.
    let mut mask = argus_math::BitVec::zeros(geometry.bits());
    (0..127).for_each(|i| mask.set(i, true));
    let short = Template::new(IrisCode::new(geometry, t.left.code().clone(), mask).unwrap(), t.right.clone()).unwrap();
    let shares = c.client.make_shares(&short).unwrap();
    let id = new_request_id();
    // Both requests' shares are made before either is sent, so that they reach the leader within
    // its wait for a batch even on a loaded machine.
    let fine = c.client.make_shares(&gen.random_template()).unwrap();
    let send = |id: String, shares: [Vec<u8>; 3]| {
        let client = c.client.clone();
        c.rt.spawn(async move { client.submit_shares(id, Kind::Enroll, shares).await })
    };
    let refused = send(id.clone(), shares.clone());
    let fine = send(new_request_id(), fine);
    let e = c.rt.block_on(refused).unwrap().unwrap_err().to_string();
    assert!(e.contains("fewer than 128 valid (unmasked) code bits of 512") && e.contains("iris.min_valid"), "{e}");
    assert_eq!(c.rt.block_on(fine).unwrap().unwrap().enrolled, Some(0));
    let again = c.rt.block_on(c.client.submit_shares(id, Kind::Enroll, shares)).unwrap_err().to_string();
    let reason = |e: &str| e.split_once("refused: ").map(|(_, r)| r.to_string());
    assert_eq!(reason(&again), reason(&e), "a retry gets the recorded refusal");
    let s = c.rt.block_on(c.client.status()).unwrap();
    assert!(s.iter().all(|n| n.refused_short == 1 && n.summary.count == 1), "{s:?}");
    // the two were one batch: its commit refuses one and enrols the other
    let log = c.rt.block_on(c.operator.commits(0, 0)).unwrap();
    let batch = log.iter().find(|b| b.ops.iter().any(|op| matches!(op, Op::Refused { .. }))).expect("a refusal");
    assert!(batch.ops.iter().any(|op| matches!(op, Op::Outcome { enrolled: Some(0), .. })), "{log:?}");
    // one valid bit more on that eye: checked, unique, enrolled
    let mut mask = argus_math::BitVec::zeros(geometry.bits());
    (0..128).for_each(|i| mask.set(i, true));
    let enough = Template::new(IrisCode::new(geometry, t.left.code().clone(), mask).unwrap(), t.right.clone()).unwrap();
    assert_eq!(c.submit(&enough, Kind::Enroll).unwrap().enrolled, Some(1));
    assert_eq!(c.consistent_count(), 2);
}

/// Issue 35, item 1: an enrolment whose share for node 0 was made from one template and whose
/// shares for nodes 1 and 2 from another (the Rust client's own `make_shares`) is refused as
/// invalid, with its batch's other enrolment going on; then fresh templates are unique. (Before
/// the validity check it was enrolled, and afterwards every fresh template was "not unique".)
#[test]
fn shares_of_different_templates_are_refused_and_block_nobody() {
    let c = Cluster::waiting("mixed-shares");
    let mut gen = generator(37);
    let [x0, _, _] = c.client.make_shares(&gen.random_template()).unwrap();
    let [_, y1, y2] = c.client.make_shares(&gen.random_template()).unwrap();
    let mixed = [x0, y1, y2];
    // Both requests' shares are made before either is sent, so that they reach the leader within
    // its wait for a batch even on a loaded machine (sharing a template takes a while).
    let fine = c.client.make_shares(&gen.random_template()).unwrap();
    let id = new_request_id();
    let send = |id: String, shares: [Vec<u8>; 3]| {
        let client = c.client.clone();
        c.rt.spawn(async move { client.submit_shares(id, Kind::Enroll, shares).await })
    };
    let refused = send(id.clone(), mixed.clone());
    let fine = send(new_request_id(), fine);
    let e = c.rt.block_on(refused).unwrap().unwrap_err().to_string();
    assert!(e.contains("not those of a valid template"), "{e}");
    assert_eq!(c.rt.block_on(fine).unwrap().unwrap().enrolled, Some(0));
    let again = c.rt.block_on(c.client.submit_shares(id, Kind::Enroll, mixed)).unwrap_err().to_string();
    assert!(again.contains("not those of a valid template"), "a retry gets the recorded refusal: {again}");
    // The case the test is for: the two were one batch, whose commit refuses one and enrols the other.
    let log = c.rt.block_on(c.operator.commits(0, 0)).unwrap();
    let batch = log.iter().find(|b| b.ops.iter().any(|op| matches!(op, Op::Refused { .. }))).expect("a refusal");
    assert!(batch.ops.iter().any(|op| matches!(op, Op::Outcome { enrolled: Some(0), .. })), "{log:?}");
    let s = c.rt.block_on(c.client.status()).unwrap();
    assert!(s.iter().all(|n| n.refused_invalid == 1 && n.refused_short == 0 && n.summary.count == 1), "{s:?}");
    for _ in 0..6 {
        assert!(c.submit(&gen.random_template(), Kind::Check).unwrap().unique, "a fresh template is unique");
    }
    assert_eq!(c.consistent_count(), 1);
}

/// Issue 35, item 9: a template that matches nothing as presented but matches an enrolled
/// identity with its eyes swapped and mirrored is refused as a mirror attack and counted, not
/// enrolled (the twin: `Template::mirrored`); other enrolments go on; with `iris.mirror_check =
/// false` it enrols.
#[test]
fn a_mirror_attack_is_refused_and_counted() {
    let mut c = Cluster::waiting("mirror");
    let mut gen = generator(43);
    let cfg = MatchConfig { rotations: -15..=15, ..MatchConfig::default() };
    let t = gen.random_template();
    let attack = gen.genuine_template(&t).unwrap().mirrored();
    // The twin: the attack is unique as presented, and its mirror image is the identity.
    assert!(find_matches(&attack, std::slice::from_ref(&t), &cfg).unwrap().is_empty());
    assert_eq!(find_matches(&attack.mirrored(), std::slice::from_ref(&t), &cfg).unwrap(), [0]);
    assert_eq!(c.submit(&t, Kind::Enroll).unwrap().enrolled, Some(0));
    let e = c.submit(&attack, Kind::Enroll).unwrap_err().to_string();
    assert!(e.contains("mirror attack"), "{e}");
    let e = c.submit(&attack, Kind::Check).unwrap_err().to_string();
    assert!(e.contains("mirror attack"), "a check is refused alike: {e}");
    assert_eq!(c.submit(&gen.random_template(), Kind::Enroll).unwrap().enrolled, Some(1));
    // In one batch after a duplicate (a query found not unique, so not checked mirrored), the
    // attack is still the one refused.
    // Both share sets are made before either is sent, so that both reach the leader within its
    // wait for a batch even on a loaded machine.
    let (dup_shares, attack_shares) = (c.client.make_shares(&t).unwrap(), c.client.make_shares(&attack).unwrap());
    let send = |shares: [Vec<u8>; 3]| {
        let (client, id) = (c.client.clone(), new_request_id());
        (id.clone(), c.rt.spawn(async move { client.submit_shares(id, Kind::Enroll, shares).await }))
    };
    let (dup_id, dup) = send(dup_shares);
    std::thread::sleep(Duration::from_millis(30)); // within the leader's 1 s wait, after the duplicate
    let (attack_id, again) = send(attack_shares);
    assert_eq!(c.rt.block_on(dup).unwrap().unwrap().enrolled, None);
    let e = c.rt.block_on(again).unwrap().unwrap_err().to_string();
    assert!(e.contains("mirror attack"), "{e}");
    let log = c.rt.block_on(c.operator.commits(0, 0)).unwrap();
    let at = |id: &str| {
        log.iter().find_map(|b| b.ops.iter().position(|op| op.request_id().ends_with(id)).map(|i| (b.seq, i)))
    };
    let (d, a) = (at(&dup_id).expect("the duplicate"), at(&attack_id).expect("the attack"));
    assert!(d.0 == a.0 && d.1 < a.1, "the case happened: one batch, the duplicate first ({d:?}, {a:?})");
    let s = c.rt.block_on(c.client.status()).unwrap();
    assert!(s.iter().all(|n| n.refused_mirror == 3 && n.summary.count == 2), "{s:?}");
    c.restart_edited(|s| s.replace("mirror_check = true", "mirror_check = false"), None);
    c.serving_count();
    assert_eq!(c.submit(&attack, Kind::Enroll).unwrap().enrolled, Some(2), "mirror_check = false enrols it");
}

/// The enrolment shares on disk are bounded (`limits.pending_shares = 1`): two enrolments sent
/// together reach the leader within its wait for a batch (1 s here); the first's share is stored,
/// the second is refused as busy before anything of it is stored there, and its client's retry
/// enrols it after the first's batch.
#[test]
fn pending_shares_on_disk_are_bounded() {
    let mut c = Cluster::waiting("pending-bound");
    c.restart_edited(|s| s.replace("pending_shares = 4096", "pending_shares = 1"), None);
    let mut gen = generator(29);
    assert_eq!(c.submit(&gen.random_template(), Kind::Enroll).unwrap().enrolled, Some(0));
    // Shares made before either is sent: both reach the leader within its wait on a loaded machine.
    let shares = [(); 2].map(|_| c.client.make_shares(&gen.random_template()).unwrap());
    let both = shares.map(|s| {
        let client = c.client.clone();
        c.rt.spawn(async move { client.submit_shares(new_request_id(), Kind::Enroll, s).await })
    });
    let mut ids: Vec<u64> = both
        .into_iter()
        .map(|h| c.rt.block_on(h).unwrap().unwrap_or_else(|e| panic!("{e}")).enrolled.expect("enrolled"))
        .collect();
    ids.sort();
    assert_eq!(ids, [1, 2]);
    let s = c.rt.block_on(c.client.status()).unwrap();
    assert!(s[0].refused_busy >= 1, "the leader refused one enrolment at least once: {s:?}");
    assert!(c.log(0).contains("limits.pending_shares reached"), "{}", c.log(0));
    assert_eq!(c.consistent_count(), 3);
}

/// A client that sends its enrolment shares to the leader alone leaves nothing on the leader's
/// disk: the leader proposes the request, the followers lack it, it is dropped from the batch and
/// its pending share deleted (kept, such shares would fill `limits.pending_shares` until the
/// day-old prune and refuse everyone's enrolments).
#[test]
fn a_share_sent_to_the_leader_alone_is_not_kept() {
    let c = Cluster::new("leader-alone");
    c.serving_count();
    let mut file: argus_client::ClientFile =
        toml::from_str(&std::fs::read_to_string(c.dir.join("client.toml")).unwrap()).unwrap();
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    (file.nodes[1], file.nodes[2], file.retries) = (dead, dead, 0);
    std::fs::write(c.dir.join("leader-only.toml"), toml::to_string(&file).unwrap()).unwrap();
    let one = {
        let _g = c.rt.enter();
        Client::new(ClientConfig::load(&c.dir.join("leader-only.toml")).unwrap()).unwrap()
    };
    let mut gen = generator(37);
    // The leader stored the share and queued the request; its answer comes when the batch drops
    // it (the followers' share timeout is 600 ms here): the case happened.
    let e = c.rt.block_on(one.submit(&gen.random_template(), Kind::Enroll)).unwrap_err().to_string();
    assert!(e.contains("node 0") && e.contains("did not reach all three nodes"), "{e}");
    let pending = || -> i64 {
        let db = rusqlite::Connection::open(c.dir.join("party0.db")).unwrap();
        db.query_row("SELECT COUNT(*) FROM pending", [], |r| r.get(0)).unwrap()
    };
    assert_eq!(pending(), 0, "the leader kept the dropped request's share");
    // and the service goes on
    assert_eq!(c.submit(&gen.random_template(), Kind::Enroll).unwrap().enrolled, Some(0));
    assert_eq!(pending(), 0);
}

/// One client that floods does not starve another: the flooder keeps 1000 checks going (without
/// the client's retries: it resubmits at once what is answered and after 2 s what is refused)
/// while each node holds at most 8 of one client's requests (`limits.in_flight_per_client`) and
/// the leader's batches take the clients in turn. The flooder gets "busy" and is still served; the
/// calm client's median latency stays within twice its unloaded figure (before the limits and the
/// fair batches it went from 155 ms to 710-745 ms: a thousand queued checks ahead of it).
#[test]
fn a_flooding_client_gets_busy_and_the_others_keep_their_latency() {
    let mut c = Cluster::new("flood");
    c.restart_edited(|s| s.replace("in_flight_per_client = 256", "in_flight_per_client = 8"), None);
    c.serving_count();
    let mut gen = generator(23);
    for _ in 0..4 {
        c.submit(&gen.random_template(), Kind::Enroll).unwrap();
    }
    let calm: Vec<Template> = (0..14).map(|_| gen.random_template()).collect();
    let latency = |c: &Cluster, ts: &[Template]| -> Duration {
        let mut took: Vec<Duration> = ts
            .iter()
            .map(|t| {
                let start = Instant::now();
                c.submit(t, Kind::Check).unwrap_or_else(|e| panic!("{e}"));
                start.elapsed()
            })
            .collect();
        took.sort();
        took[took.len() / 2]
    };
    let unloaded = latency(&c, &calm[..7]);

    // The flooder: the operator's certificate (a client of its own), no retries.
    let mut file: argus_client::ClientFile =
        toml::from_str(&std::fs::read_to_string(c.dir.join("operator.toml")).unwrap()).unwrap();
    file.retries = 0;
    std::fs::write(c.dir.join("flood.toml"), toml::to_string(&file).unwrap()).unwrap();
    let flooder = {
        let _g = c.rt.enter();
        Arc::new(Client::new(ClientConfig::load(&c.dir.join("flood.toml")).unwrap()).unwrap())
    };
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (busy, served) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let tasks: Vec<_> = (0..1000u64)
        .map(|i| {
            let (flooder, stop, busy, served) = (flooder.clone(), stop.clone(), busy.clone(), served.clone());
            let t = generator(1000 + i).random_template();
            c.rt.spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    match flooder.submit(&t, Kind::Check).await {
                        Ok(_) => {
                            served.fetch_add(1, Ordering::Relaxed);
                        }
                        // busy, or (its copies at the followers expiring) "retry"
                        Err(ClientError::Refused { message, .. }) => {
                            if message.contains("busy") {
                                busy.fetch_add(1, Ordering::Relaxed);
                            }
                            tokio::time::sleep(Duration::from_secs(2)).await;
                        }
                        Err(e) => panic!("the flooder got {e}"),
                    }
                }
            })
        })
        .collect();
    let t = Instant::now();
    while served.load(Ordering::Relaxed) < 50 {
        assert!(t.elapsed() < Duration::from_secs(30), "the flood never got going");
        std::thread::sleep(Duration::from_millis(20));
    }
    let loaded = latency(&c, &calm[7..]);
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        c.rt.block_on(task).unwrap();
    }
    let (busy, served) = (busy.load(Ordering::Relaxed), served.load(Ordering::Relaxed));
    assert!(
        loaded <= 2 * unloaded,
        "the calm client's median latency went from {unloaded:?} to {loaded:?} under the flood ({busy} busy, \
         {served} served)"
    );
    eprintln!("calm client: {unloaded:?} unloaded, {loaded:?} under the flood ({busy} busy, {served} served)");
    assert!(busy > 0 && served > 0, "the flooder is refused and served: {busy} busy, {served} served");
}

/// SIGTERM stops a node between batches and loses nothing. The leader takes one request per batch
/// and is stalled in batch 2 (request A) when the signal comes, with request B waiting: it
/// finishes batch 2 (A gets its outcome, not an error), tells B to retry, and exits 0. B's client
/// retries until the restarted leader, consistent with its peers, enrols it. A follower stopped
/// while idle exits at once, and so does a node waiting for a peer that is gone (within 5 s; a
/// connection attempt alone lasts up to 10).
#[test]
fn a_terminated_node_finishes_its_batch_and_exits_cleanly() {
    let mut c = Cluster::new("sigterm");
    c.restart_edited(|s| s.replace("max = 32", "max = 1"), Some("after-reveal:2:stall-1500"));
    let mut gen = generator(12);
    assert_eq!(c.submit(&gen.random_template(), Kind::Enroll).unwrap().enrolled, Some(0));
    let a = c.spawn_enrol(gen.random_template());
    c.wait_stall(0, "after-reveal:2:stall-1500");
    let b = c.spawn_enrol(gen.random_template());
    std::thread::sleep(Duration::from_millis(500)); // B's shares reach the nodes (the stall lasts 1.5 s)
    c.terminate(0);
    let outcome = c.rt.block_on(a).unwrap().unwrap_or_else(|e| panic!("{e}\nlog:\n{}", c.log(0)));
    assert_eq!(outcome.enrolled, Some(1), "the running batch completes: {outcome:?}");
    let status = c.wait_exit(0, Duration::from_secs(30));
    assert!(status.success(), "{status:?}\n{}", c.log(0));
    let log = c.log(0);
    assert!(log.contains("stopped (no batch running)") && log.contains("waiting=1"), "{log}");
    c.start(0, None);
    let outcome = c.rt.block_on(b).unwrap().unwrap_or_else(|e| panic!("{e}\nlog:\n{}", c.log(0)));
    assert_eq!(outcome.enrolled, Some(2), "the waiting request, retried, is enrolled once: {outcome:?}");
    assert_eq!(c.consistent_count(), 3);
    let t0 = Instant::now();
    c.terminate(2);
    assert!(c.wait_exit(2, Duration::from_secs(30)).success(), "{}", c.log(2));
    assert!(t0.elapsed() < Duration::from_secs(5), "an idle follower stops at once: {:?}", t0.elapsed());
    // Node 1, its peers gone (node 0 ends the session when its pings to node 2 fail), is trying
    // to reconnect in attempts of up to 10 s: it stops at once too. Its first session ended when
    // node 0 stopped.
    let t0 = Instant::now();
    while c.log(1).matches("session ended").count() < 2 {
        assert!(t0.elapsed() < Duration::from_secs(30), "node 1 never noticed node 2 leave:\n{}", c.log(1));
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    c.terminate(1);
    assert!(c.wait_exit(1, Duration::from_secs(30)).success(), "{}", c.log(1));
    assert!(t0.elapsed() < Duration::from_secs(5), "a node waiting for its peers stops at once: {:?}", t0.elapsed());
}

/// `argus status` asks each node once: it shows the three and that they agree (exit 0), then,
/// with node 2 down, its peers' lines and that node 2 did not answer (exit 1), within seconds.
#[test]
fn status_command_names_a_node_that_does_not_answer() {
    let mut c = Cluster::new("status-command");
    let mut gen = generator(14);
    assert_eq!(c.submit(&gen.random_template(), Kind::Enroll).unwrap().enrolled, Some(0));
    let status = |c: &Cluster| {
        let out = Command::new(EXE).args(["status", "--client"]).arg(c.dir.join("client.toml")).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr))
    };
    let (ok, out) = status(&c);
    assert!(ok && out.contains("all three nodes agree: 1 identities, last batch 1"), "{out}");
    assert_eq!(out.matches(", serving").count(), 3, "{out}");
    c.kill(2);
    let t0 = Instant::now();
    let (ok, out) = status(&c);
    assert!(!ok, "{out}");
    assert!(out.contains("node 2: no answer") && out.contains("node(s) [2] did not answer"), "{out}");
    assert!(out.contains("node 0: 1 identities") && out.contains("node 1: 1 identities"), "{out}");
    assert!(t0.elapsed() < Duration::from_secs(10), "no retries: {:?}", t0.elapsed());
}

/// Seeding from existing shares, as README describes it: `argus share` writes one share file per
/// node (a bad template stops it with the file's name and leaves no share file or directory), `argus import`
/// loads each into its stopped node's store (refused while the node runs; a file for another
/// node's layout is refused and imports nothing; run again, it skips what is there), and the
/// restarted service knows the seeded people.
#[test]
fn seeding_by_share_and_import() {
    let mut c = Cluster::new("seed");
    assert_eq!(c.consistent_count(), 0, "the nodes are up");
    // Into a running node, an import is refused: that node would not see the identities.
    let out = Command::new(EXE)
        .args(["import", "--config", "party0.toml", "any.shares"])
        .current_dir(&c.dir)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("is the node running?"), "{said}");
    for i in 0..3 {
        c.kill(i);
    }
    let mut gen = generator(15);
    let people: Vec<Template> = (0..6).map(|_| gen.random_template()).collect();
    let files: Vec<PathBuf> = people
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let f = c.dir.join(format!("person-{k}.json"));
            t.write_file(&f).unwrap();
            f
        })
        .collect();
    let run = |args: &[&std::ffi::OsStr]| {
        let out = Command::new(EXE).args(args).current_dir(&c.dir).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr))
    };
    let shares = c.dir.join("shares");
    let share_args = |files: &[PathBuf]| -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = vec!["share".into(), "--client".into(), "client.toml".into()];
        args.extend(["--out".into(), shares.clone().into_os_string()]);
        args.extend(files.iter().map(|f| f.clone().into_os_string()));
        args
    };
    // A bad template stops the run with its name, and leaves no share file behind.
    let broken = c.dir.join("broken.json");
    std::fs::write(&broken, "{ not a template").unwrap();
    let with_broken: Vec<PathBuf> =
        files[..3].iter().cloned().chain([broken]).chain(files[3..].iter().cloned()).collect();
    let args = share_args(&with_broken);
    let (ok, out) = run(&args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
    assert!(!ok && out.contains("broken.json"), "{out}");
    assert!(!shares.exists(), "a failed run leaves nothing, not even its --out directory");
    let args = share_args(&files);
    let (ok, out) = run(&args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>());
    assert!(ok && out.contains("wrote 6 shares per node"), "{out}");
    // A node's file is checked against the importing node's configuration: a share file made for
    // codes of another length is refused and leaves the store empty.
    let other = c.dir.join("other.toml");
    std::fs::write(
        &other,
        std::fs::read_to_string(c.dir.join("party0.toml")).unwrap().replace("cols = 32", "cols = 16"),
    )
    .unwrap();
    let (ok, out) =
        run(&["import".as_ref(), "--config".as_ref(), other.as_os_str(), shares.join("party0.shares").as_os_str()]);
    assert!(!ok && out.contains("this node runs"), "{out}");
    for i in 0..3 {
        let (cfg, file) = (format!("party{i}.toml"), shares.join(format!("party{i}.shares")));
        let (ok, out) = run(&["import".as_ref(), "--config".as_ref(), cfg.as_ref(), file.as_os_str()]);
        assert!(ok && out.contains("imported 6 identities"), "node {i}: {out}");
    }
    // Run again (as after an interruption), an import skips what the store already holds.
    let file = shares.join("party1.shares");
    let (ok, out) = run(&["import".as_ref(), "--config".as_ref(), "party1.toml".as_ref(), file.as_os_str()]);
    assert!(ok && out.contains("imported 0 identities") && out.contains("(6 were there already, skipped)"), "{out}");
    for i in 0..3 {
        c.start(i, None);
    }
    assert_eq!(c.consistent_count(), 6);
    let again = gen.genuine_template(&people[4]).unwrap();
    assert!(!c.submit(&again, Kind::Enroll).unwrap().unique, "a seeded person is known");
    assert_eq!(c.submit(&gen.random_template(), Kind::Enroll).unwrap().enrolled, Some(6));
}

/// Nodes whose `[iris]` settings differ refuse to serve together: a node with another threshold
/// would compare wrongly without any error. Every node stops with a configuration error naming
/// both settings; with the setting mended (and the layout spelt out on one node: the same
/// dimensions agree with the name), the three serve, here with the log-depth adder.
#[test]
fn nodes_with_different_settings_refuse_to_serve() {
    let mut c = Cluster::new("settings");
    c.kill(2);
    let party2 = c.dir.join("party2.toml");
    let original = std::fs::read_to_string(&party2).unwrap();
    assert!(original.contains("threshold = 0.345"), "{original}");
    std::fs::write(&party2, original.replace("threshold = 0.345", "threshold = 0.3")).unwrap();
    c.start(2, None);
    for i in 0..3 {
        let status = c.wait_exit(i, Duration::from_secs(60));
        assert!(!status.success(), "node {i} stops with an error");
        let log = c.log(i);
        assert!(
            log.contains("the three nodes must use the same [iris] settings")
                && (log.contains("\"threshold\":0.3,") || log.contains("\"threshold\":0.3}")),
            "node {i}:\n{log}"
        );
    }
    // The same layout spelt out agrees with its name. All three switch to the log-depth adder
    // and comparison chunks of 1024 (`argus setup` wrote the defaults, ripple and "auto"), which
    // change rounds, not answers.
    assert!(original.contains(LAYOUT) && original.contains("adder = \"ripple\""), "{original}");
    assert!(original.contains("compare_chunk = \"auto\""), "{original}");
    std::fs::write(&party2, original.replace(LAYOUT, "layout = { cols = 32, rows = 4, parts = 2, filters = 2 }"))
        .unwrap();
    for i in 0..3 {
        rewrite(&c.dir.join(format!("party{i}.toml")), |s| {
            s.replace("adder = \"ripple\"", "adder = \"log-depth\"")
                .replace("compare_chunk = \"auto\"", "compare_chunk = 1024")
        });
        c.start(i, None);
    }
    let mut gen = generator(16);
    let person = gen.random_template();
    assert_eq!(c.submit(&person, Kind::Enroll).unwrap().enrolled, Some(0));
    let again = gen.genuine_template(&person).unwrap();
    assert!(!c.submit(&again, Kind::Enroll).unwrap().unique, "an enrolled person is known");
}

/// A rolling restart under load loses nothing: while 40 new people enrol (a request every 50 ms,
/// each retried by its client), every node in turn, the leader last, is stopped with SIGTERM and
/// started again. Every request gets its one outcome, ids 0..40 are each given once, and the
/// nodes agree.
#[test]
fn a_rolling_restart_under_load_loses_nothing() {
    let mut c = Cluster::new("rolling");
    let mut gen = generator(13);
    let people: Vec<Template> = (0..40).map(|_| gen.random_template()).collect();
    let client = c.client.clone();
    let load = c.rt.spawn(async move {
        let mut running = Vec::new();
        for p in people {
            let client = client.clone();
            running.push(tokio::spawn(async move { client.submit(&p, Kind::Enroll).await }));
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut outcomes = Vec::new();
        for r in running {
            outcomes.push(r.await.expect("the request's task"));
        }
        outcomes
    });
    for node in [1, 2, 0] {
        std::thread::sleep(Duration::from_millis(300));
        c.terminate(node);
        let status = c.wait_exit(node, Duration::from_secs(30));
        assert!(status.success(), "node {node}: {status:?}\n{}", c.log(node));
        c.start(node, None);
    }
    let mut ids: Vec<u64> =
        c.rt.block_on(load)
            .unwrap()
            .into_iter()
            .map(|o| {
                let o = o.unwrap_or_else(|e| {
                    let logs: Vec<String> = (0..3).map(|i| format!("node {i} log:\n{}", c.log(i))).collect();
                    panic!("{e}\n{}", logs.join("\n"))
                });
                assert!(o.unique, "{o:?}");
                o.enrolled.expect("a unique request is enrolled")
            })
            .collect();
    ids.sort();
    assert_eq!(ids, (0..40).collect::<Vec<u64>>());
    assert_eq!(c.consistent_count(), 40);
    for node in 0..3 {
        assert!(c.log(node).contains("stopped (no batch running)"), "node {node}:\n{}", c.log(node));
    }
}

/// Node `i`'s SQLite store files (the database and its WAL side files).
fn store_files(c: &Cluster, i: usize) -> Vec<PathBuf> {
    ["", "-wal", "-shm"].iter().map(|x| c.dir.join(format!("party{i}.db{x}"))).collect()
}

/// Share recovery. A node whose store is gone is refused (it is behind and lacks the shares
/// its peers enrolled) with a pointer to `--recover`; started with `--recover` it rebuilds its
/// shares and log from the other two and serves: re-captures of people enrolled before the loss
/// are refused (so its recovered shares work in the protocol), a deleted identity stays deleted,
/// new people enrol. Then a node restored from an older backup, which still holds an identity
/// deleted since, is rebuilt the same way, its recovery interrupted once and run again; and
/// `--recover` with nothing to recover is harmless.
#[test]
fn a_node_that_lost_its_store_is_rebuilt_by_its_peers() {
    let mut c = Cluster::new("recover");
    let mut gen = generator(21);
    let people: Vec<Template> = (0..5).map(|_| gen.random_template()).collect();
    for (i, p) in people.iter().enumerate() {
        assert_eq!(c.submit(p, Kind::Enroll).unwrap().enrolled, Some(i as u64));
    }
    // An older backup of node 2: stopped cleanly, its files copied.
    c.terminate(2);
    assert!(c.wait_exit(2, Duration::from_secs(30)).success());
    let backup = c.dir.join("backup2");
    std::fs::create_dir_all(&backup).unwrap();
    for f in store_files(&c, 2).iter().filter(|f| f.exists()) {
        std::fs::copy(f, backup.join(f.file_name().unwrap())).unwrap();
    }
    c.start(2, None);
    assert!(c.rt.block_on(c.operator.delete(1)).unwrap());
    assert_eq!(c.submit(&gen.random_template(), Kind::Enroll).unwrap().enrolled, Some(5));
    let want = c.consistent_count();
    assert_eq!(want, 5);

    // Node 1 loses its store.
    c.terminate(1);
    assert!(c.wait_exit(1, Duration::from_secs(30)).success());
    for f in store_files(&c, 1) {
        let _ = std::fs::remove_file(f);
    }
    c.start(1, None);
    assert!(!c.wait_exit(1, Duration::from_secs(60)).success(), "an empty store is refused");
    assert!(c.log(1).contains("rebuild it with `argus node --recover`"), "{}", c.log(1));
    c.start_with(1, None, &["--recover"]);
    assert_eq!(c.serving_count(), want);
    assert!(c.log(1).contains("recovered"), "{}", c.log(1));
    assert!(c.log(0).contains("helped a node recover") && c.log(2).contains("helped a node recover"));
    for i in 0..3 {
        assert!(c.log(i).contains("audit: shares consistent"), "node {i}:\n{}", c.log(i));
    }
    for (i, p) in people.iter().enumerate() {
        let unique = c.submit(&gen.genuine_template(p).unwrap(), Kind::Check).unwrap().unique;
        assert_eq!(unique, i == 1, "person {i} (identity 1 was deleted)");
    }

    // Node 2 restored from the older backup: it still holds identity 1 and lacks identity 5.
    c.terminate(2);
    assert!(c.wait_exit(2, Duration::from_secs(30)).success());
    for f in store_files(&c, 2) {
        let _ = std::fs::remove_file(&f);
        let saved = backup.join(f.file_name().unwrap());
        if saved.exists() {
            std::fs::copy(saved, f).unwrap();
        }
    }
    // A recovery interrupted after the shares, before the log, is simply run again.
    c.start_with(2, Some("recovered-page:1"), &["--recover"]);
    assert!(!c.wait_exit(2, Duration::from_secs(60)).success(), "aborted at the failpoint");
    assert!(c.log(2).contains("failpoint recovered-page:1: aborting"), "{}", c.log(2));
    c.start_with(2, None, &["--recover"]);
    assert_eq!(c.serving_count(), want);
    // The empty store got all five identities; the backup only those from its next id (5) on,
    // and the second run after the interruption those from 6 on: none.
    let (helped, rebuilt) = (c.log(0), c.log(2));
    assert!(helped.contains("identities=5") && helped.contains("identities=0"), "{helped}");
    assert!(rebuilt.contains("from_id=5") && rebuilt.contains("from_id=6"), "{rebuilt}");
    assert!(c.submit(&gen.genuine_template(&people[1]).unwrap(), Kind::Check).unwrap().unique);
    assert!(!c.submit(&gen.genuine_template(&people[4]).unwrap(), Kind::Check).unwrap().unique);
    assert_eq!(c.submit(&gen.random_template(), Kind::Enroll).unwrap().enrolled, Some(6));

    // Nothing to recover: the flag is harmless.
    c.terminate(0);
    assert!(c.wait_exit(0, Duration::from_secs(30)).success());
    c.start_with(0, None, &["--recover"]);
    assert_eq!(c.serving_count(), want + 1);
    assert!(c.log(0).contains("nothing to recover"), "{}", c.log(0));
}

/// The audit (`argus node --audit`): consistent stores pass; a share swapped for another
/// identity's on one node's disk (valid bytes, wrong values) makes all three refuse to serve,
/// saying why; restoring it lets them serve again.
#[test]
fn an_audit_finds_a_corrupted_share() {
    let mut c = Cluster::new("audit");
    let mut gen = generator(31);
    let people: Vec<Template> = (0..3).map(|_| gen.random_template()).collect();
    for (i, p) in people.iter().enumerate() {
        assert_eq!(c.submit(p, Kind::Enroll).unwrap().enrolled, Some(i as u64));
    }
    c.terminate(2);
    assert!(c.wait_exit(2, Duration::from_secs(30)).success());
    c.start_with(2, None, &["--audit"]);
    assert_eq!(c.serving_count(), 3);
    assert!(c.log(0).contains("audit: shares consistent"), "{}", c.log(0));

    let db = c.dir.join("party2.db");
    let swap = |a: i64, b: i64| {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "UPDATE identities SET share = (SELECT share FROM identities WHERE id = ?2) WHERE id = ?1",
            [a, b],
        )
        .unwrap();
    };
    let original: Vec<u8> = {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row("SELECT share FROM identities WHERE id = 0", [], |r| r.get(0)).unwrap()
    };
    c.terminate(2);
    assert!(c.wait_exit(2, Duration::from_secs(30)).success());
    swap(0, 1);
    c.start_with(2, None, &["--audit"]);
    for i in 0..3 {
        assert!(!c.wait_exit(i, Duration::from_secs(60)).success(), "node {i} refuses to serve");
        assert!(c.log(i).contains("shares inconsistent"), "node {i}:\n{}", c.log(i));
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE identities SET share = ?1 WHERE id = 0", [&original]).unwrap();
    drop(conn);
    c.start(0, None);
    c.start(1, None);
    c.start_with(2, None, &["--audit"]);
    assert_eq!(c.serving_count(), 3);
    assert!(!c.submit(&gen.genuine_template(&people[0]).unwrap(), Kind::Check).unwrap().unique);
}

/// Node `node` aborts at `point` of batch 2; it is restarted, catches up, and everything agrees.
fn crash_and_recover(node: usize, point: &str) {
    let mut c = Cluster::new(&format!("crash-{node}-{point}"));
    c.kill(node);
    c.start(node, Some(&format!("{point}:2")));
    let mut gen = generator(7);
    let (a, b) = (gen.random_template(), gen.random_template());
    assert_eq!(c.submit(&a, Kind::Enroll).unwrap().enrolled, Some(0));
    // Batch 2 crashes node `node`; the client keeps retrying with the same request id.
    let client = c.client.clone();
    let b2 = b.clone();
    let pending = c.rt.spawn(async move { client.submit(&b2, Kind::Enroll).await });
    c.wait_exit(node, Duration::from_secs(60));
    c.start(node, None);
    let o = c.rt.block_on(pending).unwrap().unwrap_or_else(|e| panic!("{e}\nlog:\n{}", c.log(node)));
    assert!(o.unique && o.enrolled == Some(1), "{o:?}");
    assert_eq!(c.consistent_count(), 2);
    // The recovered node holds a working share of b: a re-capture of b is refused, a new person enrolled.
    assert!(!c.submit(&gen.genuine_template(&b).unwrap(), Kind::Enroll).unwrap().unique);
    assert!(!c.submit(&gen.genuine_template(&a).unwrap(), Kind::Check).unwrap().unique);
    assert_eq!(c.submit(&gen.random_template(), Kind::Enroll).unwrap().enrolled, Some(2));
    assert_eq!(c.consistent_count(), 3);
}

#[test]
fn follower_crash_before_commit() {
    crash_and_recover(2, "before-commit");
}

#[test]
fn leader_crash_after_reveal() {
    crash_and_recover(0, "after-reveal");
}

#[test]
fn follower_crash_after_commit() {
    crash_and_recover(1, "after-commit");
}

/// The service on PostgreSQL (one database per node, as a production deployment): enrolment, a
/// refused re-capture, a deletion, a node restarted from its store into its peers' state, and a
/// node whose database was dropped rebuilt by its peers.
/// Skipped without `ARGUS_TEST_POSTGRES_URL` (an admin URL whose role may create databases);
/// `.ci/run` starts a server and sets `ARGUS_REQUIRE_POSTGRES=1`, which makes a skip a failure.
#[test]
fn service_on_postgres() {
    let admin = match std::env::var("ARGUS_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => {
            assert_ne!(std::env::var("ARGUS_REQUIRE_POSTGRES").as_deref(), Ok("1"), "no PostgreSQL to test against");
            println!("skipped: set ARGUS_TEST_POSTGRES_URL");
            return;
        }
    };
    assert!(!admin.contains('?'), "the test appends database names to the URL");
    let db = format!("argus_service_{}_", std::process::id());
    // Dropped at the end, also when the test fails.
    struct Databases(String, String);
    impl Drop for Databases {
        fn drop(&mut self) {
            if let Ok(mut pg) = postgres::Client::connect(&self.0, postgres::NoTls) {
                for i in 0..3 {
                    let _ = pg.batch_execute(&format!("DROP DATABASE IF EXISTS {}{i} WITH (FORCE)", self.1));
                }
            }
        }
    }
    let _cleanup = Databases(admin.clone(), db.clone());
    let mut pg = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    for i in 0..3 {
        pg.batch_execute(&format!("DROP DATABASE IF EXISTS {db}{i} WITH (FORCE)")).unwrap();
        pg.batch_execute(&format!("CREATE DATABASE {db}{i}")).unwrap();
    }
    let base = &admin[..admin.rfind('/').expect("a database in the URL")];
    // Over TLS where the server has a certificate (`.ci/run`'s does: ARGUS_TEST_POSTGRES_CA).
    let tls = std::env::var("ARGUS_TEST_POSTGRES_CA").ok().filter(|ca| !ca.is_empty());
    let prefix = match &tls {
        Some(ca) => format!("{base}/{db}?sslmode=verify-full&sslrootcert={ca}"),
        None => format!("{base}/{db}"),
    };
    {
        let mut c = Cluster::with_store("postgres", None, false, Some(&prefix));
        let mut gen = generator(11);
        let people: Vec<Template> = (0..3).map(|_| gen.random_template()).collect();
        for (i, p) in people.iter().enumerate() {
            assert_eq!(c.submit(p, Kind::Enroll).unwrap().enrolled, Some(i as u64));
        }
        assert!(!c.submit(&gen.genuine_template(&people[1]).unwrap(), Kind::Enroll).unwrap().unique);
        assert!(c.rt.block_on(c.operator.delete(2)).unwrap());
        // Killed while idle: the client's next request to it must not wait on the dead connection.
        c.kill(2);
        c.start(2, None);
        assert_eq!(c.consistent_count(), 2);
        assert!(!c.submit(&gen.genuine_template(&people[0]).unwrap(), Kind::Check).unwrap().unique);
        assert!(c.submit(&gen.genuine_template(&people[2]).unwrap(), Kind::Check).unwrap().unique);
        if tls.is_some() {
            for i in 0..3 {
                assert!(c.log(i).contains(&format!("{db}{i} (TLS)")), "node {i}:\n{}", c.log(i));
            }
        }
        // Node 1's database lost: an empty one in its place, rebuilt by its peers.
        c.terminate(1);
        assert!(c.wait_exit(1, Duration::from_secs(30)).success());
        pg.batch_execute(&format!("DROP DATABASE {db}1 WITH (FORCE)")).unwrap();
        pg.batch_execute(&format!("CREATE DATABASE {db}1")).unwrap();
        c.start_with(1, None, &["--recover"]);
        assert_eq!(c.serving_count(), 2);
        assert!(c.log(1).contains("recovered") && c.log(1).contains("audit: shares consistent"), "{}", c.log(1));
        assert!(!c.submit(&gen.genuine_template(&people[1]).unwrap(), Kind::Check).unwrap().unique);
    }
}
