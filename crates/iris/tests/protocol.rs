//! The MPC uniqueness check agrees with the plaintext reference matcher on synthetic populations:
//! genuine re-captures (rotated, noisy) are found, new identities and impostors are not, under
//! both eye rules.

use argus_iris::protocol::scheme::{Database, IrisScheme};
use argus_iris::protocol::schemes::rep3::{is_enrolled, share_enrollment, share_query, SharedDb};
use argus_iris::protocol::schemes::{MpcLiftF16, MpcLiftGr16, MpcLiftZ16, NoLiftZ32, PlainMaskZ16};
use argus_iris::protocol::Tuning;
use argus_iris::{
    find_matches, EyeRule, Generator, IrisCode, IrisGeometry, MaskMode, MatchConfig, Template, Threshold,
};
use argus_math::{BitVec, Z16, Z32, Z8};
use argus_mpc::local::{run3, Backend};
use argus_mpc::rep3::Adder;
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
    // The batch is the queries plus a re-capture of its first new identity (an in-batch duplicate).
    let mut batch = queries.clone();
    batch.push(g.genuine_template(&queries[3]).unwrap());
    let modes = [(EyeRule::And, MaskMode::PerBit), (EyeRule::Or, MaskMode::PerBit), (EyeRule::And, MaskMode::Trimmed)];
    agree(&MpcLiftZ16, &db, &batch, &modes);
    agree(&NoLiftZ32, &db, &batch, &modes);
    agree(&MpcLiftF16, &db, &batch, &modes[..2]);
    agree(&MpcLiftGr16, &db, &batch, &modes);
    agree(&PlainMaskZ16, &db, &batch, &[modes[0], (EyeRule::Or, MaskMode::Trimmed)]);
    // The single-query entry point gives the same answers.
    let cfg = MatchConfig::default();
    let ring = Z16::new();
    let mut rng = StdRng::seed_from_u64(9);
    let enrolled: Vec<_> = db.iter().map(|t| share_enrollment(&ring, t, &cfg, &mut rng).unwrap()).collect();
    let q = share_query(&ring, &queries[0], &cfg, &mut rng).unwrap();
    let out = run3(Backend::Memory, NetConfig::default(), |p| {
        let mut sdb = SharedDb::new(ring, IrisGeometry::DEPLOYED.bits());
        for e in &enrolled {
            sdb.push(&e[p.id()])?;
        }
        is_enrolled(p, &q[p.id()], &sdb, &cfg)
    })
    .unwrap();
    assert_eq!(out, vec![true; 3]);
}

/// Shares `db` for enrolment and `batch` as queries, and runs the scheme's batch check (in-batch
/// duplicates resolved) with three parties in memory: each party's result.
fn check_shared<S: IrisScheme>(
    scheme: &S,
    geometry: IrisGeometry,
    db: &[Template],
    batch: &[Template],
    cfg: &MatchConfig,
    tuning: &Tuning,
) -> Vec<argus_iris::protocol::Checked> {
    check_shared_rounds(scheme, geometry, db, batch, cfg, tuning).into_iter().map(|(c, _)| c).collect()
}

/// [`check_shared`] with each party's rounds.
fn check_shared_rounds<S: IrisScheme>(
    scheme: &S,
    geometry: IrisGeometry,
    db: &[Template],
    batch: &[Template],
    cfg: &MatchConfig,
    tuning: &Tuning,
) -> Vec<(argus_iris::protocol::Checked, u64)> {
    let enrolled: Vec<_> = db.iter().map(|t| scheme.share_enrollment(t, cfg).unwrap()).collect();
    let qs: Vec<_> = batch.iter().map(|t| scheme.share_query(t, cfg).unwrap()).collect();
    run3(Backend::Memory, NetConfig::default(), |p| {
        let mut sdb = scheme.new_db(geometry.bits());
        for e in &enrolled {
            scheme.push(&mut sdb, &e[p.id()])?;
        }
        let mine: Vec<_> = qs.iter().map(|q| q[p.id()].clone()).collect();
        let before = p.stats().rounds;
        let checked = scheme.check(p, &mine, &sdb, cfg, tuning, true)?;
        Ok((checked, p.stats().rounds - before))
    })
    .unwrap()
}

