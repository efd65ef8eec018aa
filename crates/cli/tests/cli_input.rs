//! Bad command-line input gets a clear error, never a panic, and changes nothing on disk:
//! `argus load` and `argus demo` rates.

use std::path::{Path, PathBuf};
use std::process::Command;

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
