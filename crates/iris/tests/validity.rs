//! The validity check of a client's query shares (issue 35, item 1), in every scheme: valid
//! queries pass, and a query whose values are out of range, whose rows disagree or whose
//! parties' shares are not of one template is found, alone, on all three parties alike.

use argus_iris::protocol::scheme::{query_kind, IrisScheme};
use argus_iris::protocol::schemes::f16::FieldTemplateShare;
use argus_iris::protocol::schemes::gr16::GrTemplateShare;
use argus_iris::protocol::schemes::plain_mask::PlainMaskShare;
use argus_iris::protocol::schemes::rep3::TemplateShare;
use argus_iris::protocol::schemes::{MpcLiftF16, MpcLiftGr16, MpcLiftZ16, NoLiftZ32, PlainMaskZ16};
use argus_iris::{Generator, IrisCode, IrisGeometry, MaskMode, MatchConfig, Template};
use argus_math::galois as gr;
use argus_math::{BitVec, Ring, F65519};
use argus_mpc::local::{run3, Backend};
use argus_mpc::rep3::Rep3;
use argus_net::NetConfig;

const G: IrisGeometry = IrisGeometry::DEPLOYED;

/// Which row of the left eye's unrotated shares a tampering changes.
#[derive(Clone, Copy, Debug)]
enum Row {
    Code,
    Mask,
    Bit,
    /// GR only: the query-basis code row.
    QueryCode,
}

/// Changes to a query's shares that keep them consistent (the secret value moves by `d`) or not.
trait Tamper: IrisScheme {
    /// Adds `d` to the secret value at `j` of the left eye's unrotated `row`, on every party.
    fn shift(&self, q: &mut [Self::Share; 3], row: Row, j: usize, d: u64);
    /// Changes party 1's shares alone (an inconsistent sharing).
    fn corrupt(&self, q: &mut [Self::Share; 3]);
}

/// The replicated share and the index that `row`, `j` names in `s`.
fn slot<R: Ring>(s: &mut TemplateShare<R>, row: Row, j: usize) -> (&mut Rep3<R>, usize) {
    let (rows, u) = (s.rows, s.unrotated);
    match row {
        Row::Code => {
            let at = u * s.left.code.len() / rows + j;
            (&mut s.left.code, at)
        }
        Row::Mask => {
            let at = u * s.left.mask.len() / rows + j;
            (&mut s.left.mask, at)
        }
        Row::Bit => (&mut s.bits[0], j),
        Row::QueryCode => unreachable!("GR only"),
    }
}

fn rep3_shift<R: Ring>(q: &mut [TemplateShare<R>; 3], row: Row, j: usize, d: u64) {
    let ring = q[0].left.code.ring().clone();
    let d = ring.from_u128(u128::from(d));
    // x_0 is party 0's `a` and party 1's `b`.
    let (x, at) = slot(&mut q[0], row, j);
    x.a[at] = ring.add(x.a[at], d);
    let (x, at) = slot(&mut q[1], row, j);
    x.b[at] = ring.add(x.b[at], d);
}

impl<S> Tamper for S
where
    S: IrisScheme<Share = TemplateShare<<S as argus_iris::protocol::schemes::rep3::RingOf>::R>>
        + argus_iris::protocol::schemes::rep3::RingOf,
{
    fn shift(&self, q: &mut [Self::Share; 3], row: Row, j: usize, d: u64) {
        rep3_shift(q, row, j, d);
    }
    fn corrupt(&self, q: &mut [Self::Share; 3]) {
        let ring = q[1].left.code.ring().clone();
        let (x, at) = slot(&mut q[1], Row::Code, 3);
        x.b[at] = ring.add(x.b[at], ring.one());
    }
}

/// Each scheme's own tampering, wrapped so that one generic runner serves all.
struct Field;
struct Gr;
/// Public masks; `trimmed` as the configuration the shares are made under.
struct Plain {
    trimmed: bool,
}