/// For every (rule, mask mode): the MPC answer for each query of the batch equals the plaintext
/// one (unique iff it matches no enrolled template and no earlier query of the batch). The first
/// mode also reveals the matches, which must be exactly the plaintext matcher's: database
/// positions, then `s + j` for earlier queries `j` of the batch; it runs with each adder, and
/// with comparison chunks of 1024 (several per batch).
fn agree<S: IrisScheme>(scheme: &S, db: &[Template], batch: &[Template], modes: &[(EyeRule, MaskMode)]) {
    let geometry = IrisGeometry::DEPLOYED;
    let runs = modes.iter().enumerate().flat_map(|(m, &mode)| {
        let first: &[(Adder, usize)] = &[(Adder::Ripple, 0), (Adder::LogDepth, 0), (Adder::Ripple, 1024)];
        let adders = if m == 0 { first } else { &first[..1] };
        adders.iter().map(move |&(adder, compare_chunk)| (m, mode, adder, compare_chunk))
    });
    for (m, (rule, mask_mode), adder, compare_chunk) in runs {
        let cfg = MatchConfig { rule, mask_mode, reveal_matches: m == 0, ..MatchConfig::default() };
        let out = check_shared(scheme, geometry, db, batch, &cfg, &Tuning { adder, compare_chunk });
        let want: Vec<bool> = (0..batch.len())
            .map(|i| {
                find_matches(&batch[i], db, &cfg).unwrap().is_empty()
                    && find_matches(&batch[i], &batch[..i], &cfg).unwrap().is_empty()
            })
            .collect();
        // Re-captures of entries 0, 5, 11 are enrolled; new identities and impostors are unique; the
        // half-matching query is enrolled only under OR; the last query duplicates query 3.
        assert_eq!(want, vec![false, false, false, true, true, rule == EyeRule::And, false], "{rule:?}");
        let matches: Vec<Vec<usize>> = (0..batch.len())
            .map(|i| {
                let earlier = find_matches(&batch[i], &batch[..i], &cfg).unwrap().into_iter().map(|j| db.len() + j);
                find_matches(&batch[i], db, &cfg).unwrap().into_iter().chain(earlier).collect()
            })
            .collect();
        assert!(matches.iter().any(|m| !m.is_empty()));
        for party in &out {
            assert_eq!(party.unique, want, "{} {rule:?} {mask_mode:?} {adder:?} {compare_chunk}", scheme.name());
            if cfg.reveal_matches {
                assert_eq!(party.matches, matches, "{} revealed matches", scheme.name());
            } else {
                assert!(party.matches.iter().all(Vec::is_empty), "nothing revealed unless configured");
            }
        }
    }
}

/// The Shamir database holds 2 bytes per stored bit (codes, and masks or trimmed masks).
#[test]
fn field_database_holds_two_bytes_per_bit() {
    use argus_iris::protocol::schemes::f16 as field;
    let geometry = IrisGeometry::DEPLOYED;
    let t = Generator::new(geometry, 2).unwrap().random_template();
    for (mode, mask_bits) in [(MaskMode::PerBit, geometry.bits()), (MaskMode::Trimmed, geometry.bits() / 2)] {
        let cfg = MatchConfig { mask_mode: mode, ..MatchConfig::default() };
        let shares = field::share_enrollment(&t, &cfg, &mut StdRng::seed_from_u64(1)).unwrap();
        let mut db = field::FieldDb::new(geometry.bits());
        db.push(&shares[0]).unwrap();
        assert_eq!(db.bytes_per_identity(), 2 * 2 * (geometry.bits() + mask_bits));
    }
}

