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

/// The README's `argus iris gen --out t --count 3`: the genuine re-captures default to at most
/// `--count` (5, or fewer identities); asking for more than `--count` is refused, writing nothing.
#[test]
fn genuine_recaptures_default_to_at_most_the_count() {
    let dir = std::env::temp_dir().join(format!("argus-iris-gen-default-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let (ok, msg) = argus(&["iris", "gen", "--out", d, "--count", "3", "--impostors", "0"]);
    assert!(ok && msg.contains("3 genuine"), "{msg}");
    assert!(dir.join("genuine-00002.json").exists() && !dir.join("genuine-00003.json").exists());
    let other = dir.join("more");
    let (ok, msg) = argus(&["iris", "gen", "--out", other.to_str().unwrap(), "--count", "3", "--genuine", "4"]);
    assert!(!ok && msg.contains("--genuine 4 exceeds --count 3"), "{msg}");
    assert!(!other.exists(), "nothing written");
    std::fs::remove_dir_all(&dir).ok();
}

/// `iris match` of two layouts names which file has which; a missing file is named once; an
/// absurd `--count` is refused before anything is written.
#[test]
fn match_and_gen_refuse_bad_input_clearly() {
    let dir = std::env::temp_dir().join(format!("argus-iris-match-{}", std::process::id()));
    let (dep, oi) = (dir.join("dep"), dir.join("oi"));
    let (ok, msg) = argus(&["iris", "gen", "--out", dep.to_str().unwrap(), "--count", "1", "--impostors", "0"]);
    assert!(ok, "{msg}");
    let (ok, msg) = argus(&[
        "iris",
        "gen",
        "--out",
        oi.to_str().unwrap(),
        "--count",
        "1",
        "--impostors",
        "0",
        "--layout",
        "open-iris",
    ]);
    assert!(ok, "{msg}");
    let (q, e) = (oi.join("identity-00000.json"), dep.join("identity-00000.json"));
    let (ok, msg) = argus(&["iris", "match", q.to_str().unwrap(), e.to_str().unwrap()]);
    let want = format!("{} is 16x256x2x2, {} is 16x200x2x2", q.display(), e.display());
    assert!(!ok && msg.contains(&want), "{msg}");
    let missing = dir.join("missing.json");
    let (ok, msg) = argus(&["iris", "match", missing.to_str().unwrap(), e.to_str().unwrap()]);
    assert!(!ok && msg.matches("missing.json").count() == 1, "{msg}");
    let huge = dir.join("huge");
    let (ok, msg) = argus(&["iris", "gen", "--out", huge.to_str().unwrap(), "--count", "4611686018427387904"]);
    assert!(!ok && msg.contains("more than 1000000 files"), "{msg}");
    assert!(!huge.exists(), "nothing written");
    std::fs::remove_dir_all(&dir).ok();
}
