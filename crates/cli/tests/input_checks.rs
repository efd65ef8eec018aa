//! Bad input to `argus setup`, `share`, `import` and the template readers is refused with a
//! message that names what is wrong, and changes nothing on disk: no deployment file, share file,
//! directory or database is created or modified. No node runs here.

use std::path::{Path, PathBuf};
use std::process::Command;

use argus_iris::{Generator, IrisGeometry};

const EXE: &str = env!("CARGO_BIN_EXE_argus");
const LAYOUT: &str = "layout = { rows = 4, cols = 32, filters = 2, parts = 2 }";

/// Runs `argus` in `dir`: (success, stdout + stderr).
fn argus(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(EXE).args(args).current_dir(dir).output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// A fresh scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("argus-input-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// Every path under the directory, relative, sorted.
    fn listing(&self) -> Vec<String> {
        fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                out.push(p.strip_prefix(base).unwrap().display().to_string());
                if p.is_dir() {
                    walk(base, &p, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.0, &self.0, &mut out);
        out.sort();
        out
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `argus setup --dir dep` in `s` on the small test layout; `dep/t<k>.json`: `n` templates in it.
fn deployment(s: &Scratch, n: usize) -> Vec<String> {
    let (ok, out) = argus(&s.0, &["setup", "--dir", "dep"]);
    assert!(ok, "{out}");
    for f in ["party0.toml", "party1.toml", "party2.toml", "client.toml", "operator.toml"] {
        let p = s.0.join("dep").join(f);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains("layout = \"deployed\""), "{text}");
        std::fs::write(&p, text.replace("layout = \"deployed\"", LAYOUT)).unwrap();
    }
    let mut gen = Generator::new(IrisGeometry::new(4, 32, 2, 2).unwrap(), 3).unwrap();
    (0..n)
        .map(|k| {
            let f = format!("dep/t{k}.json");
            gen.random_template().write_file(s.0.join(&f)).unwrap();
            f
        })
        .collect()
}

/// `argus import` refuses another node's share file, a missing file, a directory and a file of
/// the older format (no party index), each before the store is opened: no database appears.
/// The node's own file then imports.
#[test]
fn import_refuses_the_wrong_file_and_creates_no_store() {
    let s = Scratch::new("import");
    let templates = deployment(&s, 2);
    let mut args = vec!["share", "--client", "dep/client.toml", "--out", "dep/sh"];
    args.extend(templates.iter().map(String::as_str));
    let (ok, out) = argus(&s.0, &args);
    assert!(ok && out.contains("wrote 2 shares per node"), "{out}");
    let db = s.0.join("dep/party0.db");
    let import = |file: &str| argus(&s.0, &["import", "--config", "dep/party0.toml", file]);

    let (ok, out) = import("dep/sh/party1.shares");
    assert!(
        !ok && out.contains(
            "dep/sh/party1.shares holds node 1's shares; this is node 0 (party0.toml): \
             import node 0's file (party0.shares) here"
        ),
        "{out}"
    );
    assert!(!db.exists(), "nothing written");

    let (ok, out) = import("dep/missing.shares");
    assert!(!ok && out.contains("dep/missing.shares"), "{out}");
    assert!(!db.exists(), "no empty database for a missing file");

    let (ok, out) = import("dep/sh");
    let want = "dep/sh is a directory, not a share file: give this node's file in it, dep/sh/party0.shares";
    assert!(!ok && out.contains(want), "{out}");
    assert!(!db.exists());

    // A version 1 file: as version 2 without the party byte.
    let v2 = std::fs::read(s.0.join("dep/sh/party0.shares")).unwrap();
    assert_eq!(&v2[..12], b"ARGUSSHR\x02\x00\x00\x00");
    let v1: Vec<u8> = [&b"ARGUSSHR\x01\x00\x00\x00"[..], &v2[13..]].concat();
    std::fs::write(s.0.join("dep/old.shares"), v1).unwrap();
    let (ok, out) = import("dep/old.shares");
    assert!(
        !ok && out.contains("dep/old.shares: written by an older release") && out.contains("re-run argus share"),
        "{out}"
    );
    assert!(!db.exists());

    let (ok, out) = import("dep/sh/party0.shares");
    assert!(ok && out.contains("imported 2 identities"), "{out}");
    assert!(db.exists());
}

/// `argus share` checks each template's layout against the client configuration's (both ways),
/// wants at least one template, refuses ids past the stores' largest, and a failed run leaves no
/// directory or file behind, even one that failed after writing had begun.
#[test]
fn share_refuses_bad_input_and_leaves_nothing() {
    let s = Scratch::new("share");
    let templates = deployment(&s, 2);
    let before = s.listing();
    let share = |out: &str, extra: &[&str], files: &[&str]| {
        let mut args = vec!["share", "--client", "dep/client.toml", "--out", out];
        args.extend(extra);
        args.extend(files);
        argus(&s.0, &args)
    };

    // A template of the deployed layout for a client on the small one.
    let deployed = "dep/deployed.json";
    Generator::new(IrisGeometry::DEPLOYED, 4).unwrap().random_template().write_file(s.0.join(deployed)).unwrap();
    let before_deployed = s.listing();
    let (ok, out) = share("sh", &[], &[deployed]);
    assert!(
        !ok && out.contains(
            "dep/deployed.json: invalid input: the template's layout 16x200x2x2 does not match the service's 4x32x2x2"
        ),
        "{out}"
    );
    assert_eq!(s.listing(), before_deployed, "nothing written");

    // After a good template, in a directory three levels down: everything the run made goes.
    let (ok, out) = share("a/b/sh", &[], &[&templates[0], deployed]);
    assert!(!ok && out.contains("does not match the service's"), "{out}");
    assert_eq!(s.listing(), before_deployed, "no directory or partial file left");
    std::fs::remove_file(s.0.join(deployed)).unwrap();

    // And the other way: the small layout's template for a client on the deployed layout.
    let client = std::fs::read_to_string(s.0.join("dep/client.toml")).unwrap();
    std::fs::write(s.0.join("dep/client.toml"), client.replace(LAYOUT, "layout = \"deployed\"")).unwrap();
    let (ok, out) = share("sh", &[], &[&templates[0]]);
    assert!(!ok && out.contains("the template's layout 4x32x2x2 does not match the service's 16x200x2x2"), "{out}");
    std::fs::write(s.0.join("dep/client.toml"), client).unwrap();
    assert_eq!(s.listing(), before);

    let (ok, out) = share("sh", &[], &[]);
    assert!(!ok && out.contains("<TEMPLATES>"), "TEMPLATES are required: {out}");
    let max = u64::MAX.to_string();
    let (ok, out) = share("sh", &["--first-id", &max], &[&templates[0], &templates[1]]);
    assert!(
        !ok && out.contains(&format!(
            "--first-id {max} with 2 templates gives ids past 9223372036854775807, the largest a store holds: \
             give --first-id 9223372036854775806 or less"
        )),
        "{out}"
    );
    let (ok, out) = share("sh", &["--first-id", "9223372036854775807"], &[&templates[0], &templates[1]]);
    assert!(!ok && out.contains("give --first-id 9223372036854775806 or less"), "{out}");
    assert_eq!(s.listing(), before, "nothing written");

    // The largest first id that fits works; existing share files are never overwritten.
    let (ok, out) = share("sh", &["--first-id", "9223372036854775806"], &[&templates[0], &templates[1]]);
    assert!(ok && out.contains("wrote 2 shares per node"), "{out}");
    let written = s.listing();
    let (ok, out) = share("sh", &[], &[&templates[0]]);
    assert!(!ok && out.contains("sh/party0.shares already exists"), "{out}");
    assert_eq!(s.listing(), written);
}

/// `argus setup` refuses a directory holding any of what it writes (here only `pki/`, or only
/// `client.toml`), naming it and changing nothing, and a `--store` that is neither `sqlite` nor
/// a PostgreSQL URL with a database name.
#[test]
fn setup_overwrites_nothing_and_takes_only_store_urls() {
    let s = Scratch::new("setup");
    std::fs::create_dir_all(s.0.join("s5/pki")).unwrap();
    std::fs::write(s.0.join("s5/pki/ca.pem"), "the old CA").unwrap();
    let before = s.listing();
    let (ok, out) = argus(&s.0, &["setup", "--dir", "s5"]);
    assert!(!ok && out.contains("s5/pki already exists") && out.contains("choose another --dir"), "{out}");
    assert_eq!(std::fs::read_to_string(s.0.join("s5/pki/ca.pem")).unwrap(), "the old CA");
    assert_eq!(s.listing(), before, "nothing written");
    std::fs::remove_dir_all(s.0.join("s5/pki")).unwrap();
    std::fs::write(s.0.join("s5/client.toml"), "mine").unwrap();
    let (ok, out) = argus(&s.0, &["setup", "--dir", "s5"]);
    assert!(!ok && out.contains("s5/client.toml already exists"), "{out}");
    assert_eq!(s.listing(), ["s5", "s5/client.toml"]);

    for bad in ["foo", "", "sqlite:x.db", "mysql://h/db", "postgres://argus@127.0.0.1", "postgresql://h/?x=1"] {
        let (ok, out) = argus(&s.0, &["setup", "--dir", "s2", "--store", bad]);
        assert!(!ok && out.contains(&format!("--store {bad:?}")), "{bad}: {out}");
        assert!(out.contains("give `sqlite`") && out.contains("postgres://argus@127.0.0.1/iris"), "{bad}: {out}");
        assert!(!s.0.join("s2").exists(), "{bad}: nothing written");
    }
    // A server not up yet: the databases are not created (a warning), the deployment is written.
    let (ok, out) = argus(&s.0, &["setup", "--dir", "s2", "--store", "postgresql://argus@h/iris?sslmode=disable"]);
    assert!(ok && out.contains("warning: store iris0"), "{out}");
    let party1 = std::fs::read_to_string(s.0.join("s2/party1.toml")).unwrap();
    assert!(party1.contains("store = \"postgresql://argus@h/iris1?sslmode=disable\""), "{party1}");
}

/// A template that does not read is named once, with what is wrong in it: an open-iris eye (a
/// value that is not a boolean, a missing file) and an Argus JSON template.
#[test]
fn template_errors_name_the_file_once() {
    let s = Scratch::new("templates");
    deployment(&s, 0);
    let t = Generator::new(IrisGeometry::OPEN_IRIS, 5).unwrap().random_template();
    t.write_open_iris_files(s.0.join("l.json"), s.0.join("r.json")).unwrap();
    let right = std::fs::read_to_string(s.0.join("r.json")).unwrap();
    // iris_codes[0][0][0][0], the first value, becomes a number.
    let at = right.find(['t', 'f']).unwrap();
    let end = at + if right[at..].starts_with("true") { 4 } else { 5 };
    std::fs::write(s.0.join("r.json"), format!("{}1{}", &right[..at], &right[end..])).unwrap();
    let enroll = |args: &[&str]| {
        let mut all = vec!["enroll", "--client", "dep/client.toml"];
        all.extend(args);
        argus(&s.0, &all)
    };
    let (ok, out) = enroll(&["--open-iris", "l.json", "r.json"]);
    assert!(!ok && out.contains("r.json: bad iris_codes[0][0][0][0]: expected a boolean"), "{out}");
    assert_eq!(out.matches("r.json").count(), 1, "{out}");
    let (ok, out) = enroll(&["--open-iris", "l.json", "gone.json"]);
    assert!(!ok && out.contains("gone.json: "), "{out}");
    assert_eq!(out.matches("gone.json").count(), 1, "{out}");
    let (ok, out) = enroll(&["gone.json"]);
    assert!(!ok && out.matches("gone.json").count() == 1, "{out}");
    std::fs::write(s.0.join("broken.json"), "{ not json").unwrap();
    let (ok, out) = enroll(&["broken.json"]);
    assert!(!ok && out.contains("broken.json: malformed JSON") && out.matches("broken.json").count() == 1, "{out}");
}