/// The open-iris layout (16384 bits) runs on every scheme: the exact range of
/// `a·ml − b·dot` fits Z_2^30 under the default threshold (Lemma 2's slack asks 33 bits, 31 once
/// the terms lose their common power of two), so the 16-bit schemes lift their products to
/// Z_2^30 as for deployed codes, and the carry count lifts mask products up to 2^15 − 1; public
/// masks' `c − dot` fits 16 bits (`[−11305, 21463]`, where Lemma 1 asks codes below 2^14 bits).
/// Each agrees with the plaintext reference on synthetic codes, and at the corners of the range:
/// fully unmasked codes against themselves (`ml = l = 2^14`, `dot = l`) and against their
/// complements (`dot = −l`: the largest value compared).
#[test]
fn the_open_iris_layout_runs_on_every_scheme() {
    let geometry = IrisGeometry::OPEN_IRIS;
    let mut g = Generator::new(geometry, 6).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let unmasked = |code: BitVec| IrisCode::unmasked(geometry, code).unwrap();
    let full = |rng: &mut StdRng| {
        let (l, r) = (BitVec::random(rng, geometry.bits()), BitVec::random(rng, geometry.bits()));
        Template::new(unmasked(l), unmasked(r)).unwrap()
    };
    let complement =
        |t: &Template| Template::new(unmasked(t.left.code().not()), unmasked(t.right.code().not())).unwrap();
    let mut db: Vec<_> = (0..4).map(|_| g.random_template()).collect();
    let corner = full(&mut rng);
    db.push(corner.clone());
    let (fresh, their) = (full(&mut rng), complement(&corner));
    let batch = vec![
        g.genuine_template(&db[2]).unwrap(), // enrolled already
        g.random_template(),                 // new
        g.impostor(),                        // new
        corner.clone(),                      // itself, unmasked: ml = l, dot = l
        their.clone(),                       // its complement: dot = −l
        fresh.clone(),                       // new, unmasked
        complement(&fresh),                  // against the previous query: dot = −l
        fresh,                               // a duplicate of query 5, unmasked: ml = l, dot = l
    ];
    for (rule, mask_mode) in [(EyeRule::And, MaskMode::PerBit), (EyeRule::Or, MaskMode::Trimmed)] {
        let cfg = MatchConfig { rule, mask_mode, ..MatchConfig::default() };
        let want: Vec<bool> = (0..batch.len())
            .map(|i| {
                find_matches(&batch[i], &db, &cfg).unwrap().is_empty()
                    && find_matches(&batch[i], &batch[..i], &cfg).unwrap().is_empty()
            })
            .collect();
        assert_eq!(want, [false, true, true, false, true, true, true, false]);
        let mut answers = vec![
            ("mpclift-Z16", unique_by(&MpcLiftZ16, geometry, &db, &batch, &cfg)),
            ("nolift-Z32", unique_by(&NoLiftZ32, geometry, &db, &batch, &cfg)),
            ("mpclift-GR16", unique_by(&MpcLiftGr16, geometry, &db, &batch, &cfg)),
        ];
        answers.push(("plain-mask-Z16", unique_by(&PlainMaskZ16, geometry, &db, &batch, &cfg)));
        if mask_mode == MaskMode::PerBit {
            answers.push(("mpclift-F16", unique_by(&MpcLiftF16, geometry, &db, &batch, &cfg)));
        }
        for (name, parties) in answers {
            for party in parties {
                assert_eq!(party, want, "{name} {rule:?} {mask_mode:?}");
            }
        }
    }
}

/// Each party's "unique" answers from [`check_shared`].
fn unique_by<S: IrisScheme>(
    scheme: &S,
    geometry: IrisGeometry,
    db: &[Template],
    batch: &[Template],
    cfg: &MatchConfig,
) -> Vec<Vec<bool>> {
    check_shared(scheme, geometry, db, batch, cfg, &Tuning::default()).into_iter().map(|c| c.unique).collect()
}

/// Where the 16-bit schemes stop: mask products of 2^15 (codes of 2^15 bits, per-bit masks) do
/// not fit the carry count, nor their values Z_2^30, and the error names the scheme that runs
/// them. Public masks compare `c − dot` in 16 bits: open-iris codes fit under the default
/// threshold, not under a threshold of 0 (`c = ml`, up to `2·l = 2^15`).
#[test]
fn codes_too_long_for_16_bit_shares_are_refused_with_a_hint() {
    let long = IrisGeometry::new(32, 256, 2, 2).unwrap();
    let t = Generator::new(long, 1).unwrap().random_template();
    let cfg = MatchConfig::default();
    for e in [
        MpcLiftZ16.share_query(&t, &cfg).unwrap_err().to_string(),
        MpcLiftGr16.share_query(&t, &cfg).unwrap_err().to_string(),
    ] {
        assert!(e.contains("below 2^15") && e.contains("nolift-Z32-rep3"), "{e}");
    }
    NoLiftZ32.share_query(&t, &cfg).unwrap();
    let open = Generator::new(IrisGeometry::OPEN_IRIS, 1).unwrap().random_template();
    PlainMaskZ16.share_query(&open, &cfg).unwrap();
    let zero = MatchConfig { threshold: Threshold::new(0, 16).unwrap(), ..cfg };
    let e = PlainMaskZ16.share_query(&open, &zero).unwrap_err().to_string();
    assert!(e.contains("[0, 32768]") && e.contains("use a secret-mask scheme"), "{e}");
}

#[test]
fn a_ring_too_small_for_the_comparison_is_refused() {
    let mut g = Generator::new(IrisGeometry::DEPLOYED, 1).unwrap();
    let t = g.random_template();
    let e = share_query(&Z8::new(), &t, &MatchConfig::default(), &mut StdRng::seed_from_u64(1)).unwrap_err();
    assert!(e.to_string().contains("need Z_2^k with k >= 22; got Z_2^8"), "{e}");
}

/// A batch is checked in one protocol run: each query against the database and against the
/// earlier queries of the batch, so two captures of one new person are not both enrolled.
#[test]
fn batches_resolve_duplicates_among_themselves() {
    use argus_iris::protocol::schemes::rep3::check_batch;
    let geometry = IrisGeometry::DEPLOYED;
    let mut g = Generator::new(geometry, 8).unwrap();
    let db: Vec<_> = (0..6).map(|_| g.random_template()).collect();
    let fresh = g.random_template();
    let batch = [
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
            check_batch(p, &mine, &sdb, &cfg, &Tuning::default(), true)
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
            assert_eq!(party.unique, want, "database of {db_size}");
        }
    }
}

