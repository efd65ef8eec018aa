//! Sessions of p parties: pairwise streams agreed at connection, zero-sharings that sum to zero,
//! the runner for p local parties, over both transports.

use argus_math::{Ring, Z64};
use argus_mpc::local::{run, Backend};
use argus_net::NetConfig;
use rand_core::RngCore;

fn cfg() -> NetConfig {
    NetConfig::with_timeout(std::time::Duration::from_secs(30))
}

/// Each party draws from the stream it shares with every other and sends the draws; every pair
/// must have drawn the same, and the parties' zero shares must sum to zero.
fn check_session(parties: usize, backend: Backend) {
    let ring = Z64::new();
    let out = run(parties, backend, cfg(), |p| {
        let (me, n) = (p.id(), p.n());
        let draws: Vec<u64> =
            (0..n).map(|j| if j == me { 0 } else { p.prg.with(j).expect("a peer").next_u64() }).collect();
        for j in (0..n).filter(|&j| j != me) {
            p.net().send(j, draws[j].to_le_bytes().to_vec())?;
        }
        let mut theirs = vec![0u64; n];
        for (j, t) in theirs.iter_mut().enumerate().filter(|(j, _)| *j != me) {
            *t = u64::from_le_bytes(p.net().recv(j)?.try_into().expect("8 bytes"));
        }
        let zero = p.prg.zero_share(&ring, 64);
        let round = p.round_time(3)?;
        let chosen = p.value_of_party0(1000 + me as u64)?;
        Ok((me, draws, theirs, zero, (round, chosen)))
    })
    .unwrap();
    assert_eq!(out.len(), parties);
    for (me, draws, theirs, _, _) in &out {
        for j in (0..parties).filter(|j| j != me) {
            assert_eq!(draws[j], theirs[j], "{parties} parties: streams of {me} and {j} differ");
        }
    }
    for i in 0..64 {
        let sum = out.iter().fold(0u64, |acc, o| ring.add(acc, o.3[i]));
        assert_eq!(sum, 0, "{parties} parties: zero shares do not sum to zero");
    }
    // every party learns party 0's round time and party 0's value
    assert!(out.iter().all(|o| o.4 == out[0].4));
    assert_eq!(out[0].4 .1, 1000);
}

#[test]
fn sessions_of_2_to_16_parties_in_memory() {
    for parties in 2..=16 {
        check_session(parties, Backend::Memory);
    }
}

#[test]
fn sessions_over_tcp_with_mutual_tls() {
    for parties in [2, 3, 5] {
        check_session(parties, Backend::Tcp);
    }
}

#[test]
fn a_session_needs_two_parties_and_schemes_check_their_count() {
    let e = run(1, Backend::Memory, cfg(), |_| Ok(())).unwrap_err();
    assert!(e.to_string().contains("needs 2 parties"), "{e}");
    let errs = run(4, Backend::Memory, cfg(), |p| {
        Ok(argus_mpc::additive3::Additive3::new(p, Z64::new()).map(|_| ()).unwrap_err().to_string())
    })
    .unwrap();
    assert!(errs[0].contains("additive3 needs 3 parties, the session has 4"), "{}", errs[0]);
}
