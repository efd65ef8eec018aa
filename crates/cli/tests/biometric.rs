//! `argus biometric` as a user meets it: a small FingerCode batch over TLS on loopback whose
//! secure decisions equal the twin's (exit 0), Eigenfaces with a dealer in memory, a threshold
//! no distance can exceed refused before any party starts (exit 2), and two processes, one per
//! party, over mutual TLS.

use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_argus");

#[test]
fn a_small_batch_agrees_with_the_twin() {
    let out = Command::new(EXE).args(["biometric", "fingercode", "--queries", "6", "--refs", "9"]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("the secure decisions equal the twin's on 54 of 54 pairs"), "{stdout}");
    assert!(stderr.contains("party 1: offline"), "{stderr}");
    let out = Command::new(EXE)
        .args(["biometric", "eigenfaces", "--queries", "2", "--refs", "3", "--backend", "memory", "--dealer", "7"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn bad_input_is_refused_before_any_party_starts() {
    for args in [
        &["biometric", "facenet", "--threshold", "99999999999"][..],
        &["biometric", "facenet", "--queries", "0"],
        &["biometric", "facenet", "--queries", "100000", "--refs", "100000"],
        &["biometric", "facenet", "--backend", "pigeon"],
    ] {
        let out = Command::new(EXE).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!String::from_utf8_lossy(&out.stderr).contains("offline"), "{args:?}");
    }
}

#[test]
fn two_processes_over_mutual_tls() {
    let dir = std::env::temp_dir().join(format!("argus-biometric-pki-{}", std::process::id()));
    let pki = Command::new(EXE).args(["pki", "--parties", "2", "--out"]).arg(&dir).output().unwrap();
    assert!(pki.status.success(), "{}", String::from_utf8_lossy(&pki.stderr));
    let ports = argus_node::deploy::free_loopback_ports(2).unwrap();
    let addrs = ports.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(",");
    let spawn = |id: &str| {
        Command::new(EXE)
            .args(["biometric", "facenet", "--queries", "4", "--refs", "7", "--timeout", "60", "--party", id])
            .args(["--addrs", &addrs, "--pki"])
            .arg(&dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("0"), spawn("1"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    std::fs::remove_dir_all(&dir).ok();
    for out in [a, b] {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains("equal the twin's on 28 of 28 pairs"));
    }
}
