//! CSV reading, exact scaling, errors with their positions, the unsigned mapping and writing.

use std::path::PathBuf;

use argus_kmeans::{unscale, DataError, Dataset};

fn parse(text: &str) -> Result<Dataset, DataError> {
    Dataset::parse_csv("t.csv", text)
}

#[test]
fn header_and_no_header() {
    let d = parse("a, b ,c\n1,2,3\n4,5,6\n").unwrap();
    assert_eq!(d.header, Some(vec!["a".to_string(), "b".to_string(), "c".to_string()]));
    assert_eq!((d.rows, d.cols, d.scale), (2, 3, 0));
    assert_eq!(d.values, vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(d.line_of(0), 2);

    let d = parse("1,2,3\n4,5,6").unwrap();
    assert_eq!(d.header, None);
    assert_eq!((d.rows, d.cols), (2, 3));
    assert_eq!(d.line_of(0), 1);

    // One non-numeric cell is enough to make line 1 a header.
    let d = parse("1,x\n2,3\n").unwrap();
    assert_eq!(d.header, Some(vec!["1".to_string(), "x".to_string()]));
    assert_eq!(d.values, vec![2, 3]);
}

#[test]
fn crlf_trailing_blank_lines_spaces_and_bom() {
    let d = parse("\u{feff}x,y\r\n 1 ,\t2\r\n3,4\r\n\r\n  \n\n").unwrap();
    assert_eq!(d.header.as_deref(), Some(&["x".to_string(), "y".to_string()][..]));
    assert_eq!(d.values, vec![1, 2, 3, 4]);
}

#[test]
fn negative_and_fractional_values_scale_exactly() {
    let d = parse("0.1,-0.25\n.5,5.\n+3,-0.125\n").unwrap();
    assert_eq!(d.scale, 3);
    assert_eq!(d.values, vec![100, -250, 500, 5000, 3000, -125]);
    // Values whose f64 product would round wrongly: 0.3·10^9 and 4.35·100.
    let d = parse("0.300000001\n4.35\n1.1\n").unwrap();
    assert_eq!(d.scale, 9);
    assert_eq!(d.values, vec![300_000_001, 4_350_000_000, 1_100_000_000]);
    // i64 extremes.
    let d = parse("-9223372036854775808\n9223372036854775807\n").unwrap();
    assert_eq!(d.values, vec![i64::MIN, i64::MAX]);
    // Leading zeros and a negative zero.
    let d = parse("007.50,-0\n").unwrap();
    assert_eq!((d.values.clone(), d.scale), (vec![750, 0], 2));
}

#[test]
fn empty_files() {
    for text in ["", "\n\n", "a,b\n", "a,b\r\n\r\n"] {
        match parse(text) {
            Err(DataError::Empty { file }) => assert_eq!(file, "t.csv"),
            other => panic!("{text:?}: {other:?}"),
        }
    }
    assert_eq!(parse("").unwrap_err().to_string(), "t.csv: no data rows");
}

#[test]
fn non_numeric_cells() {
    let err = parse("a,b\n1,2\n3,abc\n").unwrap_err();
    match &err {
        DataError::NonNumeric { file, line, column, cell } => {
            assert_eq!((file.as_str(), *line, *column, cell.as_str()), ("t.csv", 3, 2, "abc"))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.to_string(), "t.csv:3:2: expected a number, found \"abc\"");

    let msg = parse("1,2\n1e3,4\n").unwrap_err().to_string();
    assert!(msg.starts_with("t.csv:2:1: expected a number") && msg.contains("exponents are not accepted"), "{msg}");
    let msg = parse("1,2\n3,NaN\n").unwrap_err().to_string();
    assert!(msg.starts_with("t.csv:2:2:") && msg.contains("NaN and infinities are not accepted"), "{msg}");
    let msg = parse("1,2\n3,-inf\n").unwrap_err().to_string();
    assert!(msg.contains("NaN and infinities"), "{msg}");
    let msg = parse("1,2\n3,\n").unwrap_err().to_string();
    assert!(msg.starts_with("t.csv:2:2: expected a number") && msg.contains("empty cell"), "{msg}");
    for bad in ["-", ".", "+.", "1.2.3", "1,5", "--1", "1 2", "0x10", "١"] {
        let text = format!("0\n{bad}\n");
        match parse(&text) {
            Err(DataError::NonNumeric { line: 2, column: 1, .. }) | Err(DataError::Ragged { line: 2, .. }) => {}
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

#[test]
fn long_cells_are_cut_in_errors() {
    let long = "x".repeat(500);
    let msg = parse(&format!("1\n{long}\n")).unwrap_err().to_string();
    assert!(msg.len() < 100, "{msg}");
}

#[test]
fn ragged_rows() {
    match parse("a,b,c\n1,2,3\n4,5\n") {
        Err(DataError::Ragged { file, line: 3, expected: 3, got: 2 }) => assert_eq!(file, "t.csv"),
        other => panic!("{other:?}"),
    }
    match parse("1,2\n3,4,5,6\n") {
        Err(e @ DataError::Ragged { line: 2, expected: 2, got: 4, .. }) => {
            assert_eq!(e.to_string(), "t.csv:2: 4 cells, expected 2 as on line 1")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn blank_line_in_the_middle() {
    match parse("1,2\n\n3,4\n") {
        Err(DataError::BlankLine { line: 2, .. }) => {}
        other => panic!("{other:?}"),
    }
    match parse(" \r\n1,2\n") {
        Err(e @ DataError::BlankLine { line: 1, .. }) => {
            assert_eq!(e.to_string(), "t.csv:1: blank line (blank lines are only allowed at the end of the file)")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn too_precise() {
    assert_eq!(parse("1\n0.123456789\n").unwrap().scale, 9);
    match parse("x\n1\n2\n0.1234567890\n") {
        Err(e @ DataError::TooPrecise { line: 4, column: 1, .. }) => {
            assert_eq!(e.to_string(), "t.csv:4:1: more than 9 decimal places")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn overflow() {
    // Too large on its own.
    match parse("1,2\n3,9223372036854775808\n") {
        Err(DataError::Overflow { line: 2, column: 2, .. }) => {}
        other => panic!("{other:?}"),
    }
    match parse("-9223372036854775809\n") {
        Err(DataError::Overflow { line: 1, column: 1, .. }) => {}
        other => panic!("{other:?}"),
    }
    // Fits alone, overflows once scaled by another cell's decimals (found in the second pass).
    match parse("h1,h2\n1,0.01\n92233720368547759,1\n") {
        Err(DataError::Overflow { line: 3, column: 1, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn io_error_names_the_file() {
    let err = Dataset::read_csv(std::path::Path::new("/nonexistent/dir/x.csv")).unwrap_err();
    assert!(matches!(err, DataError::Io { .. }));
    assert!(err.to_string().starts_with("/nonexistent/dir/x.csv: "), "{err}");
}

#[test]
fn unsigned_without_negatives_has_no_offset() {
    let d = parse("a,b\n0,255\n7,8\n").unwrap();
    let u = d.unsigned(8).unwrap();
    assert_eq!((u.offset, u.rows, u.cols), (0, 2, 2));
    assert_eq!(u.values, vec![0, 255, 7, 8]);
    assert_eq!(u.signed(255), 255);
    match d.unsigned(7) {
        Err(e @ DataError::TooLarge { line: 2, column: 2, bits: 7, offset: false, .. }) => {
            assert_eq!(e.to_string(), "t.csv:2:2: the scaled value does not fit 7 bits")
        }
        other => panic!("{other:?}"),
    }
    assert!(d.unsigned(64).is_ok());
    assert!(matches!(d.unsigned(0), Err(DataError::InvalidBits { bits: 0 })));
    assert!(matches!(d.unsigned(65), Err(DataError::InvalidBits { bits: 65 })));
}

#[test]
fn unsigned_with_negatives_offsets_everything() {
    let d = parse("-0.5,0.5\n-12.8,12.7\n").unwrap();
    assert_eq!(d.values, vec![-5, 5, -128, 127]);
    let u = d.unsigned(8).unwrap();
    assert_eq!(u.offset, 128);
    assert_eq!(u.values, vec![123, 133, 0, 255]);
    assert_eq!(u.signed(0), -128);
    // 12.8 is one too many above; -12.9 one too many below.
    match parse("x,y\n-1,12.8\n").unwrap().unsigned(8) {
        Err(DataError::TooLarge { line: 2, column: 2, bits: 8, offset: true, .. }) => {}
        other => panic!("{other:?}"),
    }
    let err = parse("x,y\n1,2\n-12.9,0\n").unwrap().unsigned(8).unwrap_err();
    assert!(matches!(err, DataError::TooLarge { line: 3, column: 1, bits: 8, offset: true, .. }), "{err:?}");
    assert!(err.to_string().starts_with("t.csv:3:1:"), "{err}");
    // The full 64-bit range.
    let d = parse("-9223372036854775808,9223372036854775807\n").unwrap();
    let u = d.unsigned(64).unwrap();
    assert_eq!((u.offset, u.values.clone()), (1 << 63, vec![0, u64::MAX]));
}

#[test]
fn with_scale_adds_decimals_exactly() {
    let d = parse("x,y\n1.5,-2\n").unwrap();
    let e = d.with_scale(4).unwrap();
    assert_eq!((e.values.clone(), e.scale, e.header.clone()), (vec![15000, -20000], 4, d.header.clone()));
    assert_eq!(d.with_scale(1).unwrap(), d);
    assert!(matches!(d.with_scale(0), Err(DataError::InvalidScale { scale: 0, current: 1, .. })));
    assert!(matches!(d.with_scale(10), Err(DataError::InvalidScale { scale: 10, current: 1, .. })));
    let big = parse("x\n1\n9223372036854776\n").unwrap();
    assert!(matches!(big.with_scale(3), Err(DataError::Overflow { line: 3, column: 1, .. })));
}

#[test]
fn unscale_is_exact() {
    assert_eq!(unscale(100, 3), "0.100");
    assert_eq!(unscale(-5, 2), "-0.05");
    assert_eq!(unscale(-250, 2), "-2.50");
    assert_eq!(unscale(0, 0), "0");
    assert_eq!(unscale(0, 2), "0.00");
    assert_eq!(unscale(123, 0), "123");
    assert_eq!(unscale(-123, 0), "-123");
    assert_eq!(unscale(123_456, 9), "0.000123456");
    assert_eq!(unscale(i128::MIN, 2), "-1701411834604692317316873037158841057.28");
}

#[test]
fn write_then_read_round_trips() {
    let d = parse("x,y\n1.5,-2\n0.25,3\n").unwrap();
    assert_eq!(d.to_csv_string(), "x,y\n1.50,-2.00\n0.25,3.00\n");
    let path = std::env::temp_dir().join(format!("argus-kmeans-roundtrip-{}.csv", std::process::id()));
    d.write_csv(&path).unwrap();
    let back = Dataset::read_csv(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!((back.values.clone(), back.scale, back.header.clone()), (d.values.clone(), d.scale, d.header.clone()));
    assert_eq!(back.name, path.display().to_string());

    let rows = d.to_f64_rows();
    assert_eq!(rows, vec![vec![1.5, -2.0], vec![0.25, 3.0]]);
}

fn iris_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/iris.csv")
}

#[test]
fn iris_loads_with_the_published_column_sums() {
    let d = Dataset::read_csv(&iris_path()).unwrap();
    assert_eq!((d.rows, d.cols, d.scale), (150, 4, 1));
    assert_eq!(
        d.header,
        Some(["sepal_length", "sepal_width", "petal_length", "petal_width"].map(String::from).to_vec())
    );
    // 876.5, 458.6, 563.7, 179.9 in tenths.
    assert_eq!(d.column_sums(), vec![8765, 4586, 5637, 1799]);
    let u = d.unsigned(16).unwrap();
    assert_eq!(u.offset, 0);
}
