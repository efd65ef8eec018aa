//! Three `argus party` processes run a protocol over TCP with mutual TLS; one is killed mid-way
//! and the other two must fail with a typed error well within their timeout, never hang.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The two tests take turns: a party of one that dialled a port of the other's (each set is free
/// when drawn, not reserved) would meet a stranger's certificate and quit — a CI run saw a party
/// exit before it connected.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Three loopback addresses free now, from outside the range the OS gives outgoing connections
/// (the other test's parties connect at the same time; a port from `bind(0)` could be theirs).
fn party_addrs() -> String {
    let ports = argus_node::deploy::free_loopback_ports(3).unwrap();
    ports.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(",")
}

fn wait_line(child: &mut Child, want: &str) {
    let out = child.stdout.as_mut().unwrap();
    let mut line = String::new();
    let mut reader = BufReader::new(out);
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            let mut err = String::new();
            child.stderr.as_mut().unwrap().read_to_string(&mut err).unwrap();
            panic!("party exited before printing {want:?}; its stderr: {err}");
        }
        if line.contains(want) {
            return;
        }
    }
}

#[test]
fn killing_a_party_makes_the_others_fail_within_the_timeout() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let exe = env!("CARGO_BIN_EXE_argus");
    let dir = std::env::temp_dir().join(format!("argus-kill-{}", std::process::id()));
    let st = Command::new(exe).args(["pki", "--out", dir.to_str().unwrap()]).status().unwrap();
    assert!(st.success());
    let addrs = party_addrs();
    let timeout_s = 3.0;
    let mut kids: Vec<Child> = (0..3)
        .map(|i| {
            Command::new(exe)
                .args(["party", "--id", &i.to_string(), "--addrs", &addrs, "--pki", dir.to_str().unwrap()])
                .args([
                    "--timeout",
                    &timeout_s.to_string(),
                    "--iterations",
                    "100000",
                    "--batch",
                    "1000",
                    "--pause-ms",
                    "2",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for k in kids.iter_mut() {
        wait_line(k, "connected");
    }
    std::thread::sleep(Duration::from_millis(300));
    kids[2].kill().unwrap();
    kids[2].wait().unwrap();
    let killed_at = Instant::now();
    for (i, k) in kids.iter_mut().take(2).enumerate() {
        let out = loop {
            if let Some(status) = k.try_wait().unwrap() {
                break status;
            }
            assert!(
                killed_at.elapsed() < Duration::from_secs_f64(timeout_s + 5.0),
                "party {i} hangs after its peer died"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(!out.success(), "party {i} must fail when a peer dies");
        let mut err = String::new();
        k.stderr.as_mut().unwrap().read_to_string(&mut err).unwrap();
        assert!(err.contains("error:") && err.contains("party"), "party {i} stderr: {err}");
    }
    assert!(killed_at.elapsed() < Duration::from_secs_f64(timeout_s + 2.0));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_party_with_a_foreign_certificate_is_refused() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let exe = env!("CARGO_BIN_EXE_argus");
    let base = std::env::temp_dir().join(format!("argus-badcert-{}", std::process::id()));
    let (good, bad) = (base.join("good"), base.join("bad"));
    for d in [&good, &bad] {
        assert!(Command::new(exe).args(["pki", "--out", d.to_str().unwrap()]).status().unwrap().success());
    }
    let addrs = party_addrs();
    let kids: Vec<Child> = (0..3)
        .map(|i| {
            let pki = if i == 1 { &bad } else { &good };
            Command::new(exe)
                .args(["party", "--id", &i.to_string(), "--addrs", &addrs, "--pki", pki.to_str().unwrap()])
                .args(["--timeout", "5", "--iterations", "1"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = kids.into_iter().map(|k| k.wait_with_output().unwrap()).collect();
    assert!(outs.iter().all(|o| !o.status.success()), "no party may run with an impostor");
    let all_err: String = outs.iter().map(|o| String::from_utf8_lossy(&o.stderr).into_owned()).collect();
    assert!(all_err.contains("TLS") || all_err.contains("certificate"), "stderr: {all_err}");
    std::fs::remove_dir_all(&base).ok();
}