/// GR(2^16, 4) products are local, and what follows is MPCLift-Z16's: the whole check sends the
/// same bytes in the same rounds as the replicated Z_2^16 scheme on the same batch.
#[test]
fn galois_check_costs_what_mpclift_z16_costs() {
    let mut g = Generator::new(IrisGeometry::new(4, 32, 2, 2).unwrap(), 12).unwrap();
    let db: Vec<_> = (0..5).map(|_| g.random_template()).collect();
    let batch = [g.genuine_template(&db[2]).unwrap(), g.random_template()];
    let cfg = MatchConfig::default();
    fn cost<S: IrisScheme>(
        s: &S,
        db: &[Template],
        batch: &[Template],
        cfg: &MatchConfig,
        adder: Adder,
    ) -> Vec<(u64, u64)> {
        let enrolled: Vec<_> = db.iter().map(|t| s.share_enrollment(t, cfg).unwrap()).collect();
        let qs: Vec<_> = batch.iter().map(|t| s.share_query(t, cfg).unwrap()).collect();
        run3(Backend::Memory, NetConfig::default(), |p| {
            let mut d = s.new_db(db[0].left.geometry().bits());
            for e in &enrolled {
                s.push(&mut d, &e[p.id()])?;
            }
            let mine: Vec<_> = qs.iter().map(|q| q[p.id()].clone()).collect();
            let before = p.stats();
            s.check(p, &mine, &d, cfg, &Tuning { adder, compare_chunk: 0 }, true)?;
            let used = p.stats() - before;
            Ok((used.bytes_sent, used.rounds))
        })
        .unwrap()
    }
    let ripple = Adder::Ripple;
    assert_eq!(cost(&MpcLiftGr16, &db, &batch, &cfg, ripple), cost(&MpcLiftZ16, &db, &batch, &cfg, ripple));
    // Revealing the matches opens the nq·(s + nq) per-target bits: one more round, that many bits.
    let reveal = MatchConfig { reveal_matches: true, ..cfg.clone() };
    let bits = (batch.len() * (db.len() + batch.len())).div_ceil(8) as u64;
    let (plain, revealing) =
        (cost(&MpcLiftGr16, &db, &batch, &cfg, ripple), cost(&MpcLiftGr16, &db, &batch, &reveal, ripple));
    for (a, b) in plain.iter().zip(&revealing) {
        assert_eq!((b.0, b.1), (a.0 + bits, a.1 + 1));
    }
    // The log-depth adder: the batch is one comparison chunk, whose k-bit MSB (the lifted
    // values' width: 27 bits for these 512-bit codes under 69/200's stand-in 45219/2^17) takes
    // Kogge-Stone's 1 + ⌈log2(k − 1)⌉ rounds instead of k − 1, for more AND gates.
    let k = argus_iris::protocol::comparison_bits(&Z16::new(), 512, &cfg).unwrap() as u64;
    assert_eq!(k, 27);
    for (a, b) in plain.iter().zip(&cost(&MpcLiftGr16, &db, &batch, &cfg, Adder::LogDepth)) {
        assert!(b.0 > a.0 && a.1 - b.1 == (k - 1) - (1 + (k - 2).ilog2() as u64 + 1), "{a:?} {b:?}");
    }
}

/// A batch whose eyes each fill a comparison chunk runs the GR(2^16, 4) check as a pipeline (each
/// eye in two pieces of the database, a piece compared while the next one's products run on a
/// second thread): it still agrees with the plaintext reference, entry by entry, with duplicates
/// of the first entry, the last entry of the first piece, the first of the second and the last
/// entry, one within the batch, and revealed matches in the right places. With either adder at
/// its default chunk size (the log-depth one's chunks are twice as large), and with a configured
/// `compare_chunk` of 4096 comparisons, which splits every eye into several chunks and costs
/// rounds, not answers.
#[test]
fn galois_pipeline_agrees_with_plaintext() {
    let mut rounds = Vec::new();
    for adder in [Adder::Ripple, Adder::LogDepth] {
        galois_pipeline_agrees_with_plaintext_with(adder, 0);
        rounds.push(galois_pipeline_agrees_with_plaintext_with(adder, 4096));
    }
    assert!(rounds[0] > rounds[1], "log depth takes fewer rounds: {rounds:?}");
}

