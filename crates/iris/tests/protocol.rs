//! The MPC uniqueness check agrees with the plaintext reference matcher on synthetic populations:
//! genuine re-captures (rotated, noisy) are found, new identities and impostors are not, under
//! both eye rules.

use argus_iris::protocol::{is_enrolled, share_enrollment, share_query, SharedDb};
use argus_iris::{find_matches, EyeRule, Generator, IrisGeometry, MaskMode, MatchConfig, Template};
use argus_math::{Z16, Z32, Z8};
use argus_mpc::local::{run3, Backend};
use argus_net::NetConfig;
use rand::{rngs::StdRng, SeedableRng};

#[test]
fn mpc_check_agrees_with_plaintext() {
    let geometry = IrisGeometry::DEPLOYED;
    let mut g = Generator::new(geometry, 4).unwrap();
    let db: Vec<_> = (0..12).map(|_| g.random_template()).collect();
    // Queries: re-captures of entries 0, 5, 11, new identities, and a re-capture whose left eye is
    // an impostor's (matches under OR, not under AND).
    let mut queries = vec![
        g.genuine_template(&db[0]).unwrap(),
        g.genuine_template(&db[5]).unwrap(),
        g.genuine_template(&db[11]).unwrap(),
    ];
    queries.push(g.random_template());
    queries.push(g.impostor());
    let mut half = g.genuine_template(&db[7]).unwrap();
    half.left = g.random_template().left;
    queries.push(half);
    agree_for(Z32::new(), &db, &queries, geometry);
    agree_for(Z16::new(), &db, &queries, geometry);
    agree_field(&db, &queries, geometry);
    agree_plain_mask(&db, &queries, geometry);
}

/// Alg. 2 (public masks): the same answers, with a batch duplicate appended.
fn agree_plain_mask(db: &[Template], queries: &[Template], geometry: IrisGeometry) {
    use argus_iris::protocol::plain_mask;
    let mut g = Generator::new(geometry, 78).unwrap();
    let mut batch = queries.to_vec();
    batch.push(g.genuine_template(&queries[3]).unwrap());
    let mut rng = StdRng::seed_from_u64(4);
    for (rule, mask_mode) in [(EyeRule::And, MaskMode::PerBit), (EyeRule::Or, MaskMode::Trimmed)] {
        let cfg = MatchConfig { rule, mask_mode, ..MatchConfig::default() };
        let enrolled: Vec<_> = db.iter().map(|t| plain_mask::share_enrollment(t, &cfg, &mut rng).unwrap()).collect();
        let qs: Vec<_> = batch.iter().map(|t| plain_mask::share_query(t, &cfg, &mut rng).unwrap()).collect();
        let out = run3(Backend::Memory, NetConfig::default(), |p| {
            let mut pdb = plain_mask::PlainMaskDb::new(geometry.bits());
            for e in &enrolled {
                pdb.push(&e[p.id()])?;
            }
            let mine: Vec<_> = qs.iter().map(|q| q[p.id()].clone()).collect();
            let before = p.stats();
            let r = plain_mask::check_batch(p, &mine, &pdb, &cfg)?;
            Ok((r, p.stats() - before))
        })
        .unwrap();
        let want: Vec<bool> = (0..batch.len())
            .map(|i| {
                find_matches(&batch[i], db, &cfg).unwrap().is_empty()
                    && find_matches(&batch[i], &batch[..i], &cfg).unwrap().is_empty()
            })
            .collect();
        for (party, _) in &out {
            assert_eq!(party, &want, "public masks, {rule:?} {mask_mode:?}");
        }
    }
}

/// The same over Shamir shares in F_65519 (MPCLift-F), with in-batch duplicates: the queries are
/// one batch, followed by a re-capture of the batch's first new identity.
fn agree_field(db: &[Template], queries: &[Template], geometry: IrisGeometry) {
    use argus_iris::protocol::field;
    let mut g = Generator::new(geometry, 77).unwrap();
    let mut batch = queries.to_vec();
    batch.push(g.genuine_template(&queries[3]).unwrap());
    let mut rng = StdRng::seed_from_u64(3);
    for (rule, mask_mode) in [(EyeRule::And, MaskMode::PerBit), (EyeRule::Or, MaskMode::Trimmed)] {
        let cfg = MatchConfig { rule, mask_mode, ..MatchConfig::default() };
        let enrolled: Vec<_> = db.iter().map(|t| field::share_enrollment(t, &cfg, &mut rng).unwrap()).collect();
        let qs: Vec<_> = batch.iter().map(|t| field::share_query(t, &cfg, &mut rng).unwrap()).collect();
        let out = run3(Backend::Memory, NetConfig::default(), |p| {
            let mut fdb = field::FieldDb::new(geometry.bits());
            for e in &enrolled {
                fdb.push(&e[p.id()])?;
            }
            let mask_bits = if mask_mode == MaskMode::Trimmed { geometry.bits() / 2 } else { geometry.bits() };
            assert_eq!(fdb.bytes_per_identity(), 2 * 2 * (geometry.bits() + mask_bits), "2 bytes per stored bit");
            let mine: Vec<_> = qs.iter().map(|q| q[p.id()].clone()).collect();
            field::check_batch(p, &mine, &fdb, &cfg)
        })
        .unwrap();
        let want: Vec<bool> = (0..batch.len())
            .map(|i| {
                find_matches(&batch[i], db, &cfg).unwrap().is_empty()
                    && find_matches(&batch[i], &batch[..i], &cfg).unwrap().is_empty()
            })
            .collect();
        assert!(!want[batch.len() - 1], "the re-capture duplicates an earlier query of its batch");
        for party in &out {
            assert_eq!(party, &want, "F_65519, {rule:?} {mask_mode:?}");
        }
    }
}

