use argus_net::NetConfig;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::bristol::{bits_to_hex, hex_to_bits, parse, BristolError};
use super::*;
use crate::local::{run, Backend};

const AES: &str = include_str!("../../../../data/circuits/aes_128.txt");
const SHA: &str = include_str!("../../../../data/circuits/sha256.txt");

fn aes_eval(key: &str, pt: &str) -> String {
    let c = parse(AES, 2).unwrap().circuit;
    bits_to_hex(&c.eval(&[hex_to_bits(key, 128).unwrap(), hex_to_bits(pt, 128).unwrap()]).unwrap())
}

#[test]
fn bristol_aes_gives_the_fips_197_answers() {
    assert_eq!(
        aes_eval("000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff"),
        "69c4e0d86a7b0430d8cdb78070b4c55a"
    );
    assert_eq!(aes_eval(&"0".repeat(32), &"0".repeat(32)), "66e94bd4ef8a2c3b884cfa59ca342b2e");
    let b = parse(AES, 2).unwrap();
    assert_eq!((b.input_widths, b.output_widths), (vec![128, 128], vec![128]));
    let k = b.circuit.counts();
    assert_eq!((k.and, k.xor, k.inv, k.vs), (6400, 28176, 2087, 0));
}

#[test]
fn bristol_sha256_compresses_the_empty_message() {
    let c = parse(SHA, 2).unwrap().circuit;
    let block = format!("80{}", "0".repeat(126));
    let iv = "6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19";
    let out = c.eval(&[hex_to_bits(&block, 512).unwrap(), hex_to_bits(iv, 256).unwrap()]).unwrap();
    assert_eq!(bits_to_hex(&out), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

#[test]
fn hex_round_trips_and_refuses_what_does_not_fit() {
    assert_eq!(bits_to_hex(&hex_to_bits("0a1f", 16).unwrap()), "0a1f");
    assert_eq!(hex_to_bits("1", 3).unwrap(), vec![true, false, false]);
    assert!(hex_to_bits("10", 4).is_err());
    assert!(hex_to_bits("0g", 8).is_err());
    assert!(hex_to_bits("", 8).is_err());
    assert_eq!(hex_to_bits("0x0F", 8).unwrap(), hex_to_bits("f", 8).unwrap());
}

fn bad(text: &str) -> BristolError {
    parse(text, 2).unwrap_err()
}

#[test]
fn malformed_bristol_files_name_their_line() {
    let head = "2 5\n2 1 1\n1 1\n\n";
    assert!(parse(&format!("{head}2 1 0 1 2 XOR\n2 1 2 1 4 AND\n"), 2).is_ok());
    let e = bad(&format!("{head}2 1 0 1 2 XOR\n2 1 2 1 4 NAND\n"));
    assert_eq!(e.line, 6);
    assert!(e.reason.contains("unknown gate `NAND`"), "{e}");
    let e = bad(&format!("{head}2 1 0 1 2 XOR\n1 1 2 4 AND\n"));
    assert_eq!(e.line, 6);
    assert!(e.reason.contains("takes 2 inputs"), "{e}");
    // a wire read before it is set: also how a cycle shows
    let e = bad(&format!("{head}2 1 0 3 2 XOR\n2 1 2 1 3 AND\n"));
    assert_eq!(e.line, 5);
    assert!(e.reason.contains("wire 3 is read before"), "{e}");
    let e = bad(&format!("{head}2 1 0 1 9 XOR\n2 1 2 1 4 AND\n"));
    assert_eq!(e.line, 5);
    assert!(e.reason.contains("beyond"), "{e}");
    let e = bad(&format!("{head}2 1 0 1 2 XOR\n"));
    assert!(e.reason.contains("1 gates, the header says 2"), "{e}");
    let e = bad(&format!("{head}2 1 0 1 2 XOR\n2 1 2 x 4 AND\n"));
    assert_eq!((e.line, e.reason.as_str()), (6, "`x` is not a number"));
    let e = bad("2 5\n2 1 1\n");
    assert!(e.reason.contains("ends before"), "{e}");
    // set twice
    let e = bad(&format!("{head}2 1 0 1 2 XOR\n2 1 0 1 2 AND\n"));
    assert_eq!(e.line, 6);
    // more input values than parties
    assert!(parse("1 4\n3 1 1 1\n1 1\n2 1 0 1 3 XOR\n", 2).unwrap_err().reason.contains("3 input values"));
    // more parties than a circuit may have, even with no gates at all
    let e = parse("0 0\n0\n0\n", 17).unwrap_err();
    assert_eq!(e.line, 1, "{e}");
    assert!(e.reason.contains("1 to 16"), "{e}");
}

/// A random circuit of `p` parties: `inputs` bits each, then `gates` random gates (XOR, INV,
/// AND, VS) over the wires so far, every fourth wire an output.
fn random_circuit(rng: &mut StdRng, p: usize, inputs: usize, gates: usize) -> Circuit {
    let mut b = Builder::new(p);
    let mut wires: Vec<Wire> = (0..p).flat_map(|q| b.input(q, inputs)).collect();
    for _ in 0..gates {
        let pick = |rng: &mut StdRng, w: &[Wire]| w[rng.gen_range(0..w.len())];
        let (x, y) = (pick(rng, &wires), pick(rng, &wires));
        match rng.gen_range(0..4) {
            0 => wires.push(b.xor(x, y)),
            1 => wires.push(b.not(x)),
            2 => wires.push(b.and(x, y)),
            _ => {
                let v: Vec<Wire> = (0..rng.gen_range(1..200)).map(|_| pick(rng, &wires)).collect();
                wires.extend(b.vs(x, &v));
            }
        }
    }
    let outs: Vec<Wire> = wires.iter().copied().step_by(4).collect();
    b.output(&outs);
    b.build().unwrap()
}

fn random_inputs(rng: &mut StdRng, c: &Circuit) -> Vec<Vec<bool>> {
    c.inputs().iter().map(|&n| (0..n).map(|_| rng.gen()).collect()).collect()
}

/// Evaluates `c` by `p` parties in memory; checks every party got the twin's outputs and used the
/// OTs and sent the bytes that [`cost`] counts. Returns the outputs.
fn secure(c: &Circuit, inputs: &[Vec<bool>]) -> Vec<bool> {
    let p = c.parties();
    let want = c.eval(inputs).unwrap();
    let plan = cost(c);
    let counts = c.counts();
    for (i, row) in plan.ots.iter().enumerate() {
        for (j, &n) in row.iter().enumerate() {
            assert!(n <= counts.and + counts.vs, "at most one OT per gate and ordered pair ({i}, {j})");
        }
    }
    let got = run(p, Backend::Memory, NetConfig::default(), |party| {
        let me = party.id();
        let mut pre = preprocess(party, plan.max_ots() + 5)?;
        let before = party.stats();
        let out = evaluate(party, c, &mut pre, &inputs[me])?;
        let used = party.stats() - before;
        for q in (0..p).filter(|&q| q != me) {
            assert_eq!(pre.used(q), (plan.ots[me][q], plan.ots[q][me]), "OTs of party {me} with {q}");
        }
        assert_eq!(used.bytes_sent, plan.bytes_sent[me], "party {me}'s online bytes");
        assert_eq!(used.rounds as usize, plan.rounds, "party {me}'s rounds");
        Ok(out)
    })
    .unwrap();
    for out in &got {
        assert_eq!(out, &want);
    }
    got.into_iter().next().unwrap()
}

#[test]
fn on_mixed_wires_the_cost_is_the_papers() {
    // every wire a mix of all parties' inputs: p(p − 1) OTs per AND and VS gate, and per layer
    // and ordered pair one bit per gate (receiver) and one per vector element (sender)
    let mut rng = StdRng::seed_from_u64(12);
    for p in 2..=4 {
        let mut b = Builder::new(p);
        let ins: Vec<Vec<Wire>> = (0..p).map(|q| b.input(q, 8)).collect();
        let mut wires: Vec<Wire> = (0..8).map(|k| ins[1..].iter().fold(ins[0][k], |acc, v| b.xor(acc, v[k]))).collect();
        for _ in 0..30 {
            let pick = |rng: &mut StdRng, w: &[Wire]| w[rng.gen_range(0..w.len())];
            let (x, y) = (pick(&mut rng, &wires), pick(&mut rng, &wires));
            if rng.gen() {
                wires.push(b.and(x, y));
            } else {
                let v: Vec<Wire> = (0..rng.gen_range(1..40)).map(|_| pick(&mut rng, &wires)).collect();
                wires.extend(b.vs(x, &v));
            }
        }
        b.output(&wires);
        let c = b.build().unwrap();
        let plan = cost(&c);
        let k = c.counts();
        for i in 0..p {
            for j in (0..p).filter(|&j| j != i) {
                assert_eq!(plan.ots[i][j], k.and + k.vs);
            }
        }
        assert_eq!(plan.ots.iter().flatten().sum::<usize>(), k.ots(p));
        let per_layer: u64 = c
            .layers()
            .iter()
            .filter(|l| !l.nonlinear.is_empty())
            .map(|l| {
                let bits: usize = l
                    .nonlinear
                    .iter()
                    .map(|&i| match &c.gates()[i] {
                        Gate::And { .. } => 2,
                        Gate::Vs { vector, .. } => 1 + vector.len(),
                        _ => unreachable!(),
                    })
                    .sum();
                bits.div_ceil(8) as u64
            })
            .sum();
        let online = (p as u64 - 1) * (per_layer + c.outputs().div_ceil(8) as u64);
        assert!(plan.bytes_sent.iter().all(|&b| b == online), "{:?} vs {online}", plan.bytes_sent);
        assert_eq!(plan.rounds, k.depth + 1);
        let inputs = random_inputs(&mut rng, &c);
        secure(&c, &inputs);
    }
}

#[test]
fn gates_on_one_partys_wires_are_local() {
    // AES's key schedule reads only the key (party 0's): those ANDs need no OT
    let c = parse(AES, 2).unwrap().circuit;
    let plan = cost(&c);
    assert!(plan.ots[0][1] < 6400 && plan.ots[0][1] == plan.ots[1][0], "{:?}", plan.ots);
    // an AND of one party's bits, and a VS whose vector is one party's: no OT, or one direction
    let mut b = Builder::new(3);
    let x = b.input(0, 2);
    let y = b.input(1, 3);
    let a = b.and(x[0], x[1]);
    let s = b.xor(x[0], y[0]);
    let v = b.vs(s, &y[1..]);
    b.output(&[a, v[0], v[1]]);
    let c = b.build().unwrap();
    let plan = cost(&c);
    // the VS: a scalar of parties 0 and 1 times party 1's vector: receiver 0, sender 1 only
    assert_eq!(plan.ots, vec![vec![0, 1, 0], vec![0, 0, 0], vec![0, 0, 0]]);
    for bits in 0..32u8 {
        let bit = |k: u8| bits >> k & 1 == 1;
        secure(&c, &[vec![bit(0), bit(1)], vec![bit(2), bit(3), bit(4)], vec![]]);
    }
}

#[test]
fn gmw_agrees_with_the_twin_for_two_to_five_parties() {
    let mut rng = StdRng::seed_from_u64(31);
    for p in 2..=5 {
        for _ in 0..3 {
            let c = random_circuit(&mut rng, p, 5, 60);
            let inputs = random_inputs(&mut rng, &c);
            secure(&c, &inputs);
        }
    }
}

#[test]
fn gmw_aes_128_by_three_parties() {
    let c = parse(AES, 3).unwrap().circuit;
    let key = hex_to_bits("000102030405060708090a0b0c0d0e0f", 128).unwrap();
    let pt = hex_to_bits("00112233445566778899aabbccddeeff", 128).unwrap();
    let out = secure(&c, &[key, pt, vec![]]);
    assert_eq!(bits_to_hex(&out), "69c4e0d86a7b0430d8cdb78070b4c55a");
}

/// Local gates laid out side by side are evaluated a range at a time: XORs of two ranges, of a
/// range and one wire, INVs of a range, and chains whose next gate reads the previous one's
/// output (contiguous wires that must not be taken as one range), all equal to the twin; so is
/// a VS gate whose vector and outputs are consecutive wires.
#[test]
fn runs_of_local_gates_agree_with_the_twin() {
    let mut b = Builder::new(2);
    let x = b.input(0, 70);
    let y = b.input(1, 70);
    let c = b.input(1, 1)[0];
    let z: Vec<Wire> = x.iter().zip(&y).map(|(&x, &y)| b.xor(x, y)).collect();
    let u: Vec<Wire> = z.iter().map(|&z| b.xor(z, c)).collect();
    let v: Vec<Wire> = u.iter().map(|&u| b.not(u)).collect();
    let mut chain = vec![b.xor(x[0], c)];
    for _ in 0..20 {
        let t = b.xor(*chain.last().unwrap(), c);
        chain.push(t);
    }
    let mut flips = vec![b.not(y[0])];
    for _ in 0..20 {
        let t = b.not(*flips.last().unwrap());
        flips.push(t);
    }
    let and = b.and(v[3], chain[20]);
    // a VS gate on 70 consecutive wires and 70 consecutive outputs: read and written 8 at a time
    let picked = b.vs(c, &z);
    let outs: Vec<Wire> =
        z.iter().chain(&u).chain(&v).chain(&chain).chain(&flips).chain(&picked).copied().chain([and]).collect();
    b.output(&outs);
    let circuit = b.build().unwrap();
    let mut rng = StdRng::seed_from_u64(12);
    for _ in 0..4 {
        secure(&circuit, &random_inputs(&mut rng, &circuit));
    }
}

#[test]
fn edge_cases_of_the_evaluation() {
    // no AND gates at all (one round: the outputs), a single AND, a VS of one element
    let mut b = Builder::new(2);
    let x = b.input(0, 2);
    let y = b.input(1, 1);
    let s = b.xor(x[0], y[0]);
    let n = b.not(s);
    b.output(&[s, n]);
    let c = b.build().unwrap();
    for bits in 0..8u8 {
        let ins = vec![vec![bits & 1 == 1, bits & 2 == 2], vec![bits & 4 == 4]];
        secure(&c, &ins);
    }
    let mut b = Builder::new(3);
    let x = b.input(0, 1)[0];
    let y = b.input(2, 1)[0];
    let a = b.and(x, y);
    let v = b.vs(a, &[x]);
    b.output(&[a, v[0]]);
    let c = b.build().unwrap();
    for bits in 0..4u8 {
        secure(&c, &[vec![bits & 1 == 1], vec![], vec![bits & 2 == 2]]);
    }
}

#[test]
fn too_few_ots_or_wrong_inputs_are_refused() {
    let mut b = Builder::new(2);
    let x = b.input(0, 1)[0];
    let y = b.input(1, 1)[0];
    let a = b.and(x, y);
    b.output(&[a]);
    let c = b.build().unwrap();
    let res = run(2, Backend::Memory, NetConfig::default(), |party| {
        let mut pre = preprocess(party, 0)?;
        evaluate(party, &c, &mut pre, &[true])
    });
    assert!(res.unwrap_err().to_string().contains("OTs with party 1"));
    let res = run(2, Backend::Memory, NetConfig::default(), |party| {
        let mut pre = preprocess(party, 1)?;
        evaluate(party, &c, &mut pre, &[true, false])
    });
    assert!(res.unwrap_err().to_string().contains("input bits"));
}

/// The equality of the two halves of `ins`.
fn string_eq(b: &mut Builder, ins: &[Wire]) -> Vec<Wire> {
    let (x, y) = ins.split_at(ins.len() / 2);
    vec![circuits::string_eq(b, x, y)]
}

fn eq_and_xor(b: &mut Builder, ins: &[Wire]) -> Vec<Wire> {
    let mut o = string_eq(b, ins);
    o.push(b.xor(ins[0], ins[5]));
    o
}

fn parity_and(b: &mut Builder, ins: &[Wire]) -> Vec<Wire> {
    let a = b.and(ins[0], ins[1]);
    let n = b.not(ins[2]);
    let c = b.and(a, n);
    let v = b.vs(c, &ins[3..]);
    vec![b.xor(v[0], v[1]), n]
}

fn majority(b: &mut Builder, ins: &[Wire]) -> Vec<Wire> {
    let ab = b.and(ins[0], ins[1]);
    let bc = b.and(ins[1], ins[2]);
    let ca = b.and(ins[2], ins[0]);
    let t = b.xor(ab, bc);
    let m = b.xor(t, ca);
    vec![m, b.not(ins[5])]
}

/// A SWITCH over `branches` chosen by a 2-bit index XOR-shared by parties 0 and 1.
fn switch_circuit(p: usize, how: Branching) -> Circuit {
    let mut b = Builder::new(p);
    let i0 = b.input(0, 2);
    let i1 = b.input(1, 2);
    let data: Vec<Wire> = (0..p).flat_map(|q| b.input(q, 6 / p + 1)).take(6).collect();
    let s0 = b.xor(i0[0], i1[0]);
    let s1 = b.xor(i0[1], i1[1]);
    let (n0, n1) = (b.not(s0), b.not(s1));
    let select = vec![b.and(n1, n0), b.and(n1, s0), b.and(s1, n0), b.and(s1, s0)];
    let branches: [builder::Branch; 4] = [&eq_and_xor, &parity_and, &majority, &|b, ins| {
        // a nested IF/ELSE on the branch's first input
        let (c, rest) = (ins[0], &ins[1..]);
        let mut o = b.if_else(
            c,
            rest,
            &|b, i| vec![b.and(i[0], i[1]), b.not(i[2])],
            &|b, i| vec![b.not(i[3]), b.xor(i[0], i[4])],
            how,
        );
        o.truncate(2);
        o
    }];
    let o = b.switch(&select, &data, &branches[..], how);
    b.output(&o);
    b.build().unwrap()
}

#[test]
fn switch_picks_the_selected_branch_in_both_forms() {
    // each branch's outputs on its own, from the same inputs
    let direct = |k: usize, data: &[bool]| -> Vec<bool> {
        let mut b = Builder::new(1);
        let ins = b.input(0, 6);
        let f: [builder::Branch; 4] = [&eq_and_xor, &parity_and, &majority, &|b, ins| {
            let (c, rest) = (ins[0], &ins[1..]);
            let t = [b.and(rest[0], rest[1]), b.not(rest[2])];
            let e = [b.not(rest[3]), b.xor(rest[0], rest[4])];
            let nc = b.not(c);
            (0..2)
                .map(|k| {
                    let x = b.and(c, t[k]);
                    let y = b.and(nc, e[k]);
                    b.xor(x, y)
                })
                .collect()
        }];
        let o = f[k](&mut b, &ins);
        b.output(&o);
        b.build().unwrap().eval(&[data.to_vec()]).unwrap()
    };
    let mut rng = StdRng::seed_from_u64(5);
    for p in [2, 3] {
        let (vs, plain) = (switch_circuit(p, Branching::Vs), switch_circuit(p, Branching::Plain));
        let (cv, cp) = (vs.counts(), plain.counts());
        assert!(cv.vs > 0 && cv.and + cv.vs < cp.and, "merging saves OTs: {cv:?} vs {cp:?}");
        for _ in 0..40 {
            let inputs = random_inputs(&mut rng, &vs);
            let idx = |ins: &[Vec<bool>]| usize::from(ins[0][0] ^ ins[1][0]) | usize::from(ins[0][1] ^ ins[1][1]) << 1;
            let data: Vec<bool> =
                (0..p).flat_map(|q| inputs[q][if q < 2 { 2 } else { 0 }..].to_vec()).take(6).collect();
            let want = direct(idx(&inputs), &data);
            assert_eq!(vs.eval(&inputs).unwrap(), want);
            assert_eq!(plain.eval(&inputs).unwrap(), want);
        }
        let inputs = random_inputs(&mut rng, &vs);
        secure(&vs, &inputs);
        secure(&plain, &inputs);
    }
}

#[test]
fn merge_joins_one_gate_per_branch_and_layer() {
    // 16 identical string-equality branches: each AND layer of the tree becomes VS gates of 16
    let build = |how| {
        let mut b = Builder::new(2);
        let x = b.input(0, 64);
        let y = b.input(1, 64);
        let sel = b.input(0, 16);
        let ins: Vec<Wire> = x.into_iter().chain(y).collect();
        let branches: Vec<builder::Branch> = vec![&string_eq; 16];
        let o = b.switch(&sel, &ins, &branches, how);
        b.output(&o);
        b.build().unwrap()
    };
    let (vs, plain) = (build(Branching::Vs), build(Branching::Plain));
    let (cv, cp) = (vs.counts(), plain.counts());
    // 63 ANDs per branch: merged into 63 VS gates of 16, plus 16 demultiplexers of 128 inputs
    assert_eq!((cv.and, cv.vs, cv.vs_elements), (0, 63 + 16, 63 * 16 + 16 * 128));
    assert_eq!((cp.and, cp.vs), (16 * 63 + 16, 0));
    assert_eq!(cv.depth, cp.depth, "merging keeps the depth: demux and mux take one layer each");
    let mut rng = StdRng::seed_from_u64(8);
    for _ in 0..20 {
        let mut inputs = random_inputs(&mut rng, &vs);
        let k = rng.gen_range(0..16);
        let sel: Vec<bool> = (0..16).map(|i| i == k).collect();
        if rng.gen() {
            inputs[1] = inputs[0][..64].to_vec();
        }
        inputs[0].splice(64.., sel);
        let want = inputs[0][..64] == inputs[1][..];
        assert_eq!(vs.eval(&inputs).unwrap(), vec![want]);
        assert_eq!(plain.eval(&inputs).unwrap(), vec![want]);
    }
}

#[test]
fn a_branch_that_reads_outside_its_inputs_is_refused() {
    let mut b = Builder::new(2);
    let x = b.input(0, 2);
    let outside = b.input(1, 1)[0];
    let leak = move |b: &mut Builder, ins: &[Wire]| vec![b.and(ins[0], outside)];
    let fine = |b: &mut Builder, ins: &[Wire]| vec![b.and(ins[0], ins[1])];
    let o = b.switch(&[x[0], x[1]], &x, &[&leak, &fine], Branching::Vs);
    b.output(&o);
    assert!(b.build().unwrap_err().reason.contains("not one of its inputs"));
    let mut b = Builder::new(2);
    let x = b.input(0, 2);
    let two = |_: &mut Builder, ins: &[Wire]| vec![ins[0], ins[1]];
    let o = b.switch(&[x[0], x[1]], &x, &[&two, &fine], Branching::Vs);
    b.output(&o);
    assert!(b.build().unwrap_err().reason.contains("outputs"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn random_circuits_agree_with_the_twin(seed in any::<u64>(), p in 2usize..=4) {
        let mut rng = StdRng::seed_from_u64(seed);
        let c = random_circuit(&mut rng, p, 3, 40);
        let inputs = random_inputs(&mut rng, &c);
        secure(&c, &inputs);
    }
}

#[test]
fn the_benchmark_circuit_compares_in_the_chosen_branch() {
    let mut rng = StdRng::seed_from_u64(9);
    for (p, branches) in [(2, 1), (2, 4), (3, 8), (5, 2)] {
        for how in [Branching::Vs, Branching::Plain] {
            let c = circuits::branching_string_eq(p, 40, branches, how).unwrap();
            for equal in [false, true] {
                let mut inputs = random_inputs(&mut rng, &c);
                if equal {
                    let x = inputs[0][..40].to_vec();
                    inputs[1][..40].copy_from_slice(&x);
                }
                assert_eq!(c.eval(&inputs).unwrap(), vec![inputs[0][..40] == inputs[1][..40]]);
                if branches == 4 {
                    secure(&c, &inputs);
                }
            }
        }
    }
    assert!(circuits::branching_string_eq(2, 8, 3, Branching::Vs).is_err());
}

/// What each party receives while evaluating (the `e` and `F` bits of every layer) looks uniform
/// and is the same whatever the inputs: all zero, all one, random. No outputs, so nothing is
/// revealed.
#[test]
fn views_are_independent_of_inputs() {
    use crate::testing::{assert_views_uniform, byte_histogram};
    let n = 1 << 15;
    for p in [2, 3] {
        let mut b = Builder::new(p);
        let ins: Vec<Vec<Wire>> = (0..p).map(|q| b.input(q, n)).collect();
        let mixed: Vec<Wire> = (0..n).map(|k| ins[1..].iter().fold(ins[0][k], |acc, v| b.xor(acc, v[k]))).collect();
        let ands: Vec<Wire> = mixed.windows(2).map(|w| b.and(w[0], w[1])).collect();
        let v = b.vs(ands[0], &mixed[..n / 2]);
        let _ = b.vs(v[3], &ins[p - 1]);
        let c = b.build().unwrap();
        let mut rng = StdRng::seed_from_u64(21);
        let sets: Vec<Vec<Vec<bool>>> = vec![
            (0..p).map(|_| vec![false; n]).collect(),
            (0..p).map(|_| vec![true; n]).collect(),
            (0..p).map(|_| (0..n).map(|_| rng.gen()).collect()).collect(),
        ];
        type View = Vec<(usize, Vec<u8>)>;
        let views: Vec<Vec<View>> = sets
            .iter()
            .map(|inputs| {
                run(p, Backend::Memory, NetConfig::default(), |party| {
                    let mut pre = preprocess(party, cost(&c).max_ots())?;
                    party.net().record_view();
                    evaluate(party, &c, &mut pre, &inputs[party.id()])?;
                    Ok(party.net().take_view())
                })
                .unwrap()
            })
            .collect();
        for id in 0..p {
            let hs: Vec<[f64; 256]> = views.iter().map(|v| byte_histogram(&v[id])).collect();
            assert!(hs[0].iter().sum::<f64>() > 8_000.0, "the view holds the layers' messages");
            assert_views_uniform(&format!("gmw, {p} parties"), id, &hs);
        }
    }
}

fn u64_bits(v: u64, n: usize) -> Vec<bool> {
    (0..n).map(|k| v >> k & 1 == 1).collect()
}

#[test]
fn adder_and_comparator_through_bristol_text() {
    // built, written as Bristol, read back, evaluated plainly and by 2 and 3 parties
    let n = 64;
    let mut b = Builder::new(2);
    let x = b.input(0, n);
    let y = b.input(1, n);
    let sum = circuits::add(&mut b, &x, &y);
    let lt = circuits::less_than(&mut b, &x, &y);
    b.output(&sum);
    b.output(&[lt]);
    let built = b.build().unwrap();
    let text = bristol::write(&built);
    let back = parse(&text, 2).unwrap();
    assert_eq!((back.input_widths.clone(), back.output_widths.clone()), (vec![n, n], vec![n + 1]));
    let three = parse(&text, 3).unwrap().circuit;
    let mut rng = StdRng::seed_from_u64(77);
    let mut pairs = vec![(0, 0), (0, 1), (1, 0), (u64::MAX, 1), (1, u64::MAX), (u64::MAX, u64::MAX), (5, 5)];
    pairs.extend((0..20).map(|_| (rng.gen(), rng.gen())));
    for (i, &(a, c)) in pairs.iter().enumerate() {
        let ins = vec![u64_bits(a, n), u64_bits(c, n)];
        let mut want = u64_bits(a.wrapping_add(c), n);
        want.push(a < c);
        assert_eq!(built.eval(&ins).unwrap(), want);
        assert_eq!(back.circuit.eval(&ins).unwrap(), want);
        if i % 9 == 0 {
            assert_eq!(secure(&back.circuit, &ins), want);
            assert_eq!(secure(&three, &[ins[0].clone(), ins[1].clone(), vec![]]), want);
        }
    }
    // AES read, written and read again: the same answer
    let aes = parse(AES, 2).unwrap().circuit;
    let again = parse(&bristol::write(&aes), 2).unwrap().circuit;
    let ins = [
        hex_to_bits("000102030405060708090a0b0c0d0e0f", 128).unwrap(),
        hex_to_bits("00112233445566778899aabbccddeeff", 128).unwrap(),
    ];
    assert_eq!(bits_to_hex(&again.eval(&ins).unwrap()), "69c4e0d86a7b0430d8cdb78070b4c55a");
    // a VS gate is written as its ANDs
    let mut b = Builder::new(2);
    let x = b.input(0, 1)[0];
    let y = b.input(1, 3);
    let v = b.vs(x, &y);
    b.output(&v);
    let c = b.build().unwrap();
    let back = parse(&bristol::write(&c), 2).unwrap().circuit;
    assert_eq!(back.counts().and, 3);
    for bits in 0..16u64 {
        let ins = vec![u64_bits(bits, 1), u64_bits(bits >> 1, 3)];
        assert_eq!(back.eval(&ins).unwrap(), c.eval(&ins).unwrap());
    }
}