trait Case {
    type S: IrisScheme;
    fn scheme(&self) -> &Self::S;
    fn shift(&self, q: &mut [<Self::S as IrisScheme>::Share; 3], row: Row, j: usize, d: u64);
    fn corrupt(&self, q: &mut [<Self::S as IrisScheme>::Share; 3]);
    fn rows(&self) -> Vec<Row> {
        vec![Row::Code, Row::Mask, Row::Bit]
    }
    /// The mask mode the next shares are made under.
    fn set_mode(&mut self, _mode: MaskMode) {}
}

struct Rep<S>(S);
impl<S: Tamper> Case for Rep<S> {
    type S = S;
    fn scheme(&self) -> &S {
        &self.0
    }
    fn shift(&self, q: &mut [S::Share; 3], row: Row, j: usize, d: u64) {
        self.0.shift(q, row, j, d)
    }
    fn corrupt(&self, q: &mut [S::Share; 3]) {
        self.0.corrupt(q)
    }
}

impl Case for Field {
    type S = MpcLiftF16;
    fn scheme(&self) -> &MpcLiftF16 {
        &MpcLiftF16
    }
    fn shift(&self, q: &mut [FieldTemplateShare; 3], row: Row, j: usize, d: u64) {
        let f = F65519;
        let d = f.from_u128(u128::from(d));
        for s in q.iter_mut() {
            let (rows, u) = (s.rows, s.unrotated);
            let x = match row {
                Row::Code => &mut s.left.code,
                Row::Mask => &mut s.left.mask,
                Row::Bit => &mut s.bits[0],
                Row::QueryCode => unreachable!(),
            };
            let at = if matches!(row, Row::Bit) { j } else { u * x.len() / rows + j };
            let mut v = x.shares().to_vec();
            v[at] = f.add(v[at], d);
            *x = argus_mpc::shamir::Shamir::from_parts(f, argus_mpc::shamir::Degree::One, v).unwrap();
        }
    }
    /// A degree-2 sharing of the same value: `i²` added to the share of party `i` (point `i`)
    /// of one mask value (the polynomial `x²` is 0 at 0, so only the line test sees it).
    fn corrupt(&self, q: &mut [FieldTemplateShare; 3]) {
        let f = F65519;
        for (i, s) in q.iter_mut().enumerate() {
            let at = s.unrotated * s.left.mask.len() / s.rows + 7;
            let mut v = s.left.mask.shares().to_vec();
            v[at] = f.add(v[at], f.from_u128(((i + 1) * (i + 1)) as u128));
            s.left.mask = argus_mpc::shamir::Shamir::from_parts(f, argus_mpc::shamir::Degree::One, v).unwrap();
        }
    }
}

impl Case for Gr {
    type S = MpcLiftGr16;
    fn scheme(&self) -> &MpcLiftGr16 {
        &MpcLiftGr16
    }
    fn shift(&self, q: &mut [GrTemplateShare; 3], row: Row, j: usize, d: u64) {
        // Adding a constant to every party's share moves the secret by it (monomial: the value
        // at the coefficient; query basis: a value elsewhere in the element).
        for s in q.iter_mut() {
            let x = match row {
                Row::Code => &mut s.entry[0].code,
                Row::Mask => &mut s.entry[0].mask,
                Row::Bit => &mut s.bits[0],
                Row::QueryCode => &mut s.query[0].code,
            };
            x[j] = x[j].wrapping_add(d as u16);
        }
    }
    /// A degree-2 sharing of the same values: `α_i²` added to party i's share of one element of
    /// the query-basis mask (the polynomial `x²` is 0 at 0, so only the line test sees it).
    fn corrupt(&self, q: &mut [GrTemplateShare; 3]) {
        for (i, s) in q.iter_mut().enumerate() {
            let a = gr::POINTS[i];
            let d = gr::mul(a, a);
            let x = &mut s.query[1].mask;
            let e = gr::add([x[8], x[9], x[10], x[11]], d);
            x[8..12].copy_from_slice(&e);
        }
    }
    fn rows(&self) -> Vec<Row> {
        vec![Row::Code, Row::Mask, Row::Bit, Row::QueryCode]
    }
}

