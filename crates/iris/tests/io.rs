//! File formats: round trips, exact layouts, and bad input as typed errors.

use argus_iris::*;
use argus_math::BitVec;
use base64::{engine::general_purpose::STANDARD, Engine};
use proptest::prelude::*;
use serde_json::{json, Value};

fn template(g: IrisGeometry, seed: u64) -> Template {
    Generator::new(g, seed).unwrap().random_template()
}

fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("argus-iris-test-{}-{name}", std::process::id()))
}

#[test]
fn argus_json_round_trip() {
    for g in [IrisGeometry::DEPLOYED, IrisGeometry::OPEN_IRIS, IrisGeometry::new(3, 5, 1, 1).unwrap()] {
        let t = template(g, 1);
        let s = t.to_json().unwrap();
        assert_eq!(Template::from_json(&s).unwrap(), t);
    }
    let t = template(IrisGeometry::DEPLOYED, 2);
    let p = tmp("t.json");
    t.write_file(&p).unwrap();
    assert_eq!(Template::read_file(&p).unwrap(), t);
    std::fs::remove_file(&p).unwrap();
    assert!(matches!(Template::read_file(&p), Err(IrisError::Io { kind: std::io::ErrorKind::NotFound, .. })));
}

/// File errors name the file once; an empty file says so; a write leaves no temporary file.
#[test]
fn file_errors_name_the_file_once() {
    let missing = tmp("missing.json");
    let e = Template::read_file(&missing).unwrap_err().to_string();
    assert_eq!(e.matches("missing.json").count(), 1, "{e}");
    assert!(e.starts_with("reading ") && e.contains("No such file"), "{e}");
    let empty = tmp("empty.json");
    std::fs::write(&empty, " \n").unwrap();
    let e = Template::read_file(&empty).unwrap_err().to_string();
    assert_eq!(e, format!("{}: empty document: no JSON in it", empty.display()));
    let bad = tmp("bad.json");
    std::fs::write(&bad, "{\"format\": ").unwrap();
    let e = Template::read_file(&bad).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}: malformed JSON", bad.display())), "{e}");
    let (l, r) = (tmp("oi-left.json"), tmp("oi-right.json"));
    template(IrisGeometry::OPEN_IRIS, 3).write_open_iris_files(&l, &r).unwrap();
    // open-iris's own serialize() output of the wrong size: refused, naming the file and the shape.
    std::fs::write(&r, r#"{"iris_codes": "AAAA", "mask_codes": "AAAA"}"#).unwrap();
    let e = Template::read_open_iris_files(&l, &r).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}: ", r.display())) && e.contains("(16, 256, 2, 2)"), "{e}");
    let dir = tmp("written");
    std::fs::create_dir_all(&dir).unwrap();
    template(IrisGeometry::DEPLOYED, 4).write_file(dir.join("t.json")).unwrap();
    let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["t.json"]);
    for p in [empty, bad, l, r] {
        std::fs::remove_file(p).unwrap();
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn argus_json_layout() {
    // Bits 0 and 9 of the left code set: bytes 0x01, 0x02, 0, ...
    let g = IrisGeometry::DEPLOYED;
    let mut code = BitVec::zeros(g.bits());
    code.set(0, true);
    code.set(9, true);
    let left = IrisCode::unmasked(g, code).unwrap();
    let t = Template::new(left.clone(), left).unwrap();
    let v: Value = serde_json::from_str(&t.to_json().unwrap()).unwrap();
    assert_eq!(v["format"], "argus-iris");
    assert_eq!(v["version"], 1);
    assert_eq!(v["geometry"], json!({"rows": 16, "cols": 200, "filters": 2, "parts": 2}));
    let bytes = STANDARD.decode(v["left"]["code"].as_str().unwrap()).unwrap();
    assert_eq!(bytes.len(), 1600);
    assert_eq!(&bytes[..3], &[0x01, 0x02, 0x00]);
    let mask = STANDARD.decode(v["right"]["mask"].as_str().unwrap()).unwrap();
    assert!(mask.iter().all(|&b| b == 0xff));
}

fn doc(g: Value, code: &str, mask: &str) -> String {
    json!({"format": "argus-iris", "version": 1, "geometry": g,
           "left": {"code": code, "mask": mask}, "right": {"code": code, "mask": mask}})
    .to_string()
}

#[test]
fn argus_json_bad_input() {
    let g6 = json!({"rows": 1, "cols": 3, "filters": 1, "parts": 2}); // 6 bits: 1 byte
    let ok = STANDARD.encode([0x3fu8]);
    assert!(Template::from_json(&doc(g6.clone(), &ok, &ok)).is_ok());
    // Stray bits past the length.
    let stray = STANDARD.encode([0x40u8]);
    assert_eq!(
        Template::from_json(&doc(g6.clone(), &stray, &ok)),
        Err(IrisError::PackedBits { field: "left.code".into(), expected_bytes: 1, bits: 6 })
    );
    // Wrong length.
    let long = STANDARD.encode([0u8, 0]);
    assert!(
        matches!(Template::from_json(&doc(g6.clone(), &ok, &long)), Err(IrisError::PackedBits { field, .. }) if field == "left.mask")
    );
    assert!(matches!(Template::from_json(&doc(g6.clone(), "", &ok)), Err(IrisError::PackedBits { .. })));
    // Bad base64.
    assert_eq!(Template::from_json(&doc(g6.clone(), "!!!", &ok)), Err(IrisError::Base64 { field: "left.code".into() }));
    assert!(
        matches!(Template::from_json(&doc(g6.clone(), "Pw", &ok)), Err(IrisError::Base64 { .. })),
        "padding is required"
    );
    // Bad geometry.
    for g in [
        json!({"rows": 0, "cols": 3, "filters": 1, "parts": 2}),
        json!({"rows": 1u64 << 40, "cols": 1u64 << 40, "filters": 1, "parts": 2}),
    ] {
        assert!(matches!(Template::from_json(&doc(g, &ok, &ok)), Err(IrisError::InvalidGeometry { .. })));
    }
    for g in [
        json!({"rows": -1, "cols": 3, "filters": 1, "parts": 2}),
        json!({"rows": 1.5, "cols": 3, "filters": 1, "parts": 2}),
        json!({"cols": 3, "filters": 1, "parts": 2}),
        json!({"rows": 1, "cols": 3, "filters": 1, "parts": 2, "x": 1}),
        json!([1, 3, 1, 2]),
    ] {
        assert!(
            matches!(Template::from_json(&doc(g, &ok, &ok)), Err(IrisError::BadField { field, .. }) if field.starts_with("geometry"))
        );
    }
    // Version, format, structure.
    let mut v: Value = serde_json::from_str(&doc(g6.clone(), &ok, &ok)).unwrap();
    v["version"] = json!(2);
    assert_eq!(Template::from_json(&v.to_string()), Err(IrisError::UnknownVersion { found: 2, supported: 1 }));
    v["version"] = json!("1");
    assert!(
        matches!(Template::from_json(&v.to_string()), Err(IrisError::BadField { field, .. }) if field == "version")
    );
    v["version"] = json!(1);
    v["format"] = json!("other");
    assert_eq!(Template::from_json(&v.to_string()), Err(IrisError::UnknownFormat));
    v["format"] = json!("argus-iris");
    v["extra"] = json!(0);
    assert!(matches!(Template::from_json(&v.to_string()), Err(IrisError::BadField { field, .. }) if field == "extra"));
    v.as_object_mut().unwrap().remove("extra");
    v["left"].as_object_mut().unwrap().remove("mask");
    assert!(
        matches!(Template::from_json(&v.to_string()), Err(IrisError::BadField { field, .. }) if field == "left.mask")
    );
    v["left"] = json!({"code": 5, "mask": ok});
    assert!(
        matches!(Template::from_json(&v.to_string()), Err(IrisError::BadField { field, .. }) if field == "left.code")
    );
    assert!(matches!(Template::from_json("{\"format\": "), Err(IrisError::Json { .. })));
    assert!(matches!(Template::from_json("[]"), Err(IrisError::BadField { .. })));
    // Mismatched eyes cannot be written.
    let t =
        Template { left: template(IrisGeometry::DEPLOYED, 1).left, right: template(IrisGeometry::OPEN_IRIS, 1).right };
    assert!(matches!(t.to_json(), Err(IrisError::GeometryMismatch { .. })));
}

#[test]
fn open_iris_round_trip_and_layout() {
    let t = template(IrisGeometry::OPEN_IRIS, 5);
    let s = t.left.to_open_iris_json();
    assert_eq!(IrisCode::from_open_iris_json(&s).unwrap(), t.left);
    let (l, r) = (tmp("l.json"), tmp("r.json"));
    t.write_open_iris_files(&l, &r).unwrap();
    assert_eq!(Template::read_open_iris_files(&l, &r).unwrap(), t);
    std::fs::remove_file(&l).unwrap();
    std::fs::remove_file(&r).unwrap();

    // Exactly what numpy's tolist() gives: filters x rows x cols x parts of booleans.
    let v: Value = serde_json::from_str(&s).unwrap();
    let g = IrisGeometry::OPEN_IRIS;
    assert_eq!(v["iris_codes"].as_array().unwrap().len(), 2);
    assert_eq!(v["iris_codes"][1].as_array().unwrap().len(), 16);
    assert_eq!(v["iris_codes"][1][3].as_array().unwrap().len(), 256);
    assert_eq!(v["iris_codes"][1][3][200].as_array().unwrap().len(), 2);
    for (f, row, col, part) in [(0, 0, 0, 0), (1, 3, 200, 1), (1, 15, 255, 0), (0, 7, 31, 1)] {
        let i = g.index(row, col, f, part).unwrap();
        assert_eq!(i, ((row * 256 + col) * 2 + f) * 2 + part);
        assert_eq!(v["iris_codes"][f][row][col][part].as_bool().unwrap(), t.left.code().get(i));
        assert_eq!(v["mask_codes"][f][row][col][part].as_bool().unwrap(), t.left.mask().get(i));
    }

    // A single set bit, written by hand the way Python would.
    let mut codes = vec![vec![vec![vec![false; 2]; 256]; 16]; 2];
    codes[1][3][200][0] = true;
    let masks = vec![vec![vec![vec![true; 2]; 256]; 16]; 2];
    let py = json!({"iris_codes": codes, "mask_codes": masks, "iris_code_version": "v2.1"}).to_string();
    let c = IrisCode::from_open_iris_json(&py).unwrap();
    assert_eq!(c.code().count_ones(), 1);
    assert!(c.code().get(((3 * 256 + 200) * 2 + 1) * 2));
    assert_eq!(c.mask_coverage(), 1.0);
    // Other geometries with an explicit shape.
    let small = template(IrisGeometry::new(2, 5, 3, 2).unwrap(), 8).right;
    let js = small.to_open_iris_json();
    assert_eq!(IrisCode::from_open_iris_json_with(&js, small.geometry()).unwrap(), small);
    assert!(matches!(IrisCode::from_open_iris_json(&js), Err(IrisError::Shape { .. })));
}

#[test]
fn open_iris_bad_input() {
    let g = IrisGeometry::new(2, 3, 2, 2).unwrap();
    let good = || {
        let arr = json!(vec![vec![vec![vec![true, false]; 3]; 2]; 2]);
        json!({"iris_codes": arr.clone(), "mask_codes": arr})
    };
    let parse = |v: &Value| IrisCode::from_open_iris_json_with(&v.to_string(), g);
    assert!(parse(&good()).is_ok());
    let mut v = good();
    v["iris_codes"][1][0][2][1] = json!(1);
    let e = parse(&v).unwrap_err();
    assert_eq!(
        e,
        IrisError::BadField {
            field: "iris_codes[1][0][2][1]".into(),
            reason: "expected a boolean, found a number".into()
        }
    );
    assert!(!e.to_string().contains("true"));
    let mut v = good();
    v["mask_codes"][0][1] = json!([[true, false], [true, false]]);
    assert_eq!(parse(&v), Err(IrisError::Shape { field: "mask_codes[0][1]".into(), expected: 3, found: 2 }));
    let mut v = good();
    v["iris_codes"][0][1][0] = json!([true, false, true]);
    assert_eq!(parse(&v), Err(IrisError::Shape { field: "iris_codes[0][1][0]".into(), expected: 2, found: 3 }));
    let mut v = good();
    v["iris_codes"].as_array_mut().unwrap().pop();
    assert_eq!(parse(&v), Err(IrisError::Shape { field: "iris_codes".into(), expected: 2, found: 1 }));
    let mut v = good();
    v.as_object_mut().unwrap().remove("mask_codes");
    assert!(matches!(parse(&v), Err(IrisError::BadField { field, .. }) if field == "mask_codes"));
    let mut v = good();
    v["iris_codes"][0] = json!("abc");
    assert!(matches!(parse(&v), Err(IrisError::BadField { field, .. }) if field == "iris_codes[0]"));
    assert!(matches!(IrisCode::from_open_iris_json("not json"), Err(IrisError::Json { .. })));
    assert!(matches!(IrisCode::from_open_iris_json("[1]"), Err(IrisError::BadField { .. })));
    assert!(matches!(
        IrisCode::from_open_iris_json_with("{}", IrisGeometry { rows: 0, ..g }),
        Err(IrisError::InvalidGeometry { .. })
    ));
    // Deep nesting is refused by the parser, not a stack overflow.
    let deep = "[".repeat(100_000);
    assert!(matches!(IrisCode::from_open_iris_json(&deep), Err(IrisError::Json { .. })));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(s in ".{0,200}") {
        let _ = Template::from_json(&s);
        let _ = IrisCode::from_open_iris_json(&s);
    }

    #[test]
    fn mutated_documents_never_panic(cut in 0usize..2000, pos in 0usize..2000, byte in 0u8..128) {
        let g = IrisGeometry::new(1, 7, 1, 2).unwrap(); // 14 bits: stray bits possible
        let t = template(g, 4);
        let s = t.to_json().unwrap();
        let mut b = s.clone().into_bytes();
        let p = pos % b.len();
        b[p] = byte;
        if let Ok(m) = String::from_utf8(b) {
            let _ = Template::from_json(&m);
        }
        let _ = Template::from_json(&s[..cut.min(s.len())]);
        let o = t.left.to_open_iris_json();
        let mut b = o.clone().into_bytes();
        let p = pos % b.len();
        b[p] = byte;
        if let Ok(m) = String::from_utf8(b) {
            let _ = IrisCode::from_open_iris_json_with(&m, g);
        }
    }
}

/// open-iris 1.x's `IrisTemplate.serialize()` form (packed base64, most significant bit first,
/// of the `(rows, cols, filters, parts)` array) reads as the nested-array form does: a bit set by
/// hand lands where numpy's `packbits` puts it, templates round-trip, and bad input (wrong
/// size, padding bits set, not base64, a version that is not a string) is refused by field.
#[test]
fn open_iris_serialized_templates_are_read() {
    use base64::{engine::general_purpose::STANDARD, Engine};
    let t = template(IrisGeometry::OPEN_IRIS, 6);
    let s = t.left.to_open_iris_serialized();
    assert_eq!(IrisCode::from_open_iris_json(&s).unwrap(), t.left);
    let v: Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["iris_code_version"], "v2.1");
    // np.packbits of an array whose only set element is [row 3, col 200, filter 1, part 0]:
    // C-order index ((3·256 + 200)·2 + 1)·2 = 3874, byte 484, bit 7 − 2 (value 0x20).
    let mut bytes = vec![0u8; 2048];
    bytes[484] = 0x20;
    let doc = json!({"iris_codes": STANDARD.encode(&bytes), "mask_codes": STANDARD.encode(vec![0xffu8; 2048]), "iris_code_version": "v2.1"});
    let c = IrisCode::from_open_iris_json(&doc.to_string()).unwrap();
    assert_eq!(c.code().count_ones(), 1);
    assert!(c.code().get(IrisGeometry::OPEN_IRIS.index(3, 200, 1, 0).unwrap()));
    assert_eq!(c.mask_coverage(), 1.0);
    // Both forms in one file are fine too (a field at a time).
    let mixed = json!({"iris_codes": v["iris_codes"], "mask_codes": serde_json::from_str::<Value>(&t.left.to_open_iris_json()).unwrap()["mask_codes"]});
    assert_eq!(IrisCode::from_open_iris_json(&mixed.to_string()).unwrap(), t.left);
    // Other geometries: 2·5·3·2 = 60 bits in 8 bytes, the last 4 bits padding.
    let g = IrisGeometry::new(2, 5, 3, 2).unwrap();
    let small = template(g, 9).right;
    assert_eq!(IrisCode::from_open_iris_json_with(&small.to_open_iris_serialized(), g).unwrap(), small);
    let field =
        |b: &[u8]| json!({"iris_codes": STANDARD.encode(b), "mask_codes": STANDARD.encode([0u8; 8])}).to_string();
    let e = IrisCode::from_open_iris_json_with(&field(&[0u8; 7]), g).unwrap_err().to_string();
    assert!(e.contains("iris_codes") && e.contains("7 bytes") && e.contains("expected 8"), "{e}");
    let e = IrisCode::from_open_iris_json_with(&field(&[0, 0, 0, 0, 0, 0, 0, 0x01]), g).unwrap_err().to_string();
    assert!(e.contains("padding"), "{e}");
    let not_b64 = json!({"iris_codes": "***", "mask_codes": "AAAA"}).to_string();
    assert!(IrisCode::from_open_iris_json_with(&not_b64, g).unwrap_err().to_string().contains("base64"));
    let version = json!({"iris_codes": STANDARD.encode([0u8; 8]), "mask_codes": STANDARD.encode([0u8; 8]), "iris_code_version": 2});
    let e = IrisCode::from_open_iris_json_with(&version.to_string(), g).unwrap_err().to_string();
    assert!(e.contains("iris_code_version"), "{e}");
}
