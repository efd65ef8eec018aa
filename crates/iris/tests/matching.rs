//! Synthetic genuine/impostor behaviour, rotations and trimmed masks.

use argus_iris::*;
use argus_math::BitVec;
use proptest::prelude::*;
use rand::{rngs::StdRng, SeedableRng};

const G: IrisGeometry = IrisGeometry::DEPLOYED;

fn best_fhd(q: &IrisCode, e: &IrisCode) -> f64 {
    best_rotation(q, e, &(-15..=15)).unwrap().unwrap().fhd()
}

/// Observed distances over many seeds (run with `--nocapture` to see the figures).
#[test]
fn fhd_ranges() {
    let cfg = MatchConfig::default();
    let (mut gen_min, mut gen_max, mut imp_min, mut imp_max) = (1.0f64, 0.0f64, 1.0f64, 0.0f64);
    let (mut cov_min, mut cov_max, mut cov_sum, mut in_band, mut n_cov) = (1.0f64, 0.0f64, 0.0, 0, 0);
    for seed in 0..200u64 {
        for g in [IrisGeometry::DEPLOYED, IrisGeometry::OPEN_IRIS] {
            let mut gen = Generator::new(g, seed).unwrap();
            let t = gen.random_template();
            let genuine = gen.genuine_template(&t).unwrap();
            let impostor = gen.impostor();
            for (q, e) in [(&genuine.left, &t.left), (&genuine.right, &t.right)] {
                let f = best_fhd(q, e);
                gen_min = gen_min.min(f);
                gen_max = gen_max.max(f);
            }
            for (q, e) in [(&impostor.left, &t.left), (&impostor.right, &t.right)] {
                let f = best_fhd(q, e);
                imp_min = imp_min.min(f);
                imp_max = imp_max.max(f);
            }
            assert!(cfg.match_template(&genuine, &t).unwrap(), "seed {seed}: genuine must match");
            assert!(!cfg.match_template(&impostor, &t).unwrap(), "seed {seed}: impostor must not match");
            for c in [&t.left, &t.right, &genuine.left, &impostor.right] {
                let cov = c.mask_coverage();
                cov_min = cov_min.min(cov);
                cov_max = cov_max.max(cov);
                cov_sum += cov;
                n_cov += 1;
                in_band += (0.70..=0.90).contains(&cov) as usize;
            }
        }
    }
    println!("genuine best fhd over -15..=15: [{gen_min:.4}, {gen_max:.4}]");
    println!("impostor best fhd over -15..=15: [{imp_min:.4}, {imp_max:.4}]");
    println!(
        "mask coverage: [{cov_min:.3}, {cov_max:.3}], mean {:.3}, {:.1} % within 70-90 %",
        cov_sum / n_cov as f64,
        100.0 * in_band as f64 / n_cov as f64
    );
    assert!(gen_max < 0.30 && imp_min > 0.40, "clear separation around 0.345");
    assert!(in_band as f64 >= 0.9 * n_cov as f64, "typical coverage 70-90 %");
    assert!(cov_min > 0.55 && cov_max < 0.97);
}

#[test]
fn find_matches_returns_exactly_the_genuine_entries() {
    let mut gen = Generator::new(G, 99).unwrap();
    let query = gen.random_template();
    let mut db: Vec<Template> = (0..40).map(|_| gen.impostor()).collect();
    db[7] = gen.genuine_template(&query).unwrap();
    db[31] = gen.genuine_template(&query).unwrap();
    // Only the left eye genuine: an Or-match, not an And-match.
    db[12] = Template { left: gen.genuine(&query.left).unwrap(), right: gen.random_code() };
    let cfg = MatchConfig::default();
    assert_eq!(find_matches(&query, &db, &cfg).unwrap(), vec![7, 31]);
    let or = MatchConfig { rule: EyeRule::Or, ..MatchConfig::default() };
    assert_eq!(find_matches(&query, &db, &or).unwrap(), vec![7, 12, 31]);
    let trimmed = MatchConfig { mask_mode: MaskMode::Trimmed, ..MatchConfig::default() };
    assert_eq!(find_matches(&query, &db, &trimmed).unwrap(), vec![7, 31]);
    // find_matches agrees with match_template entry by entry.
    for (i, t) in db.iter().enumerate() {
        let m = match_template(&query, t, cfg.threshold, cfg.rule, &cfg.rotations).unwrap();
        assert_eq!(m, i == 7 || i == 31);
        assert_eq!(cfg.match_template(&query, t).unwrap(), m);
    }
    // No rotations at all: the rotated genuine captures are (almost surely) missed.
    #[allow(clippy::reversed_empty_ranges)]
    let none = MatchConfig { rotations: 1..=0, ..MatchConfig::default() };
    assert!(find_matches(&query, &db, &none).unwrap().is_empty());
    // A database entry of another geometry is an error, not a panic.
    let other = Generator::new(IrisGeometry::OPEN_IRIS, 1).unwrap().random_template();
    assert!(matches!(find_matches(&query, &[other], &cfg), Err(IrisError::GeometryMismatch { .. })));
}

