//! `argus bench iris` on a tiny end to end: the kernel is planned first (its candidates printed),
//! and every record names the kernel that ran and the host (`kernel`, `cpu`, `isa`); a forced
//! path is taken as given, and a path this CPU cannot run or a malformed one is refused.

use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_argus");

fn bench(kernel: &str, json: &std::path::Path) -> std::process::Output {
    Command::new(EXE)
        .args(["bench", "iris", "--no-dot", "--no-compare", "--schemes", "mpclift-gr16", "--db", "12"])
        .args(["--batch", "2", "--reps", "1", "--backend", "memory", "--kernel", kernel, "--json"])
        .arg(json)
        .output()
        .unwrap()
}

#[test]
fn the_end_to_end_names_its_planned_kernel_and_host() {
    let json = std::env::temp_dir().join(format!("argus-bench-iris-{}.json", std::process::id()));
    let out = bench("auto", &json);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("kernel plan for 200x64x31 at 2 queries") && stderr.contains("fastest candidates"),
        "{stderr}"
    );
    let records: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(records.len(), 2, "the check and its validity step");
    let host = argus_math::kernels::host();
    for r in &records {
        let kernel = r["kernel"].as_str().unwrap();
        assert!(kernel.parse::<argus_math::kernels::CorrelationPath>().is_ok(), "{r}");
        assert_eq!((r["cpu"].as_str().unwrap(), r["isa"].as_str().unwrap()), (host.cpu.as_str(), host.isa.name()));
    }
    // A path forced: the records name it.
    let forced = argus_math::kernels::correlation_candidates(
        argus_math::kernels::Correlation { positions: 200, width: 64, lags: 31 },
        2,
    )
    .last()
    .copied()
    .unwrap()
    .to_string();
    let out = bench(&forced, &json);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let records: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(records.iter().all(|r| r["kernel"] == forced.as_str()), "{records:?}");
    std::fs::remove_file(&json).ok();
    for bad in ["fastest", "packed-sse-l1-b8"] {
        let out = bench(bad, &json);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a correlation path"));
    }
    if argus_math::kernels::detected() < argus_math::kernels::Isa::Amx {
        let out = bench("rows-amx-l0-b256", &json);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run here"));
    }
}
