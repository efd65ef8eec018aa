//! Bad command-line input gets a clear error, never a panic, and changes nothing on disk:
//! `argus load` and `argus demo` rates, `argus party` timeouts and ids, `argus pki` names, counts
//! and existing files. And `argus node` says, by default, that it is serving.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_argus");

/// Runs `argus args`: (success, stdout + stderr).
fn argus(args: &[&str]) -> (bool, String) {
    let out = Command::new(EXE).args(args).output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// Fails with `want` in the output, and without a panic.
fn refused(args: &[&str], want: &str) -> String {
    let (ok, msg) = argus(args);
    assert!(!ok, "{args:?} succeeded: {msg}");
    assert!(!msg.contains("panicked"), "{args:?} panicked: {msg}");
    assert!(msg.contains(want), "{args:?}: wanted {want:?} in: {msg}");
    msg
}

/// A fresh, absent temporary path.
fn scratch(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("argus-cli-input-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn load_refuses_a_rate_or_duration_it_cannot_run_naming_its_own_flags() {
    let c = "/nonexistent/client.toml";
    for qps in ["inf", "NaN", "0", "-1"] {
        let msg = refused(&["load", "--client", c, "--qps", qps, "--seconds", "1"], "--qps must be a finite number");
        assert!(!msg.contains("load-qps") && !msg.contains("18446744073709551615"), "{msg}");
    }
    refused(&["load", "--client", c, "--qps", "1", "--seconds", "0"], "--seconds must be at least 1");
    refused(&["load", "--client", c, "--qps", "1e9", "--seconds", "3600"], "at most 10000000");
    refused(&["load", "--client", c, "--qps", "0.1", "--seconds", "1"], "makes no query");
}

#[test]
fn demo_refuses_a_bad_load_rate_at_once_naming_its_flag() {
    let dir = scratch("demo");
    let msg = refused(&["demo", "--dir", s(&dir), "--load-qps", "0", "--load-seconds", "1"], "--load-qps must be");
    assert!(!msg.contains("argus demo: 3 nodes"), "checked before the demo starts: {msg}");
    assert!(!dir.exists(), "nothing written");
}

#[test]
fn party_refuses_a_timeout_that_is_not_a_positive_finite_number() {
    let base = ["party", "--id", "0", "--addrs", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", "--pki", "/nonexistent"];
    for t in ["-1", "NaN", "inf", "0", "1e30"] {
        let timeout = format!("--timeout={t}");
        let args: Vec<&str> = base.iter().copied().chain([timeout.as_str()]).collect();
        refused(&args, "not a finite number of seconds above 0");
    }
    let args: Vec<&str> = base.iter().copied().chain(["--timeout", "-1"]).collect();
    refused(&args, "not a finite number of seconds above 0");
}

#[test]
fn party_checks_its_addresses_and_id_before_reading_any_pem_file() {
    let pki = "/nonexistent/pki";
    refused(&["party", "--id", "0", "--pki", pki], "--addrs");
    let three = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3";
    let msg =
        refused(&["party", "--id", "3", "--addrs", three, "--pki", pki], "must be below the number of parties (3)");
    assert!(!msg.contains("PEM"), "{msg}");
    let msg =
        refused(&["party", "--id", "0", "--addrs", "127.0.0.1:1,127.0.0.1:2", "--pki", pki], "give the 3 parties");
    assert!(!msg.contains("PEM"), "{msg}");
}

#[test]
fn pki_refuses_bad_names_and_counts_writing_nothing() {
    let dir = scratch("pki-bad");
    for (args, want) in [
        (vec!["--clients", "ü"], "client name \"ü\" contains 'ü'"),
        (vec!["--clients", "demo,../escaped"], "client name \"../escaped\" contains '/'"),
        (vec!["--clients", ""], "client name \"\" is empty"),
        (vec!["--clients", "a..b"], "valid DNS name"),
        (vec!["--parties", "0"], "--parties must be at least 2"),
        (vec!["--parties", "1"], "--parties must be at least 2"),
        (vec!["--parties", "65"], "at most 64, got 65"),
        (vec!["--clients", "demo,ops,demo"], "client name \"demo\" is given twice"),
    ] {
        let all: Vec<&str> = ["pki", "--out", s(&dir)].into_iter().chain(args).collect();
        refused(&all, want);
        assert!(!dir.exists(), "{all:?} wrote something");
        assert!(!dir.parent().unwrap().join("escaped.pem").exists());
    }
}

#[test]
fn pki_keeps_existing_files_unless_forced() {
    let dir = scratch("pki-exists");
    let (ok, msg) = argus(&["pki", "--out", s(&dir), "--clients", "demo,ops_1"]);
    assert!(ok, "{msg}");
    let ca = std::fs::read(dir.join("ca.pem")).unwrap();
    let key = std::fs::read(dir.join("party-0.key")).unwrap();
    // A second run over the same directory, or one that only adds a client, overwrites nothing.
    refused(&["pki", "--out", s(&dir)], &format!("{} already exists", s(&dir.join("ca.pem"))));
    let msg = refused(&["pki", "--out", s(&dir), "--clients", "new"], "--force");
    assert!(msg.contains("nothing was written"), "{msg}");
    assert!(!dir.join("client-new.pem").exists());
    assert_eq!(std::fs::read(dir.join("ca.pem")).unwrap(), ca);
    assert_eq!(std::fs::read(dir.join("party-0.key")).unwrap(), key);
    let (ok, msg) = argus(&["pki", "--out", s(&dir), "--force"]);
    assert!(ok, "{msg}");
    assert_ne!(std::fs::read(dir.join("ca.pem")).unwrap(), ca, "--force overwrote");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn node_says_it_is_serving_by_default_and_rust_log_overrides() {
    let (ok, help) = argus(&["node", "--help"]);
    assert!(ok && help.contains("RUST_LOG"), "{help}");
    let dir = scratch("node-log");
    let (ok, msg) = argus(&["setup", "--dir", s(&dir)]);
    assert!(ok, "{msg}");
    for i in 0..3 {
        // Small codes: the nodes come up at once.
        let f = dir.join(format!("party{i}.toml"));
        let toml = std::fs::read_to_string(&f).unwrap();
        let small = toml.replace("layout = \"deployed\"", "layout = { rows = 4, cols = 32, filters = 2, parts = 2 }");
        std::fs::write(&f, small).unwrap();
    }
    // Nodes 0 and 1 on the default filter; node 2 told to log warnings only.
    let mut nodes: Vec<_> = (0..3)
        .map(|i| {
            let mut cmd = Command::new(EXE);
            cmd.args(["node", "--config", s(&dir.join(format!("party{i}.toml")))]);
            match i {
                2 => cmd.env("RUST_LOG", "warn"),
                _ => cmd.env_remove("RUST_LOG"),
            };
            cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    let (tx, rx) = std::sync::mpsc::channel();
    let readers: Vec<_> = nodes
        .iter_mut()
        .enumerate()
        .map(|(i, n)| {
            let (err, tx) = (n.stderr.take().unwrap(), tx.clone());
            std::thread::spawn(move || {
                let mut all = String::new();
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    let _ = tx.send((i, line.clone()));
                    all += &line;
                    all.push('\n');
                }
                all
            })
        })
        .collect();
    let mut serving = [false; 2];
    while serving != [true; 2] {
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok((i, line)) if i < 2 && line.contains("serving") => serving[i] = true,
            Ok(_) => {}
            Err(e) => panic!("nodes 0 and 1 did not log \"serving\" ({serving:?}): {e}"),
        }
    }
    for n in &mut nodes {
        let _ = n.kill();
        let _ = n.wait();
    }
    let logs: Vec<String> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    assert!(logs[0].contains("starting"), "{}", logs[0]);
    assert!(!logs[2].contains("serving"), "RUST_LOG=warn is obeyed: {}", logs[2]);
    std::fs::remove_dir_all(&dir).ok();
}

/// `argus setup --layout open-iris` writes the layout, with the default scheme and with public
/// masks, which now run 16384-bit codes too.
#[test]
fn setup_writes_the_open_iris_layout() {
    let dir = std::env::temp_dir().join(format!("argus-setup-layout-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_argus"))
        .args(["setup", "--dir", d, "--layout", "open-iris"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cfg = std::fs::read_to_string(dir.join("party0.toml")).unwrap();
    assert!(cfg.contains("layout = \"open-iris\"") && cfg.contains("scheme = \"mpclift-GR16-shamir\""), "{cfg}");
    std::fs::remove_dir_all(&dir).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_argus"))
        .args(["setup", "--dir", d, "--layout", "open-iris", "--scheme", "plain-mask-Z16-rep3"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}
