//! The synthetic generators: shapes, determinism and the structure they promise.

use std::time::Instant;

use argus_kmeans::generate::{CONTROL_CHART_COLS, CONTROL_CHART_ROWS, PLANTS_COLS, PLANTS_ROWS};
use argus_kmeans::{control_chart, control_chart_labels, plants_like, Dataset, CONTROL_CHART_CLASSES};

fn mean(values: &[i64]) -> f64 {
    values.iter().sum::<i64>() as f64 / values.len() as f64 / 1e4
}

#[test]
fn control_chart_shape_and_determinism() {
    let d = control_chart(7);
    assert_eq!((d.rows, d.cols, d.scale, d.header.clone()), (600, 60, 4, None));
    assert_eq!((CONTROL_CHART_ROWS, CONTROL_CHART_COLS), (600, 60));
    assert_eq!(d.values.len(), 600 * 60);
    assert_eq!(control_chart(7), d);
    assert_ne!(control_chart(8).values, d.values);

    let labels = control_chart_labels();
    assert_eq!(labels.len(), 600);
    for (class, _) in CONTROL_CHART_CLASSES.iter().enumerate() {
        assert_eq!(labels.iter().filter(|&&l| l == class).count(), 100);
    }
    assert_eq!((labels[0], labels[99], labels[100], labels[599]), (0, 0, 1, 5));

    // Round trip through the CSV text: 4 decimals, exact.
    let back = Dataset::parse_csv("cc", &d.to_csv_string()).unwrap();
    assert_eq!(back.values, d.values);
}

#[test]
fn control_chart_classes_look_like_their_definition() {
    let d = control_chart(1);
    for (row, class) in control_chart_labels().into_iter().enumerate() {
        let r = d.row(row);
        // t = 1..=19 (before any shift: t3 ≥ 20) against t = 41..=60 (after every shift: t3 ≤ 40).
        let (first, last) = (mean(&r[..19]), mean(&r[40..]));
        // Noise r·s is within ±6 of m = 30; means of 19 or 20 points have a spread of about 0.8.
        let (min, max) = (*r.iter().min().unwrap() as f64 / 1e4, *r.iter().max().unwrap() as f64 / 1e4);
        match class {
            0 => assert!(min >= 24.0 && max <= 36.0, "row {row}"),
            1 => assert!(min >= 9.0 && max <= 51.0 && max - min > 15.0, "row {row}"),
            // ±g·t with g ≥ 0.2: the means differ by at least 0.2 · 40.5.
            2 => assert!(last - first > 3.5, "row {row}"),
            3 => assert!(first - last > 3.5, "row {row}"),
            // ±x with x ≥ 7.5 from t3 ≤ 40 on.
            4 => assert!(last - first > 3.5 && (26.5..33.5).contains(&first), "row {row}"),
            _ => assert!(first - last > 3.5 && (26.5..33.5).contains(&first), "row {row}"),
        }
    }
}

#[test]
fn plants_like_shape_determinism_and_speed() {
    let start = Instant::now();
    let d = plants_like(3);
    let elapsed = start.elapsed();
    assert_eq!((d.rows, d.cols, d.scale, d.header.clone()), (34781, 70, 0, None));
    assert_eq!((PLANTS_ROWS, PLANTS_COLS), (34781, 70));
    assert!(d.values.iter().all(|&v| v == 0 || v == 1));
    assert!((0..d.rows).all(|r| d.row(r).contains(&1)), "every species occurs somewhere");
    let density = d.values.iter().sum::<i64>() as f64 / d.values.len() as f64;
    assert!((0.1..0.35).contains(&density), "density {density}");
    // Well under a second in release; generous here for debug builds and loaded machines.
    assert!(elapsed.as_secs_f64() < 10.0, "{elapsed:?}");
    assert_eq!(plants_like(3), d);
    assert_ne!(plants_like(4).values, d.values);
}
