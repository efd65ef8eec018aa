//! `argus gmw`: AES-128 from the Bristol file by three local parties gives FIPS-197's answer and
//! agrees with the plaintext evaluation; a malformed circuit or input is refused with exit status
//! 2 and its line before any party starts.

use std::path::Path;
use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_argus");

fn aes() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/circuits/aes_128.txt").to_str().unwrap().to_string()
}

fn gmw(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(EXE).arg("gmw").args(args).output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    (code, String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn aes_by_three_parties_gives_the_fips_197_answer() {
    let key = "000102030405060708090a0b0c0d0e0f";
    let pt = "00112233445566778899aabbccddeeff";
    for backend in ["tcp", "memory"] {
        let (code, out, err) =
            gmw(&["--circuit", &aes(), "--parties", "3", "--backend", backend, "--input", key, "--input", pt]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.trim(), "output 0: 69c4e0d86a7b0430d8cdb78070b4c55a");
        assert!(err.contains("equal the plaintext evaluation"), "{err}");
    }
}

#[test]
fn bad_circuits_and_inputs_exit_2_before_any_party_starts() {
    let dir = std::env::temp_dir().join(format!("argus-gmw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "2 5\n2 1 1\n1 1\n\n2 1 0 1 2 XOR\n2 1 2 1 4 NAND\n").unwrap();
    let (code, _, err) = gmw(&["--circuit", bad.to_str().unwrap(), "--input", "1", "--input", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("line 6: unknown gate `NAND`"), "{err}");
    std::fs::write(&bad, "2 5\n2 1 1\n1 1\n\n2 1 0 3 2 XOR\n2 1 2 1 3 AND\n").unwrap();
    let (code, _, err) = gmw(&["--circuit", bad.to_str().unwrap(), "--input", "1", "--input", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("line 5: wire 3 is read before"), "{err}");
    let (code, _, err) = gmw(&["--circuit", &aes(), "--input", "00"]);
    assert_eq!(code, 2);
    assert!(err.contains("takes 2 input value(s)"), "{err}");
    let (code, _, err) = gmw(&["--circuit", &aes(), "--input", "0g", "--input", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a hex digit"), "{err}");
    let (code, _, err) = gmw(&["--circuit", &aes(), "--input", &"f".repeat(33), "--input", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("more than 128 bits"), "{err}");
    let (code, _, err) = gmw(&["--circuit", dir.join("absent.txt").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("reading"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
