//! Three `argus party` processes run a protocol over TCP with mutual TLS; one is killed mid-way
//! and the other two must fail with a typed error well within their timeout, never hang.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_line(child: &mut Child, want: &str) {
    let out = child.stdout.as_mut().unwrap();
    let mut line = String::new();
    let mut reader = BufReader::new(out);
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "party exited before printing {want:?}");
        if line.contains(want) {
            return;
        }
    }
}

#[test]
fn killing_a_party_makes_the_others_fail_within_the_timeout() {
    let exe = env!("CARGO_BIN_EXE_argus");
    let dir = std::env::temp_dir().join(format!("argus-kill-{}", std::process::id()));
    let st = Command::new(exe).args(["pki", "--out", dir.to_str().unwrap()]).status().unwrap();
    assert!(st.success());
    let addrs: Vec<String> = (0..3).map(|_| format!("127.0.0.1:{}", free_port())).collect();
    let timeout_s = 3.0;
    let mut kids: Vec<Child> = (0..3)
        .map(|i| {
            Command::new(exe)
                .args(["party", "--id", &i.to_string(), "--addrs", &addrs.join(","), "--pki", dir.to_str().unwrap()])
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
        std::io::Read::read_to_string(k.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert!(err.contains("error:") && err.contains("party"), "party {i} stderr: {err}");
    }
    assert!(killed_at.elapsed() < Duration::from_secs_f64(timeout_s + 2.0));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_party_with_a_foreign_certificate_is_refused() {
    let exe = env!("CARGO_BIN_EXE_argus");
    let base = std::env::temp_dir().join(format!("argus-badcert-{}", std::process::id()));
    let (good, bad) = (base.join("good"), base.join("bad"));
    for d in [&good, &bad] {
        assert!(Command::new(exe).args(["pki", "--out", d.to_str().unwrap()]).status().unwrap().success());
    }
    let addrs: Vec<String> = (0..3).map(|_| format!("127.0.0.1:{}", free_port())).collect();
    let kids: Vec<Child> = (0..3)
        .map(|i| {
            let pki = if i == 1 { &bad } else { &good };
            Command::new(exe)
                .args(["party", "--id", &i.to_string(), "--addrs", &addrs.join(","), "--pki", pki.to_str().unwrap()])
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
