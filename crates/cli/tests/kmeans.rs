//! `argus kmeans`: private k-means of `data/iris.csv` on three local parties (tcp and memory, both
//! variants) and on three `--party` processes agrees with the plaintext reference; every bad input
//! is refused with exit status 2, naming the file, line and column, before any party starts.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const EXE: &str = env!("CARGO_BIN_EXE_argus");

fn iris() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/iris.csv").to_str().unwrap().to_string()
}

/// A fresh, absent temporary path.
fn scratch(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("argus-kmeans-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    let _ = std::fs::remove_file(&p);
    p
}

/// Runs `argus kmeans args`: (exit code, stdout, stderr).
fn kmeans(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(EXE).arg("kmeans").args(args).output().unwrap();
    text(out)
}

fn text(out: Output) -> (i32, String, String) {
    let code = out.status.code().unwrap_or(-1);
    (code, String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The rows of the centroid table: the lines after its title, up to the blank line.
fn centroid_rows(stdout: &str) -> Vec<&str> {
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with("centroids")).skip(2);
    let rows: Vec<&str> = lines.by_ref().take_while(|l| !l.trim().is_empty()).collect();
    rows
}

/// A successful run that agrees with the reference, with `k` centroids of 4 columns.
fn agrees(args: &[&str], k: usize) -> (String, String) {
    let (code, out, err) = kmeans(args);
    assert_eq!(code, 0, "{args:?}: {out}\n{err}");
    assert!(out.contains("agrees with the plaintext reference"), "{out}");
    let rows = centroid_rows(&out);
    assert_eq!(rows.len(), k, "{out}");
    for (j, row) in rows.iter().enumerate() {
        assert!(row.trim_start().starts_with(&j.to_string()), "{row}");
    }
    assert!(out.contains("party 2 sent") || out.contains("party 0 sent"), "{out}");
    assert!(!err.contains("panicked"), "{err}");
    (out, err)
}

#[test]
fn iris_with_three_clusters_over_tcp_agrees_and_writes_the_assignment() {
    let assignment = scratch("assignment.csv");
    let (out, err) = agrees(&["--data", &iris(), "--k", "3", "--out", assignment.to_str().unwrap()], 3);
    assert!(out.contains("150 rows × 4 columns") && out.contains("scale 1"), "{out}");
    assert!(out.contains("sepal_length") && out.contains("petal_width"), "the header's names: {out}");
    assert!(out.contains("converged"), "{out}");
    // One progress line per iteration, with what the paper's variant reveals.
    let progress: Vec<&str> = err.lines().filter(|l| l.starts_with("iteration ")).collect();
    assert!(!progress.is_empty(), "{err}");
    assert!(progress.iter().all(|l| l.contains("sizes")), "{err}");
    assert!(out.contains(&format!("{} iterations", progress.len())), "{out}\n{err}");
    let csv = std::fs::read_to_string(&assignment).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 151);
    assert_eq!(lines[0], "row,cluster");
    assert!(lines[1..].iter().enumerate().all(|(i, l)| l.starts_with(&format!("{i},"))));
    std::fs::remove_file(&assignment).ok();
}

#[test]
fn hidden_assignment_reveals_only_whether_points_moved() {
    let (out, err) = agrees(&["--data", &iris(), "--k", "3", "--hide-assignment", "--iterations", "2"], 3);
    assert!(out.contains("hidden assignment") && out.contains("2 iterations"), "{out}");
    let progress: Vec<&str> = err.lines().filter(|l| l.starts_with("iteration ")).collect();
    assert_eq!(progress.len(), 2, "{err}");
    assert!(progress.iter().all(|l| !l.contains("sizes") && l.contains("moved")), "{err}");
    assert!(!out.contains("size "), "no sizes column: {out}");
}

#[test]
fn the_memory_backend_agrees_too() {
    let (out, _) = agrees(&["--data", &iris(), "--k", "3", "--backend", "memory"], 3);
    assert!(out.contains("memory"), "{out}");
}

/// Refused with exit status 2 and `want` in the message, nothing on stdout and no party started.
fn refused(args: &[&str], want: &str) -> String {
    let (code, out, err) = kmeans(args);
    assert_eq!(code, 2, "{args:?}: {out}\n{err}");
    assert!(err.contains(want), "{args:?}: wanted {want:?} in: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let started = |l: &str| l.starts_with("iteration ") || l.contains(": iteration ") || l.contains("connecting");
    assert!(!err.lines().any(started), "a party started: {err}");
    assert!(out.is_empty(), "{args:?}: {out}");
    err
}

#[test]
fn bad_input_is_refused_before_any_party_starts() {
    let dir = scratch("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let nonnumeric = file("nonnumeric.csv", "a,b\n1,2\n3,x7\n");
    refused(&["--data", &nonnumeric, "--k", "1"], &format!("{nonnumeric}:3:2: expected a number, found \"x7\""));
    let ragged = file("ragged.csv", "1,2\n3,4\n5\n");
    refused(&["--data", &ragged, "--k", "1"], &format!("{ragged}:3: 1 cells, expected 2"));
    let empty = file("empty.csv", "");
    refused(&["--data", &empty, "--k", "1"], &format!("{empty}: no data rows"));
    let header_only = file("header.csv", "x,y\n");
    refused(&["--data", &header_only, "--k", "1"], "no data rows");
    let missing = dir.join("missing.csv");
    refused(&["--data", missing.to_str().unwrap(), "--k", "1"], missing.to_str().unwrap());
    refused(&["--data", &iris(), "--k", "0"], "k must be at least 1");
    refused(&["--data", &iris(), "--k", "151"], "k = 151 is more than the 150 points");
    let overflow = file("overflow.csv", "1,2\n3,99999999999999999999\n");
    refused(&["--data", &overflow, "--k", "1"], &format!("{overflow}:2:2: the value times 10^scale"));
    let wide = file("wide.csv", "1,2\n3,10000000000000\n");
    let msg = refused(&["--data", &wide, "--k", "1"], "squared distances need");
    assert!(msg.contains(&wide) && msg.contains("line 2, column 2"), "{msg}");
    assert!(!msg.contains("10000000000000"), "no data value in the message: {msg}");
    // Flags.
    let out = dir.join("out.csv");
    refused(
        &["--data", &iris(), "--k", "3", "--hide-assignment", "--out", out.to_str().unwrap()],
        "--hide-assignment keeps secret",
    );
    assert!(!out.exists());
    refused(&["--data", &iris(), "--k", "3", "--out", dir.join("no/such/dir.csv").to_str().unwrap()], "does not exist");
    refused(&["--k", "3"], "--data FILE.csv is required");
    refused(&["--data", &iris()], "--k is required");
    refused(&["--data", &iris(), "--k", "3", "--iterations", "0"], "must be at least 1");
    refused(&["--data", &iris(), "--k", "3", "--backend", "carrier-pigeon"], "carrier-pigeon");
    refused(&["--data", &iris(), "--k", "3", "--party", "0"], "needs --addrs");
    let addrs = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3";
    refused(&["--data", &iris(), "--k", "3", "--addrs", addrs], "--party");
    refused(&["--party", "3", "--addrs", addrs, "--pki", "/nonexistent"], "--party 3 is out of range");
    refused(&["--party", "1", "--addrs", "127.0.0.1:1,127.0.0.1:2", "--pki", "/nonexistent"], "give the 3 parties");
    refused(&["--party", "1", "--addrs", addrs, "--pki", "/nonexistent", "--k", "3"], "--k is for party 0");
    refused(&["--party", "0", "--addrs", addrs, "--pki", "/nonexistent", "--data", &ragged, "--k", "1"], "1 cells");
    refused(
        &["--party", "0", "--addrs", addrs, "--pki", "/nonexistent", "--data", &iris(), "--k", "3"],
        "/nonexistent",
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn three_party_processes_agree_with_the_reference() {
    let pki = scratch("pki");
    let (ok, msg) = {
        let out = Command::new(EXE).args(["pki", "--out", pki.to_str().unwrap()]).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    assert!(ok, "{msg}");
    let ports = argus_node::deploy::free_loopback_ports(3).unwrap();
    let addrs = ports.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(",");
    let data = iris();
    let kids: Vec<Child> = (0..3)
        .map(|i| {
            let mut cmd = Command::new(EXE);
            cmd.args(["kmeans", "--party", &i.to_string(), "--addrs", &addrs, "--pki", pki.to_str().unwrap()]);
            cmd.args(["--timeout", "60"]);
            if i == 0 {
                cmd.args(["--data", &data, "--k", "3"]);
            }
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    let outs: Vec<(i32, String, String)> = kids.into_iter().map(|k| text(k.wait_with_output().unwrap())).collect();
    for (i, (code, out, err)) in outs.iter().enumerate() {
        assert_eq!(*code, 0, "party {i}: {out}\n{err}");
    }
    let (_, out0, err0) = &outs[0];
    assert!(out0.contains("agrees with the plaintext reference"), "{out0}");
    assert_eq!(centroid_rows(out0).len(), 3, "{out0}");
    assert!(err0.lines().any(|l| l.starts_with("party 0: iteration 1:")), "{err0}");
    for (i, (_, out, _)) in outs.iter().enumerate().skip(1) {
        assert!(out.starts_with(&format!("party {i}: k-means of 150 × 4 points into 3 clusters")), "{out}");
        assert!(!out.contains("centroids"), "{out}");
    }
    std::fs::remove_dir_all(&pki).ok();
}
