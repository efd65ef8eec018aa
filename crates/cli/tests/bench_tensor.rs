//! `argus bench tensor` on tiny sizes: every record carries the fields the issue names, each
//! product having been checked against the plaintext twin inside the run; a bad network is refused.

use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_argus");

#[test]
fn tiny_tensor_bench_writes_its_records() {
    let json = std::env::temp_dir().join(format!("argus-bench-tensor-{}.json", std::process::id()));
    let out = Command::new(EXE)
        .args(["bench", "tensor", "--triples", "4", "--matmul", "8", "--networks", "lan", "--reps", "1"])
        .args(["--apps", "fingercode,facenet", "--batches", "3x5", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let records: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).ok();
    // one triple from each VOLE, two products (32- and 128-bit), then per app two online records
    // and two offline (distances, with the threshold)
    assert_eq!(records.len(), 4 + 2 * 4);
    for r in &records {
        for field in
            ["suite", "op", "phase", "m", "n", "modulus_bits", "network", "seconds", "bytes_per_party", "rounds"]
        {
            assert!(r.get(field).is_some(), "{field} missing in {r}");
        }
        assert_eq!(r["suite"], "tensor");
        assert!(r["seconds"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(records[0]["op"], "tensor_triple");
    assert_eq!(records[0]["phase"], "offline");
    assert_eq!((&records[0]["vole"], &records[1]["vole"]), (&"gilboa".into(), &"silent".into()));
    assert_eq!(records[2]["op"], "matmul");
    assert_eq!(records[2]["rounds"], 1);
    assert_eq!(records[2]["vole"], "-");
    let apps: Vec<_> = records[4..]
        .iter()
        .map(|r| (r["op"].as_str().unwrap(), r["phase"].as_str().unwrap(), r["step"].as_str().unwrap()))
        .collect();
    assert_eq!(
        apps[..4],
        [
            ("fingercode", "online", "distance"),
            ("fingercode", "online", "identify"),
            ("fingercode", "offline", "distance"),
            ("fingercode", "offline", "identify")
        ]
    );
    assert_eq!(records[4]["rounds"], 1 + 6, "one product and the comparison's layers (26 bits)");
    assert_eq!(records[6]["vole"], "gilboa", "3 × 5 is too small for the silent VOLE");
    assert_eq!(records[8]["op"], "facenet");
    assert_eq!(records[8]["modulus_bits"], 32);
    let bad = Command::new(EXE).args(["bench", "tensor", "--apps", "iris"]).output().unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown app"));
    let bad = Command::new(EXE).args(["bench", "tensor", "--batches", "3by5"]).output().unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--batches"));
    let bad = Command::new(EXE).args(["bench", "tensor", "--networks", "moon"]).output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown network"));
}
