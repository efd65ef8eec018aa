//! Interoperability with open-iris as its users run it: templates serialized by open-iris 1.x
//! itself (`IrisTemplate.serialize()`), and open-iris's own decisions
//! (`SimpleHammingDistanceMatcher(rotation_shift=15)` at 0.345 on both eyes), made by
//! `scripts/open_iris_fixtures.py` with open-iris from PyPI: Argus's plaintext matcher and its
//! MPC check (the default scheme, matches revealed) decide every query against every enrolled
//! identity exactly as open-iris does.

use argus_iris::protocol::scheme::IrisScheme;
use argus_iris::protocol::schemes::MpcLiftGr16;
use argus_iris::{find_matches, IrisCode, MatchConfig, Template};
use argus_mpc::local::{run3, Backend};
use argus_net::NetConfig;
use serde_json::Value;

fn template(v: &Value) -> Template {
    let eye = |e: &Value| IrisCode::from_open_iris_json(&e.to_string()).expect("open-iris's serialize() output");
    Template::new(eye(&v["left"]), eye(&v["right"])).unwrap()
}

#[test]
fn argus_decides_as_open_iris_on_its_own_serialized_templates() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/open-iris-decisions.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!((doc["threshold"].as_f64(), doc["rotation_shift"].as_u64()), (Some(0.345), Some(15)));
    let db: Vec<Template> = doc["enrolled"].as_array().unwrap().iter().map(template).collect();
    let queries = doc["queries"].as_array().unwrap();
    let batch: Vec<Template> = queries.iter().map(template).collect();
    let want: Vec<Vec<usize>> = queries
        .iter()
        .map(|q| q["matches"].as_array().unwrap().iter().map(|i| i.as_u64().unwrap() as usize).collect())
        .collect();
    // The cases happened: genuine pairs on both sides of the threshold, ties at exactly 0.345
    // (open-iris: not a match), queries with one genuine eye.
    let kind = |k: &'static str| queries.iter().zip(&want).filter(move |(q, _)| q["kind"] == k);
    assert!(kind("genuine").any(|(_, m)| !m.is_empty()) && kind("genuine").any(|(_, m)| m.is_empty()));
    assert!(kind("tie").count() >= 10 && kind("tie").all(|(_, m)| m.is_empty()));
    assert!(kind("one-eye").count() >= 10);

    let cfg = MatchConfig::default();
    for (i, (q, w)) in batch.iter().zip(&want).enumerate() {
        assert_eq!(&find_matches(q, &db, &cfg).unwrap(), w, "query {i} ({})", queries[i]["kind"]);
    }

    let scheme = MpcLiftGr16;
    let cfg = MatchConfig { reveal_matches: true, ..cfg };
    let enrolled: Vec<_> = db.iter().map(|t| scheme.share_enrollment(t, &cfg).unwrap()).collect();
    let shared: Vec<_> = batch.iter().map(|t| scheme.share_query(t, &cfg).unwrap()).collect();
    let len = db[0].left.geometry().bits();
    let out = run3(Backend::Memory, NetConfig::default(), |p| {
        let mut d = scheme.new_db(len);
        for e in &enrolled {
            scheme.push(&mut d, &e[p.id()])?;
        }
        let mine: Vec<_> = shared.iter().map(|q| q[p.id()].clone()).collect();
        scheme.check(p, &mine, &d, &cfg, &argus_iris::protocol::Tuning::default(), false)
    })
    .unwrap();
    for party in out {
        assert_eq!(party.matches, want);
        assert_eq!(party.unique, want.iter().map(Vec::is_empty).collect::<Vec<_>>());
    }
}