/// Returns the busiest party's rounds.
fn galois_pipeline_agrees_with_plaintext_with(adder: Adder, compare_chunk: usize) -> u64 {
    let geometry = IrisGeometry::new(4, 32, 2, 2).unwrap();
    let mut g = Generator::new(geometry, 21).unwrap();
    let cfg = MatchConfig { reveal_matches: true, ..MatchConfig::default() };
    let tuning = Tuning { adder, compare_chunk };
    let rot = cfg.rotations.clone().count();
    let nq = 7;
    let chunk = tuning.comparisons_per_chunk(adder);
    let size = chunk / (rot * nq) + 1;
    assert!(rot * nq * (size + nq) >= chunk, "an eye fills a comparison chunk");
    let db: Vec<_> = (0..size).map(|_| g.random_template()).collect();
    let fresh = g.random_template();
    let batch = [
        g.genuine_template(&db[0]).unwrap(),
        g.random_template(),
        g.genuine_template(&db[size / 2]).unwrap(),
        fresh.clone(),
        g.genuine_template(&fresh).unwrap(),
        g.genuine_template(&db[size / 2 - 1]).unwrap(),
        g.genuine_template(&db[size - 1]).unwrap(),
    ];
    let (out, rounds): (Vec<_>, Vec<u64>) =
        check_shared_rounds(&MpcLiftGr16, geometry, &db, &batch, &cfg, &tuning).into_iter().unzip();
    for (i, q) in batch.iter().enumerate() {
        let mut want = find_matches(q, &db, &cfg).unwrap();
        want.extend(find_matches(q, &batch[..i], &cfg).unwrap().into_iter().map(|j| size + j));
        for party in &out {
            assert_eq!(party.matches[i], want, "query {i}, {adder:?}");
            assert_eq!(party.unique[i], want.is_empty(), "query {i}, {adder:?}");
        }
    }
    assert_eq!(out[0].unique, vec![false, true, false, true, false, false, false]);
    let rounds = rounds.into_iter().max().unwrap();
    if compare_chunk == 0 {
        return rounds;
    }
    // The same batch at the default chunk size (both eyes in one phase here): fewer rounds.
    let default = Tuning { compare_chunk: 0, ..tuning };
    let fewer = check_shared_rounds(&MpcLiftGr16, geometry, &db, &batch, &cfg, &default);
    assert_eq!(fewer[0].0.unique, out[0].unique);
    let default_rounds = fewer.iter().map(|c| c.1).max().unwrap();
    assert!(default_rounds < rounds, "{adder:?}: {default_rounds} rounds in one phase, {rounds} in chunks of 4096");
    rounds
}

/// The threshold is strict and exact in every scheme: `hd/ml` equal to 0.345 (69/200 at 200 and
/// 12 800 valid bits) is not a match, one bit less is; and the fraction closest below 0.345 that
/// 12 800-bit codes can reach (4357/12629, on the wrong side of 22609/2^16: no 16-bit fraction
/// decides like 0.345) is a match, one bit more is not. Per-bit
/// masks, each query against its own enrolled template, both eyes at the distance.
#[test]
fn the_threshold_is_strict_and_exact_in_every_scheme() {
    let geometry = IrisGeometry::DEPLOYED;
    let n = geometry.bits();
    let mut g = Generator::new(geometry, 35).unwrap();
    let cases = [
        (12800, 4416, false),
        (12800, 4415, true),
        (12629, 4357, true),
        (12629, 4358, false),
        (200, 69, false),
        (200, 68, true),
    ];
    let full = |c: &IrisCode| IrisCode::unmasked(geometry, c.code().clone()).unwrap();
    let db: Vec<Template> = cases
        .iter()
        .map(|_| {
            let t = g.random_template();
            Template::new(full(&t.left), full(&t.right)).unwrap()
        })
        .collect();
    // The enrolled code with its first `hd` bits flipped, valid on its first `ml` bits.
    let at = |e: &IrisCode, ml: usize, hd: usize| {
        let (mut code, mut mask) = (e.code().clone(), BitVec::ones(n));
        (0..hd).for_each(|i| code.set(i, !code.get(i)));
        (ml..n).for_each(|i| mask.set(i, false));
        IrisCode::new(geometry, code, mask).unwrap()
    };
    let batch: Vec<Template> = cases
        .iter()
        .zip(&db)
        .map(|(&(ml, hd, _), e)| Template::new(at(&e.left, ml, hd), at(&e.right, ml, hd)).unwrap())
        .collect();
    let cfg = MatchConfig::default();
    assert_eq!(cfg.threshold, Threshold::ratio(69, 200).unwrap());
    let want: Vec<bool> = cases.iter().map(|&(_, _, m)| !m).collect();
    let plain: Vec<bool> = batch.iter().map(|q| find_matches(q, &db, &cfg).unwrap().is_empty()).collect();
    assert_eq!(plain, want, "the plaintext twin");
    fn run<S: IrisScheme>(s: &S, db: &[Template], batch: &[Template], cfg: &MatchConfig, want: &[bool]) {
        for party in check_shared(s, IrisGeometry::DEPLOYED, db, batch, cfg, &Tuning::default()) {
            assert_eq!(party.unique, want, "{}", s.name());
        }
    }
    run(&MpcLiftZ16, &db, &batch, &cfg, &want);
    run(&MpcLiftGr16, &db, &batch, &cfg, &want);
    run(&NoLiftZ32, &db, &batch, &cfg, &want);
    run(&MpcLiftF16, &db, &batch, &cfg, &want);
    run(&PlainMaskZ16, &db, &batch, &cfg, &want);
}

