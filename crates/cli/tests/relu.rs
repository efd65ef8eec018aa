//! `argus relu`: a file of fixed-point numbers through each protocol and setting, threads and
//! processes over mutual TLS, against the twin; bad input refused before any party starts.

use std::process::{Command, Output};

const EXE: &str = env!("CARGO_BIN_EXE_argus");

/// A file of numbers with the edges of 40-bit mantissas at precision 16.
fn numbers(name: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("argus-relu-{name}-{}.txt", std::process::id()));
    std::fs::write(&path, "# edges\n0\n1.5\n-1.5\n\n8388607.99998\n-8388608\n0.00001\n-0.00001\n-3\n").unwrap();
    path
}

fn run(args: &[&str], input: &std::path::Path) -> Output {
    Command::new(EXE).arg("relu").args(args).arg("--input").arg(input).output().unwrap()
}

#[test]
fn every_protocol_agrees_with_the_twin() {
    let input = numbers("all");
    let relu = run(&["--backend", "memory"], &input);
    assert!(relu.status.success(), "{}", String::from_utf8_lossy(&relu.stderr));
    assert_eq!(String::from_utf8_lossy(&relu.stdout), "0\n1.5\n0\n8388607.999984741\n0\n0.0000152587890625\n0\n0\n");
    for args in [
        ["--op", "ltz", "--protocol", "cons-ltz", "--circuit", "and-xor"],
        ["--op", "ltz", "--protocol", "lsss-ltz", "--circuit", "and-not"],
    ] {
        let out = run(&[&args[..], &["--backend", "memory"]].concat(), &input);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "0\n0\n1\n0\n1\n0\n1\n1\n", "{args:?}");
    }
    let out = run(&["--op", "lteqz", "--protocol", "rabbit-slack"], &input);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n0\n1\n0\n1\n0\n1\n1\n");
    std::fs::remove_file(&input).ok();
}

#[test]
fn the_ft_settings_agree_with_the_twin() {
    let input = numbers("ft");
    for setting in ["ft", "ft-og"] {
        let relu = run(&["--setting", setting, "--backend", "memory"], &input);
        assert!(relu.status.success(), "{setting}: {}", String::from_utf8_lossy(&relu.stderr));
        assert_eq!(
            String::from_utf8_lossy(&relu.stdout),
            "0\n1.5\n0\n8388607.999984741\n0\n0.0000152587890625\n0\n0\n",
            "{setting}"
        );
        for protocol in ["cons-ltz", "lsss-ltz", "rabbit-conv"] {
            let out = run(&["--setting", setting, "--op", "ltz", "--protocol", protocol], &input);
            assert!(out.status.success(), "{setting} {protocol}: {}", String::from_utf8_lossy(&out.stderr));
            assert_eq!(String::from_utf8_lossy(&out.stdout), "0\n0\n1\n0\n1\n0\n1\n1\n", "{setting} {protocol}");
        }
    }
    std::fs::remove_file(&input).ok();
}

#[test]
fn bad_input_is_refused_before_any_party_starts() {
    let input = numbers("bad");
    std::fs::write(&input, "1\n2\n9000000\n").unwrap();
    let out = run(&[], &input);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 3"), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(&input, "1\nabc\n").unwrap();
    let out = run(&[], &input);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2"));
    let out = run(&["--setting", "spdz"], &input);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ft-og"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(&["--bits", "100"], &input);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_file(&input).ok();
}

/// `argus relu` as `parties` processes over mutual TLS (`args` for all, `party0` for party 0
/// with the input); returns their outputs after removing the certificates and the input.
fn over_tls(name: &str, parties: usize, args: &[&str], party0: &[&str]) -> Vec<Output> {
    let input = numbers(name);
    let dir = std::env::temp_dir().join(format!("argus-relu-pki-{name}-{}", std::process::id()));
    let pki = Command::new(EXE).args(["pki", "--parties", &parties.to_string(), "--out"]).arg(&dir).output().unwrap();
    assert!(pki.status.success(), "{}", String::from_utf8_lossy(&pki.stderr));
    let ports = argus_node::deploy::free_loopback_ports(parties).unwrap();
    let addrs = ports.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(",");
    let spawned: Vec<_> = (0..parties)
        .map(|id| {
            let mut c = Command::new(EXE);
            c.args(["relu", "--timeout", "60", "--party", &id.to_string(), "--addrs", &addrs, "--pki"])
                .arg(&dir)
                .args(args);
            if id == 0 {
                c.args(party0).arg("--input").arg(&input);
            }
            c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
        })
        .collect();
    let outs: Vec<Output> = spawned.into_iter().map(|p| p.wait_with_output().unwrap()).collect();
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_file(&input).ok();
    for out in &outs {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(String::from_utf8_lossy(&outs[0].stderr).contains("on 8 of 8 values"));
    outs
}

#[test]
fn three_processes_over_mutual_tls() {
    // party 0's choices hold for all: the others run with the defaults' flags
    let outs = over_tls("tls", 3, &[], &["--op", "lteqz", "--protocol", "rabbit-slack", "--circuit", "and-xor"]);
    assert_eq!(String::from_utf8_lossy(&outs[0].stdout), "1\n0\n1\n0\n1\n0\n1\n1\n");
}

/// FT(OG) as two processes over mutual TLS.
#[test]
fn two_ft_processes_over_mutual_tls() {
    let outs = over_tls("ft-tls", 2, &["--setting", "ft-og"], &["--op", "ltz"]);
    assert_eq!(String::from_utf8_lossy(&outs[0].stdout), "0\n0\n1\n0\n1\n0\n1\n1\n");
}
