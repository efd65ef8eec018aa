//! `argus iris gen` writes templates the plaintext matcher classifies correctly, and refuses to
//! overwrite existing files.

use std::process::Command;

fn argus(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_argus")).args(args).output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn gen_then_match() {
    let dir = std::env::temp_dir().join(format!("argus-iris-gen-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let (ok, msg) =
        argus(&["iris", "gen", "--out", d, "--count", "3", "--genuine", "2", "--impostors", "1", "--seed", "9"]);
    assert!(ok, "{msg}");
    let f = |name: &str| dir.join(name).to_str().unwrap().to_string();
    for i in 0..2 {
        let (ok, msg) =
            argus(&["iris", "match", &f(&format!("genuine-{i:05}.json")), &f(&format!("identity-{i:05}.json"))]);
        assert!(ok && msg.trim() == "match", "{msg}");
    }
    let (ok, msg) = argus(&["iris", "match", &f("impostor-00000.json"), &f("identity-00000.json")]);
    assert!(ok && msg.trim() == "no match", "{msg}");
    let before = std::fs::read(dir.join("identity-00000.json")).unwrap();
    let (ok, msg) =
        argus(&["iris", "gen", "--out", d, "--count", "3", "--genuine", "0", "--impostors", "0", "--seed", "10"]);
    assert!(!ok && msg.contains("already exists"), "{msg}");
    assert_eq!(std::fs::read(dir.join("identity-00000.json")).unwrap(), before, "nothing overwritten");
    std::fs::remove_dir_all(&dir).ok();
}