/// Queries whose mask leaves an eye fewer than `⌈min_valid · len⌉` valid bits are "short" in every
/// scheme, exactly at the boundary and with the plaintext twin: valid bits `min − 1` (short), `min`
/// and `min + 1` (not) on either eye, all masked and all valid, with per-bit and trimmed masks
/// (whose counts go by pairs) and with the default quarter and a minimum of 0; one bit revealed
/// per query, the same at every party, in rounds that do not depend on the batch.
#[test]
fn queries_with_too_few_valid_bits_are_short_in_every_scheme() {
    let geometry = IrisGeometry::DEPLOYED;
    let n = geometry.bits();
    let mut g = Generator::new(geometry, 41).unwrap();
    // The first `valid` bits valid (whole pairs: `valid` even).
    let masked = |c: &IrisCode, valid: usize| {
        let mut mask = BitVec::ones(n);
        (valid..n).for_each(|i| mask.set(i, false));
        IrisCode::new(geometry, c.code().clone(), mask).unwrap()
    };
    for (mode, quarter) in [(MaskMode::PerBit, 1), (MaskMode::Trimmed, 4)] {
        for min_valid in [Threshold::ratio(1, 4).unwrap(), Threshold::ratio(quarter - 1, 4 * quarter).unwrap()] {
            let cfg = MatchConfig { mask_mode: mode, min_valid, ..MatchConfig::default() };
            let min = cfg.min_valid_bits(n) as usize;
            // even counts around the boundary (pairs count whole)
            let edge = |k: isize| ((min as isize + k).clamp(0, n as isize) as usize).div_ceil(2) * 2;
            let cases = [(edge(-2), n), (n, edge(-2)), (edge(0), edge(0)), (edge(2), n), (0, n), (n, n), (0, 0)];
            let batch: Vec<Template> = cases
                .iter()
                .map(|&(l, r)| {
                    let t = g.random_template();
                    Template::new(masked(&t.left, l), masked(&t.right, r)).unwrap()
                })
                .collect();
            let want: Vec<bool> = batch.iter().map(|t| cfg.too_few_valid_bits(t)).collect();
            let counted: Vec<bool> = cases.iter().map(|&(l, r)| l.min(r) < min).collect();
            assert_eq!(want, counted, "the twin counts valid bits ({mode:?}, min {min})");
            fn run<S: IrisScheme>(s: &S, batch: &[Template], cfg: &MatchConfig, want: &[bool]) -> u64 {
                let qs: Vec<_> = batch.iter().map(|t| s.share_query(t, cfg).unwrap()).collect();
                let out = run3(Backend::Memory, NetConfig::default(), |p| {
                    let mine: Vec<_> = qs.iter().map(|q| q[p.id()].clone()).collect();
                    let before = p.stats().rounds;
                    let short = s.short_masks(p, &mine, IrisGeometry::DEPLOYED.bits(), cfg, &Tuning::default())?;
                    Ok((short, p.stats().rounds - before))
                })
                .unwrap();
                for (short, _) in &out {
                    assert_eq!(short, want, "{} {:?}", s.name(), cfg.mask_mode);
                }
                out.iter().map(|o| o.1).max().unwrap()
            }
            let z16 = run(&MpcLiftZ16, &batch, &cfg, &want);
            run(&NoLiftZ32, &batch, &cfg, &want);
            run(&MpcLiftF16, &batch, &cfg, &want);
            let gr = run(&MpcLiftGr16, &batch, &cfg, &want);
            assert_eq!(run(&PlainMaskZ16, &batch, &cfg, &want), 1, "public masks: one exchange of findings");
            // rounds independent of the batch
            assert_eq!(run(&MpcLiftGr16, &batch[..1], &cfg, &want[..1]), gr);
            // a reshare, the 16-bit two-operand MSB (ripple), the OR of the eyes, the reveal
            assert_eq!((z16, gr), (19, 19), "the same 16-bit MSB");
        }
    }
    // A client that sends the nodes different public masks (node 0 a short one, the others a
    // full one) is refused by all three alike.
    let cfg = MatchConfig::default();
    let t = g.random_template();
    let (short, full) = (Template::new(masked(&t.left, 10), t.right.clone()).unwrap(), t.clone());
    let (a, b) = (PlainMaskZ16.share_query(&short, &cfg).unwrap(), PlainMaskZ16.share_query(&full, &cfg).unwrap());
    let mixed = [a[0].clone(), b[1].clone(), b[2].clone()];
    let out = run3(Backend::Memory, NetConfig::default(), |p| {
        PlainMaskZ16.short_masks(
            p,
            std::slice::from_ref(&mixed[p.id()]),
            IrisGeometry::DEPLOYED.bits(),
            &cfg,
            &Tuning::default(),
        )
    })
    .unwrap();
    assert_eq!(out, vec![vec![true]; 3]);
}