/// The MPC answer for every query equals the plaintext one, under both eye rules, over `ring`.
fn agree_for<R: argus_math::Ring>(ring: R, db: &[Template], queries: &[Template], geometry: IrisGeometry) {
    let mut rng = StdRng::seed_from_u64(1);
    for (rule, mask_mode) in
        [(EyeRule::And, MaskMode::PerBit), (EyeRule::Or, MaskMode::PerBit), (EyeRule::And, MaskMode::Trimmed)]
    {
        let cfg = MatchConfig { rule, mask_mode, ..MatchConfig::default() };
        let enrolled: Vec<_> = db.iter().map(|t| share_enrollment(&ring, t, &cfg, &mut rng).unwrap()).collect();
        let qs: Vec<_> = queries.iter().map(|t| share_query(&ring, t, &cfg, &mut rng).unwrap()).collect();
        let out = run3(Backend::Memory, NetConfig::default(), |p| {
            let mut sdb = SharedDb::new(ring.clone(), geometry.bits());
            for e in &enrolled {
                sdb.push(&e[p.id()])?;
            }
            qs.iter().map(|q| is_enrolled(p, &q[p.id()], &sdb, &cfg)).collect::<Result<Vec<bool>, _>>()
        })
        .unwrap();
        let want: Vec<bool> = queries.iter().map(|q| !find_matches(q, db, &cfg).unwrap().is_empty()).collect();
        assert_eq!(want[..5], [true, true, true, false, false], "the population behaves as designed");
        assert_eq!(want[5], rule == EyeRule::Or);
        for party in &out {
            assert_eq!(party, &want, "{rule:?} {mask_mode:?}");
        }
    }
}

#[test]
fn a_ring_too_small_for_lemma_2_is_refused() {
    let mut g = Generator::new(IrisGeometry::DEPLOYED, 1).unwrap();
    let t = g.random_template();
    let e = share_query(&Z8::new(), &t, &MatchConfig::default(), &mut StdRng::seed_from_u64(1)).unwrap_err();
    assert!(e.to_string().contains("Lemma 2"), "{e}");
}

/// A batch is checked in one protocol run: each query against the database and against the
/// earlier queries of the batch, so two captures of one new person are not both enrolled.
#[test]
fn batches_resolve_duplicates_among_themselves() {
    use argus_iris::protocol::check_batch;
    let geometry = IrisGeometry::DEPLOYED;
    let mut g = Generator::new(geometry, 8).unwrap();
    let db: Vec<_> = (0..6).map(|_| g.random_template()).collect();
    let fresh = g.random_template();
    let batch = vec![
        g.random_template(),                 // new: unique
        g.genuine_template(&db[2]).unwrap(), // enrolled already
        fresh.clone(),                       // new: unique
        g.genuine_template(&fresh).unwrap(), // duplicate of the previous query in the same batch
        g.impostor(),                        // new: unique
    ];
    let cfg = MatchConfig::default();
    let ring = Z32::new();
    let mut rng = StdRng::seed_from_u64(2);
    let enrolled: Vec<_> = db.iter().map(|t| share_enrollment(&ring, t, &cfg, &mut rng).unwrap()).collect();
    let qs: Vec<_> = batch.iter().map(|t| share_query(&ring, t, &cfg, &mut rng).unwrap()).collect();
    for db_size in [0, db.len()] {
        let out = run3(Backend::Memory, NetConfig::default(), |p| {
            let mut sdb = SharedDb::new(ring, geometry.bits());
            for e in &enrolled[..db_size] {
                sdb.push(&e[p.id()])?;
            }
            let mine: Vec<_> = qs.iter().map(|q| q[p.id()].clone()).collect();
            check_batch(p, &mine, &sdb, &cfg)
        })
        .unwrap();
        // Plaintext twin: unique iff no match in the database nor with an earlier query.
        let want: Vec<bool> = (0..batch.len())
            .map(|i| {
                find_matches(&batch[i], &db[..db_size], &cfg).unwrap().is_empty()
                    && find_matches(&batch[i], &batch[..i], &cfg).unwrap().is_empty()
            })
            .collect();
        assert_eq!(
            want,
            if db_size == 0 { vec![true, true, true, false, true] } else { vec![true, false, true, false, true] }
        );
        for party in &out {
            assert_eq!(party, &want, "database of {db_size}");
        }
    }
}