impl Case for Plain {
    type S = PlainMaskZ16;
    fn scheme(&self) -> &PlainMaskZ16 {
        &PlainMaskZ16
    }
    fn set_mode(&mut self, mode: MaskMode) {
        self.trimmed = mode == MaskMode::Trimmed;
    }
    fn shift(&self, q: &mut [PlainMaskShare; 3], row: Row, j: usize, d: u64) {
        let d = d as u16;
        let (rows, u) = (q[0].rows, q[0].unrotated);
        match row {
            Row::Code | Row::Bit => {
                let at = |s: &PlainMaskShare| if matches!(row, Row::Bit) { j } else { u * s.codes[0].len() / rows + j };
                let (a0, a1) = (at(&q[0]), at(&q[1]));
                let x0 = if matches!(row, Row::Bit) { &mut q[0].bits[0] } else { &mut q[0].codes[0] };
                x0.a[a0] = x0.a[a0].wrapping_add(d);
                let x1 = if matches!(row, Row::Bit) { &mut q[1].bits[0] } else { &mut q[1].codes[0] };
                x1.b[a1] = x1.b[a1].wrapping_add(d);
            }
            // A public mask value flipped on every node (whatever `d`): both bits of a trimmed
            // pair, or the decoder refuses it before any check.
            Row::Mask => {
                let trimmed = self.trimmed;
                let bits = if trimmed { vec![2 * j, 2 * j + 1] } else { vec![j] };
                for s in q.iter_mut() {
                    let m = &mut s.masks[0][u];
                    for &b in &bits {
                        let v = m.get(b);
                        m.set(b, !v);
                    }
                }
            }
            Row::QueryCode => unreachable!(),
        }
    }
    /// Node 1 gets another public mask (a pair flipped: a trimmed mask stays one).
    fn corrupt(&self, q: &mut [PlainMaskShare; 3]) {
        let u = q[1].unrotated;
        let m = &mut q[1].masks[1][u];
        for b in [8, 9] {
            let v = m.get(b);
            m.set(b, !v);
        }
    }
}

fn template(g: &mut Generator, valid: Option<usize>) -> Template {
    let t = g.random_template();
    let masked = |c: &IrisCode| match valid {
        None => c.clone(),
        Some(v) => {
            let n = G.bits();
            let mut mask = BitVec::ones(n);
            (v..n).for_each(|i| mask.set(i, false));
            IrisCode::new(G, c.code().clone(), mask).unwrap()
        }
    };
    Template::new(masked(&t.left), masked(&t.right)).unwrap()
}

/// Every party's verdicts on `qs` (the shares go through the wire format first, as a node gets
/// them: the nodes make the rotations) and the rounds they took.
fn verdicts<S: IrisScheme>(s: &S, qs: &[[S::Share; 3]], cfg: &MatchConfig) -> (Vec<bool>, u64, u64) {
    let kind = query_kind(cfg, G).unwrap();
    let wire: Vec<[S::Share; 3]> =
        qs.iter().map(|q| std::array::from_fn(|p| s.decode(&s.encode(&q[p]), G.bits(), cfg, kind).unwrap())).collect();
    let out = run3(Backend::Memory, NetConfig::default(), |p| {
        let mine: Vec<_> = wire.iter().map(|q| q[p.id()].clone()).collect();
        let before = p.stats();
        let bad = s.invalid(p, &mine, G.bits())?;
        let cost = p.stats() - before;
        Ok((bad, cost.rounds, cost.bytes_sent))
    })
    .unwrap();
    assert!(out.iter().all(|o| o.0 == out[0].0), "{}: the parties disagree", s.name());
    let rounds = out.iter().map(|o| o.1).max().unwrap();
    let bytes = out.iter().map(|o| o.2).max().unwrap();
    (out[0].0.clone(), rounds, bytes)
}