/// Mirror attacks (issue 35, item 9): every scheme's mirrored query shares, checked against the
/// database alone, agree with the plaintext twin (`Template::mirrored`): the mirror image of an
/// enrolled template matches nothing as presented and matches its identity mirrored; a random
/// template matches neither way; an enrolled one as presented matches and its mirror does not.
#[test]
fn mirrored_queries_agree_with_the_twin_in_every_scheme() {
    let geometry = IrisGeometry::DEPLOYED;
    let mut g = Generator::new(geometry, 61).unwrap();
    let db: Vec<Template> = (0..4).map(|_| g.random_template()).collect();
    let mut batch = vec![db[1].mirrored(), g.random_template(), db[2].clone()];
    batch.push(g.genuine_template(&db[3]).unwrap().mirrored());
    fn run<S: IrisScheme>(s: &S, db: &[Template], batch: &[Template], cfg: &MatchConfig) -> Vec<(bool, bool)> {
        let geometry = IrisGeometry::DEPLOYED;
        let enrolled: Vec<_> = db.iter().map(|t| s.share_enrollment(t, cfg).unwrap()).collect();
        let qs: Vec<_> = batch.iter().map(|t| s.share_query(t, cfg).unwrap()).collect();
        let out = run3(Backend::Memory, NetConfig::default(), |p| {
            let mut d = s.new_db(geometry.bits());
            for e in &enrolled {
                s.push(&mut d, &e[p.id()])?;
            }
            let mine: Vec<_> = qs.iter().map(|q| q[p.id()].clone()).collect();
            let mirrored = s.mirrored(p, &mine, geometry)?;
            let cfg = MatchConfig { reveal_matches: false, ..cfg.clone() };
            let as_is = s.check(p, &mine, &d, &cfg, &Tuning::default(), false)?.unique;
            let mirror = s.check(p, &mirrored, &d, &cfg, &Tuning::default(), false)?.unique;
            Ok(as_is.into_iter().zip(mirror).collect::<Vec<_>>())
        })
        .unwrap();
        assert!(out.iter().all(|o| *o == out[0]), "{}: the parties agree", s.name());
        out[0].clone()
    }
    for mode in [MaskMode::PerBit, MaskMode::Trimmed] {
        let cfg = MatchConfig { mask_mode: mode, ..MatchConfig::default() };
        let twin: Vec<(bool, bool)> = batch
            .iter()
            .map(|q| {
                let unique = |t: &Template| find_matches(t, &db, &cfg).unwrap().is_empty();
                (unique(q), unique(&q.mirrored()))
            })
            .collect();
        assert_eq!(twin, [(true, false), (true, true), (false, true), (true, false)], "the twin, {mode:?}");
        assert_eq!(run(&MpcLiftZ16, &db, &batch, &cfg), twin, "{mode:?}");
        assert_eq!(run(&NoLiftZ32, &db, &batch, &cfg), twin, "{mode:?}");
        assert_eq!(run(&MpcLiftF16, &db, &batch, &cfg), twin, "{mode:?}");
        assert_eq!(run(&MpcLiftGr16, &db, &batch, &cfg), twin, "{mode:?}");
        assert_eq!(run(&PlainMaskZ16, &db, &batch, &cfg), twin, "{mode:?}");
    }
}

