//! `argus bench relu` on tiny batches: every record carries the fields the issue names, each
//! run having been checked against the twin inside the bench; a bad op is refused at once.

use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_argus");

/// `argus bench relu ARGS --json FILE`'s records (the run must succeed).
fn bench(name: &str, args: &[&str]) -> Vec<serde_json::Value> {
    let json = std::env::temp_dir().join(format!("argus-bench-relu-{name}-{}.json", std::process::id()));
    let out =
        Command::new(EXE).args(["bench", "relu", "--reps", "1"]).args(args).arg("--json").arg(&json).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let records = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).ok();
    records
}

#[test]
fn tiny_relu_bench_writes_its_records() {
    let records = bench(
        "shamir",
        &[
            "--latencies",
            "0,1",
            "--batches",
            "1,5",
            "--settings",
            "shamir",
            "--ops",
            "cons_ltz,lsss_ltz,rabbit_slack,req_list,relu",
        ],
    );
    // per latency and batch: cons_ltz, rabbit_slack, relu and lsss_ltz in two circuit forms, req_list in one
    assert_eq!(records.len(), 2 * 2 * (4 * 2 + 1));
    for r in &records {
        for field in [
            "suite",
            "op",
            "setting",
            "circuit",
            "latency_ms",
            "batch",
            "seconds",
            "ops_per_sec",
            "rounds",
            "bytes_per_party",
        ] {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
        assert_eq!(r["suite"], "relu");
        assert_eq!(r["setting"], "shamir");
    }
    let cons = records.iter().find(|r| r["op"] == "cons_ltz" && r["circuit"] == "and_not" && r["batch"] == 1).unwrap();
    assert_eq!(cons["rounds"], 1 + 6 + 1, "an opening, log2(63) AND layers, the conversion");
    let lsss = records.iter().find(|r| r["op"] == "lsss_ltz" && r["circuit"] == "-").unwrap();
    assert_eq!(lsss["rounds"], 1 + 6);
    let ripple = records.iter().find(|r| r["op"] == "lsss_ltz" && r["circuit"] == "and_xor").unwrap();
    assert_eq!(ripple["rounds"], 63, "Table 4's unoptimised form: one round per product");
    let slow = records.iter().find(|r| r["op"] == "cons_ltz" && r["latency_ms"] == 1 && r["batch"] == 1).unwrap();
    assert!(slow["seconds"].as_f64().unwrap() >= 8e-3, "8 rounds of 1 ms: {slow}");
    let bad = Command::new(EXE).args(["bench", "relu", "--ops", "sort"]).output().unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown op"));
}

/// The FT rows: cons_ltz garbled online and ahead, four rounds on the wire (the opening, the
/// garbled circuit, the conversion, the MAC check), the settings named in the records.
#[test]
fn tiny_ft_bench_writes_its_records() {
    let records = bench(
        "ft",
        &["--latencies", "0", "--batches", "1,5", "--settings", "ft,ft_og", "--ops", "cons_ltz,rabbit_conv,lsss_ltz"],
    );
    // per batch: ft cons_ltz ×2, rabbit_conv, lsss_ltz ×2; ft_og cons_ltz ×2, rabbit_conv
    assert_eq!(records.len(), 2 * (5 + 3));
    for setting in ["ft", "ft_og"] {
        let cons =
            records.iter().find(|r| r["op"] == "cons_ltz" && r["setting"] == setting && r["batch"] == 1).unwrap();
        assert_eq!(cons["rounds"], 4, "{setting}: {cons}");
    }
    let lsss = records.iter().find(|r| r["op"] == "lsss_ltz" && r["circuit"] == "-").unwrap();
    assert_eq!(lsss["rounds"], 1 + 6 + 1, "the opening, the products, the MAC check");
}