#[test]
fn genuine_rotation_is_recovered() {
    let mut gen = Generator::new(G, 3).unwrap();
    for _ in 0..20 {
        let c = gen.random_code();
        let g = gen.genuine(&c).unwrap();
        let s = best_rotation(&g, &c, &(-15..=15)).unwrap().unwrap();
        assert!(s.rotation.abs() <= 10);
        assert!(s.fhd() < 0.3);
        // Rotating the query back by the best rotation aligns it with the enrolled code.
        let (hd, ml) = distance(&g.rotate(s.rotation), &c).unwrap();
        assert_eq!((hd, ml), (s.hd, s.ml));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn genuine_match_impostor_not(seed in any::<u64>()) {
        let mut gen = Generator::new(G, seed).unwrap();
        let t = gen.random_template();
        let cfg = MatchConfig::default();
        let g = gen.genuine_template(&t).unwrap();
        prop_assert!(cfg.match_template(&g, &t).unwrap());
        prop_assert!(cfg.match_template(&t, &g).unwrap());
        let trimmed = MatchConfig { mask_mode: MaskMode::Trimmed, ..MatchConfig::default() };
        prop_assert!(trimmed.match_template(&g, &t).unwrap());
        let i = gen.impostor();
        prop_assert!(!cfg.match_template(&i, &t).unwrap());
        let or = MatchConfig { rule: EyeRule::Or, ..MatchConfig::default() };
        prop_assert!(!or.match_template(&i, &t).unwrap());
    }

    #[test]
    fn matches_all_own_rotations_in_window(seed in any::<u64>(), r in -15i32..=15) {
        let mut gen = Generator::new(G, seed).unwrap();
        let c = gen.random_code();
        let th = Threshold::DEFAULT;
        prop_assert!(match_eye(&c.rotate(r), &c, th, &(-15..=15)).unwrap());
        prop_assert!(match_eye(&c, &c.rotate(r), th, &(-15..=15)).unwrap());
        let s = best_rotation(&c.rotate(r), &c, &(-15..=15)).unwrap().unwrap();
        prop_assert_eq!((s.rotation, s.hd), (-r, 0));
    }

    #[test]
    fn rotation_by_cols_is_identity(seed in any::<u64>(), rows in 1usize..6, cols in 1usize..50, cell in 1usize..5, r in any::<i32>()) {
        let g = IrisGeometry::new(rows, cols, cell, 1).unwrap();
        let mut rng = StdRng::seed_from_u64(seed);
        let c = IrisCode::new(g, BitVec::random(&mut rng, g.bits()), BitVec::random(&mut rng, g.bits())).unwrap();
        prop_assert_eq!(c.rotate(cols as i32), c.clone());
        prop_assert_eq!(c.rotate(-(cols as i32)), c.clone());
        prop_assert_eq!(c.rotate(r).rotate(-(r % cols as i32)), c.clone());
        prop_assert_eq!(c.rotate(r).code().count_ones(), c.code().count_ones());
    }

    #[test]
    fn trimmed_round_trip(seed in any::<u64>(), parts in 1usize..4) {
        let g = IrisGeometry::new(4, 20, 2, parts).unwrap();
        let mut rng = StdRng::seed_from_u64(seed);
        let t = BitVec::random(&mut rng, g.bits() / parts);
        let e = expand_trimmed(g, &t).unwrap();
        let c = IrisCode::new(g, BitVec::random(&mut rng, g.bits()), e.clone()).unwrap();
        prop_assert_eq!(c.trim(), t.clone());
        prop_assert_eq!(c.with_trimmed_mask(), c.clone());
        // Trimming any mask never adds valid bits, and expansion of the trim is idempotent.
        let any = IrisCode::new(g, BitVec::random(&mut rng, g.bits()), BitVec::random(&mut rng, g.bits())).unwrap();
        let tm = any.with_trimmed_mask();
        prop_assert_eq!(tm.mask().and(any.mask()).unwrap(), tm.mask().clone());
        prop_assert_eq!(tm.with_trimmed_mask(), tm.clone());
        prop_assert_eq!(tm.trim(), any.trim());
    }
}