/// The kernel planner's choice changes nothing but the time: the GR check on every candidate
/// path of its correlations (installed one after the other) gives the plaintext answers, and
/// `plan_kernels` plans each correlation the scheme names, installing a candidate.
#[test]
fn every_kernel_path_gives_the_same_galois_check() {
    use argus_math::kernels;
    let geometry = IrisGeometry::new(4, 32, 2, 2).unwrap();
    let mut g = Generator::new(geometry, 33).unwrap();
    let cfg = MatchConfig { reveal_matches: true, ..MatchConfig::default() };
    let db: Vec<_> = (0..40).map(|_| g.random_template()).collect();
    let batch = [g.genuine_template(&db[3]).unwrap(), g.random_template(), g.genuine_template(&db[39]).unwrap()];
    let want: Vec<Vec<usize>> = batch.iter().map(|q| find_matches(q, &db, &cfg).unwrap()).collect();
    let shapes = MpcLiftGr16.correlations(geometry, &cfg);
    assert_eq!(shapes.len(), 1, "per-bit masks: code and mask correlations of one shape");
    let trimmed = MatchConfig { mask_mode: MaskMode::Trimmed, ..cfg.clone() };
    assert_eq!(MpcLiftGr16.correlations(geometry, &trimmed).len(), 2, "trimmed masks: half as wide");
    assert!(MpcLiftZ16.correlations(geometry, &cfg).is_empty());
    let shape = shapes[0];
    let candidates = kernels::correlation_candidates(shape, batch.len());
    assert!(candidates.len() >= 5, "{candidates:?}");
    for path in candidates {
        kernels::install_correlation_path(shape, batch.len(), path).unwrap();
        assert_eq!(argus_iris::protocol::kernel_name(&MpcLiftGr16, geometry, &cfg, batch.len()), path.to_string());
        for party in check_shared(&MpcLiftGr16, geometry, &db, &batch, &cfg, &Tuning::default()) {
            assert_eq!(party.matches[..], want[..], "{path}");
        }
    }
    let options = kernels::PlanOptions { replan: true, ..Default::default() };
    let plans = argus_iris::protocol::plan_kernels(&MpcLiftGr16, geometry, &cfg, batch.len(), &options);
    assert_eq!(plans.len(), 1);
    assert!(kernels::correlation_candidates(shape, batch.len()).iter().any(|&c| {
        // The winner may be a candidate at another block size.
        kernels::CorrelationPath { block_rows: plans[0].path.block_rows, ..c } == plans[0].path
    }));
    assert_eq!(kernels::correlation_path(shape, batch.len()), plans[0].path);
}

/// The comparison chunk's planner times every candidate and picks the fastest it measured; with
/// a cache file a second plan reads that pick back instead of measuring, and a line that is no
/// candidate is measured over. The log-depth adder and the schemes whose comparison is not
/// timed plan nothing. (That every chunk gives the same bits: `compare`'s chunking test.)
#[test]
fn the_compare_chunk_plan_is_the_fastest_candidate_measured_and_is_remembered() {
    use argus_iris::protocol::{plan_compare_chunk, CHUNK_CANDIDATES};
    use argus_math::kernels::{PlanOptions, PlanSource};
    use argus_mpc::rep3::Adder;
    let geometry = IrisGeometry::DEPLOYED;
    let cfg = MatchConfig::default();
    let dir = std::env::temp_dir().join(format!("argus-chunk-plan-{}", std::process::id()));
    let file = dir.join("plans");
    let options = PlanOptions { cache: Some(file.clone()), budget: std::time::Duration::ZERO, replan: false };
    let plan = plan_compare_chunk(&MpcLiftGr16, geometry, &cfg, Adder::Ripple, &options).unwrap().unwrap();
    assert_eq!(plan.source, PlanSource::Measured);
    assert!(plan.cache_error.is_none(), "{:?}", plan.cache_error);
    let seconds = &plan.times.seconds;
    assert_eq!(seconds.iter().map(|m| m.0).collect::<Vec<_>>(), CHUNK_CANDIDATES);
    assert!(seconds.iter().all(|m| m.1.is_finite() && m.1 > 0.0), "{seconds:?}");
    // The MSB's rounds and a few more per chunk (reshare, carry count).
    assert!((30..60).contains(&plan.times.rounds_per_chunk), "{}", plan.times.rounds_per_chunk);
    let fastest = seconds.iter().min_by(|x, y| x.1.total_cmp(&y.1)).unwrap();
    assert_eq!(plan.local_chunk(), fastest.0);
    let again = plan_compare_chunk(&MpcLiftGr16, geometry, &cfg, Adder::Ripple, &options).unwrap().unwrap();
    assert_eq!((again.source, &again.times), (PlanSource::Cache, &plan.times));
    let text = std::fs::read_to_string(&file).unwrap();
    let line = text.lines().find(|l| l.starts_with("compare-chunk v2")).unwrap();
    assert!(line.contains(&format!("scheme {} bits 12800", MpcLiftGr16.name())), "{line}");
    std::fs::write(&file, text.replace("rounds:", "turns:")).unwrap();
    let over = plan_compare_chunk(&MpcLiftGr16, geometry, &cfg, Adder::Ripple, &options).unwrap().unwrap();
    assert_eq!(over.source, PlanSource::Measured);
    assert!(plan_compare_chunk(&MpcLiftGr16, geometry, &cfg, Adder::LogDepth, &options).unwrap().is_none());
    assert!(plan_compare_chunk(&PlainMaskZ16, geometry, &cfg, Adder::Ripple, &options).unwrap().is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}