fn run<C: Case>(mut case: C) {
    let mut g = Generator::new(G, 77).unwrap();
    for mode in [MaskMode::PerBit, MaskMode::Trimmed] {
        case.set_mode(mode);
        let s = case.scheme();
        let cfg = MatchConfig { mask_mode: mode, ..MatchConfig::default() };
        let share = |t: &Template| s.share_query(t, &cfg).unwrap();
        // Valid: random, all masked, all valid.
        let mut batch: Vec<[_; 3]> = vec![
            share(&template(&mut g, None)),
            share(&template(&mut g, Some(0))),
            share(&template(&mut g, Some(G.bits()))),
        ];
        let mut want = vec![false; 3];
        // One value moved, on every row the scheme has, by 1, 2, 2^15 (and −1).
        let mlen = if mode == MaskMode::Trimmed { G.bits() / 2 } else { G.bits() };
        for row in case.rows() {
            for (j, d) in [(0, 1u64), (17, 2), (mlen - 1, 1 << 15), (101, u64::MAX)] {
                let mut q = share(&template(&mut g, None));
                case.shift(&mut q, row, j, d);
                batch.push(q);
                want.push(true);
            }
        }
        // Party 0's share from one template, the others' from another (issue 35's attack).
        let (x, y) = (share(&template(&mut g, None)), share(&template(&mut g, None)));
        batch.push([x[0].clone(), y[1].clone(), y[2].clone()]);
        want.push(true);
        // One party's share alone changed.
        let mut q = share(&template(&mut g, None));
        case.corrupt(&mut q);
        batch.push(q);
        want.push(true);
        // And a valid one last.
        batch.push(share(&template(&mut g, None)));
        want.push(false);
        let (got, rounds, _) = verdicts(s, &batch, &cfg);
        assert_eq!(got, want, "{} {mode:?}", s.name());
        // Rounds do not depend on the batch; a valid query alone passes.
        let (one, rounds_one, _) = verdicts(s, &batch[..1], &cfg);
        assert_eq!((one, rounds_one), (vec![false], rounds), "{} {mode:?}", s.name());
    }
}

#[test]
fn replicated_z16_queries_are_checked() {
    run(Rep(MpcLiftZ16));
}

#[test]
fn replicated_z32_queries_are_checked() {
    run(Rep(NoLiftZ32));
}

#[test]
fn field_queries_are_checked() {
    run(Field);
}

#[test]
fn galois_queries_are_checked() {
    run(Gr);
}

#[test]
fn public_mask_queries_are_checked() {
    run(Plain { trimmed: false });
}

/// Rounds and bytes per party, against the protocol's count, for a batch of `n` queries of
/// 12800-bit codes: the joint seed (16 bytes to each peer), the zero test (40 combinations of
/// 2 bytes over Z_2^16, 3 over F_65519, to each peer), then the consistency check.
#[test]
fn rounds_and_bytes() {
    let mut g = Generator::new(G, 5).unwrap();
    let cfg = MatchConfig::default();
    let n = 3u64;
    let ts: Vec<Template> = (0..n).map(|_| template(&mut g, None)).collect();
    fn cost<S: IrisScheme>(s: &S, ts: &[Template], cfg: &MatchConfig) -> (u64, u64) {
        let qs: Vec<_> = ts.iter().map(|t| s.share_query(t, cfg).unwrap()).collect();
        let (bad, rounds, bytes) = verdicts(s, &qs, cfg);
        assert!(bad.iter().all(|b| !b));
        (rounds, bytes)
    }
    let seed = 2 * 16;
    // replicated: seed, zero test, digest to the next party, verdicts to both
    let rep = |width: u64| seed + n * 40 * width * 2 + n * 32 + 2 * n;
    assert_eq!(cost(&MpcLiftZ16, &ts, &cfg), (4, rep(2)));
    assert_eq!(cost(&NoLiftZ32, &ts, &cfg), (4, rep(4)));
    // public masks: and the masks' digests to both peers
    assert_eq!(cost(&PlainMaskZ16, &ts, &cfg), (5, rep(2) + 2 * 32 * n));
    // F_65519: seed, zero test, the lines' combinations (3 values) to both peers
    assert_eq!(cost(&MpcLiftF16, &ts, &cfg), (3, seed + n * 3 * 2 * 2 + n * 3 * 2 * 2));
    // GR: and the reshare of β and m (one element each, to one peer), the lines' 40 GR elements
    let len = G.bits() as u64;
    assert_eq!(cost(&MpcLiftGr16, &ts, &cfg), (4, seed + n * 2 * 2 * len * 2 + n * 40 * 2 * 2 + n * 40 * 4 * 2 * 2));
}
