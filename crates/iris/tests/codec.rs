//! Share bytes (wire and store): round trips, validation of untrusted bytes, the enrolment share
//! taken from a query share, removal from the databases, and share recovery — for every registered
//! scheme ([`every_scheme!`]: a scheme added to the registry without an [`Open`] here does not
//! compile).

use argus_iris::protocol::codec::HEADER_LEN;
use argus_iris::protocol::scheme::{query_kind, IrisScheme, ShareKind};
use argus_iris::protocol::schemes::f16::FieldTemplateShare;
use argus_iris::protocol::schemes::gr16::GrTemplateShare;
use argus_iris::protocol::schemes::plain_mask::PlainMaskShare;
use argus_iris::protocol::schemes::rep3::TemplateShare;
use argus_iris::protocol::schemes::{MpcLiftF16, MpcLiftGr16, MpcLiftZ16, NoLiftZ32, PlainMaskZ16};
use argus_iris::protocol::Scheme;
use argus_iris::with_scheme;
use argus_iris::{find_matches, Generator, IrisError, IrisGeometry, MaskMode, MatchConfig, Template};
use argus_math::{Modulus, Ring, F65519, Z16, Z32};
use argus_mpc::local::{run3, Backend};
use argus_mpc::rep3::Rep3;
use argus_mpc::shamir::Shamir;
use argus_net::NetConfig;
use argus_prg::{Prg, Seed};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Runs `$body` with `$s` bound to each registered scheme in turn.
macro_rules! every_scheme {
    ($s:ident => $body:expr) => {
        for &scheme in Scheme::ALL {
            with_scheme!(scheme, $s => $body)
        }
    };
}

/// 4 × 32 × 2 × 2 = 512 bits: the default window (−15..=15) fits 32 columns, so queries have 31
/// rows with the unrotated one at 15.
const G: IrisGeometry = IrisGeometry { rows: 4, cols: 32, filters: 2, parts: 2 };

/// Every stored component of a share as plain numbers (for exact equality).
#[derive(Debug, PartialEq)]
struct Flat {
    rows: usize,
    unrotated: usize,
    parts: Vec<Vec<u128>>,
}

/// What three shares open to: [left code, left mask, right code, right mask] as signed values.
#[derive(Debug, PartialEq)]
struct Plain {
    rows: usize,
    unrotated: usize,
    values: Vec<Vec<i128>>,
}

trait Open: IrisScheme {
    fn flat(s: &Self::Share) -> Flat;
    fn open(s: &[Self::Share; 3]) -> Plain;
}

fn signed<R: Ring>(r: &R, v: R::El) -> i128 {
    let m = match r.modulus() {
        Modulus::Pow2(k) => 1u128 << k,
        Modulus::Int(t) => t,
    };
    let v = r.to_u128(v);
    if v > m / 2 {
        v as i128 - m as i128
    } else {
        v as i128
    }
}

fn nums<R: Ring>(r: &R, x: &[R::El]) -> Vec<u128> {
    x.iter().map(|&e| r.to_u128(e)).collect()
}

/// Opens a replicated sharing, checking that each party's `b` is the previous party's `a`.
fn open_rep3<R: Ring>(x: [&Rep3<R>; 3]) -> Vec<i128> {
    let r = x[0].ring();
    for i in 0..3 {
        assert_eq!(x[i].b, x[(i + 2) % 3].a, "party {i}: b must be the previous party's a");
    }
    (0..x[0].len()).map(|k| signed(r, r.add(r.add(x[0].a[k], x[1].a[k]), x[2].a[k]))).collect()
}

/// Opens a degree-1 Shamir sharing at the points 1, 2, 3 (Lagrange coefficients 3, −3, 1),
/// checking that the three shares lie on a line.
fn open_shamir(x: [&Shamir<F65519>; 3]) -> Vec<i128> {
    let f = F65519;
    let s = x.map(|v| v.shares());
    (0..s[0].len())
        .map(|k| {
            assert_eq!(f.add(f.sub(s[0][k], f.add(s[1][k], s[1][k])), s[2][k]), 0, "degree 1");
            let three = f.from_u128(3);
            signed(&f, f.add(f.sub(f.mul(three, s[0][k]), f.mul(three, s[1][k])), s[2][k]))
        })
        .collect()
}

fn flat_rep3<R: Ring>(s: &TemplateShare<R>) -> Flat {
    let r = s.left.code.ring();
    let parts = [&s.left, &s.right]
        .into_iter()
        .flat_map(|e| [nums(r, &e.code.a), nums(r, &e.code.b), nums(r, &e.mask.a), nums(r, &e.mask.b)])
        .collect();
    Flat { rows: s.rows, unrotated: s.unrotated, parts }
}

fn open_template_rep3<R: Ring>(s: &[TemplateShare<R>; 3]) -> Plain {
    let rows = s[0].rows;
    assert!(s.iter().all(|x| x.rows == rows && x.unrotated == s[0].unrotated));
    let values = vec![
        open_rep3([&s[0].left.code, &s[1].left.code, &s[2].left.code]),
        open_rep3([&s[0].left.mask, &s[1].left.mask, &s[2].left.mask]),
        open_rep3([&s[0].right.code, &s[1].right.code, &s[2].right.code]),
        open_rep3([&s[0].right.mask, &s[1].right.mask, &s[2].right.mask]),
    ];
    Plain { rows, unrotated: s[0].unrotated, values }
}

impl Open for MpcLiftZ16 {
    fn flat(s: &TemplateShare<Z16>) -> Flat {
        flat_rep3(s)
    }
    fn open(s: &[TemplateShare<Z16>; 3]) -> Plain {
        open_template_rep3(s)
    }
}

impl Open for NoLiftZ32 {
    fn flat(s: &TemplateShare<Z32>) -> Flat {
        flat_rep3(s)
    }
    fn open(s: &[TemplateShare<Z32>; 3]) -> Plain {
        open_template_rep3(s)
    }
}

impl Open for MpcLiftF16 {
    fn flat(s: &FieldTemplateShare) -> Flat {
        let f = F65519;
        let parts = [&s.left, &s.right]
            .into_iter()
            .flat_map(|e| [nums(&f, e.code.shares()), nums(&f, e.mask.shares())])
            .collect();
        Flat { rows: s.rows, unrotated: s.unrotated, parts }
    }
    fn open(s: &[FieldTemplateShare; 3]) -> Plain {
        assert!(s.iter().all(|x| x.rows == s[0].rows && x.unrotated == s[0].unrotated));
        let values = vec![
            open_shamir([&s[0].left.code, &s[1].left.code, &s[2].left.code]),
            open_shamir([&s[0].left.mask, &s[1].left.mask, &s[2].left.mask]),
            open_shamir([&s[0].right.code, &s[1].right.code, &s[2].right.code]),
            open_shamir([&s[0].right.mask, &s[1].right.mask, &s[2].right.mask]),
        ];
        Plain { rows: s[0].rows, unrotated: s[0].unrotated, values }
    }
}

/// Opens GR(2^16, 4) shares as signed 16-bit values.
fn open_gr(x: [&Vec<u16>; 3], basis: argus_mpc::galois::Basis) -> Vec<i128> {
    argus_mpc::galois::open([x[0], x[1], x[2]], basis).unwrap().into_iter().map(|v| v as i16 as i128).collect()
}

impl Open for MpcLiftGr16 {
    fn flat(s: &GrTemplateShare) -> Flat {
        let r = Z16::new();
        let mut parts: Vec<Vec<u128>> = (0..2)
            .flat_map(|e| [&s.entry[e].code, &s.entry[e].mask, &s.query[e].code, &s.query[e].mask])
            .map(|v| nums(&r, v))
            .collect();
        parts.push(vec![s.cols as u128]);
        Flat { rows: s.rows, unrotated: s.unrotated, parts }
    }
    /// The unrotated row (column-major), checking that a query's query-basis row opens to the
    /// same values as its monomial one.
    fn open(s: &[GrTemplateShare; 3]) -> Plain {
        use argus_mpc::galois::Basis;
        assert!(s.iter().all(|x| x.rows == s[0].rows && x.unrotated == s[0].unrotated && x.cols == s[0].cols));
        let parts = |f: fn(&GrTemplateShare, usize) -> &Vec<u16>, basis| -> Vec<Vec<i128>> {
            (0..4).map(|k| open_gr([f(&s[0], k), f(&s[1], k), f(&s[2], k)], basis)).collect()
        };
        let entry = parts(|x, k| if k % 2 == 0 { &x.entry[k / 2].code } else { &x.entry[k / 2].mask }, Basis::Monomial);
        if !s[0].query[0].code.is_empty() {
            let query =
                parts(|x, k| if k % 2 == 0 { &x.query[k / 2].code } else { &x.query[k / 2].mask }, Basis::Query);
            assert_eq!(entry, query, "both bases share the unrotated row");
        }
        Plain { rows: s[0].rows, unrotated: s[0].unrotated, values: entry }
    }
}

fn mask_bits(masks: &[argus_math::BitVec]) -> Vec<i128> {
    masks.iter().flat_map(|m| m.to_bools()).map(i128::from).collect()
}

impl Open for PlainMaskZ16 {
    fn flat(s: &PlainMaskShare) -> Flat {
        let r = Z16::new();
        let mut parts = Vec::new();
        for e in 0..2 {
            parts.push(nums(&r, &s.codes[e].a));
            parts.push(nums(&r, &s.codes[e].b));
            parts.push(s.masks[e].iter().flat_map(|m| m.to_bools()).map(u128::from).collect());
            parts.push(vec![s.masks[e].len() as u128]);
        }
        Flat { rows: s.rows, unrotated: s.unrotated, parts }
    }
    fn open(s: &[PlainMaskShare; 3]) -> Plain {
        assert!(s.iter().all(|x| x.rows == s[0].rows && x.unrotated == s[0].unrotated));
        // The masks are public: every party holds the same.
        assert!(s.iter().all(|x| x.masks == s[0].masks), "public masks differ between parties");
        let values = vec![
            open_rep3([&s[0].codes[0], &s[1].codes[0], &s[2].codes[0]]),
            mask_bits(&s[0].masks[0]),
            open_rep3([&s[0].codes[1], &s[1].codes[1], &s[2].codes[1]]),
            mask_bits(&s[0].masks[1]),
        ];
        Plain { rows: s[0].rows, unrotated: s[0].unrotated, values }
    }
}

fn err_text<T>(r: Result<T, IrisError>) -> String {
    match r {
        Ok(_) => panic!("accepted invalid bytes"),
        Err(e) => e.to_string(),
    }
}

fn assert_rejects<S: IrisScheme>(
    s: &S,
    bytes: &[u8],
    len: usize,
    cfg: &MatchConfig,
    kind: ShareKind,
    needle: &str,
) -> String {
    let e = err_text(s.decode(bytes, len, cfg, kind));
    assert!(e.contains(needle), "{}: expected an error about {needle:?}, got {e:?}", s.name());
    e
}

fn templates(n: usize, seed: u64) -> Vec<Template> {
    let mut g = Generator::new(G, seed).unwrap();
    (0..n).map(|_| g.random_template()).collect()
}

// ------------------------------------------------------------------ round trips

fn round_trip<S: Open>(s: &S, modes: &[MaskMode]) {
    let t = &templates(1, 11)[0];
    for &mask_mode in modes {
        let cfg = MatchConfig { mask_mode, ..MatchConfig::default() };
        let kind = query_kind(&cfg, G).unwrap();
        assert_eq!(kind, ShareKind::Query { rotations: 31, unrotated: 15, geometry: G });
        let q = s.share_query(t, &cfg).unwrap();
        let e = s.share_enrollment(t, &cfg).unwrap();
        for (shares, kind) in [(&q, kind), (&e, ShareKind::Enrollment)] {
            for share in shares.iter() {
                let bytes = s.encode(share);
                let back = s.decode(&bytes, G.bits(), &cfg, kind).unwrap();
                assert_eq!(S::flat(&back), S::flat(share), "{} {mask_mode:?} {kind:?}", s.name());
                assert_eq!(s.encode(&back), bytes, "the encoding is canonical");
            }
            let decoded: [S::Share; 3] =
                std::array::from_fn(|i| s.decode(&s.encode(&shares[i]), G.bits(), &cfg, kind).unwrap());
            assert_eq!(S::open(&decoded), S::open(shares));
        }
    }
}

#[test]
fn round_trips() {
    let both = [MaskMode::PerBit, MaskMode::Trimmed];
    every_scheme!(s => round_trip(&s, &both));
}

// ------------------------------------------------------------------ share recovery

/// A lost party's enrolment share, rebuilt from the two helpers' parts (sent as bytes, as a
/// node does), is exactly the share it had: for enrolment shares and for those taken from a
/// query, every lost party, both mask modes. A part is never a helper's share itself.
fn recovers<S: Open>(s: &S) {
    let t = &templates(1, 17)[0];
    for mask_mode in [MaskMode::PerBit, MaskMode::Trimmed] {
        let cfg = MatchConfig { mask_mode, ..MatchConfig::default() };
        let from_query = s.share_query(t, &cfg).unwrap().map(|q| s.enrollment_of(&q).unwrap());
        for shares in [s.share_enrollment(t, &cfg).unwrap(), from_query] {
            for lost in 0..3 {
                let (j, k) = ((lost + 1) % 3, (lost + 2) % 3);
                let seed = Seed([lost as u8; 16]);
                let (mut pj, mut pk) = (Prg::new(&seed), Prg::new(&seed));
                let part = |me: usize, pad: &mut Prg| {
                    let p = s.recovery_part(me, lost, &shares[me], pad).unwrap();
                    assert_ne!(S::flat(&p), S::flat(&shares[me]), "{}: a part is not the helper's share", s.name());
                    // What a helper sends per identity is one share's worth of bytes.
                    assert_eq!(s.encode(&p).len(), s.encode(&shares[me]).len(), "{}: part size", s.name());
                    s.decode(&s.encode(&p), G.bits(), &cfg, ShareKind::Enrollment).unwrap()
                };
                let (a, b) = (part(j, &mut pj), part(k, &mut pk));
                let got = s.recover(&a, &b).unwrap();
                assert_eq!(s.encode(&got), s.encode(&shares[lost]), "{} {mask_mode:?} lost {lost}", s.name());
                assert_eq!(S::flat(&s.recover(&b, &a).unwrap()), S::flat(&shares[lost]), "either order");
            }
        }
        let e = s.share_enrollment(t, &cfg).unwrap();
        let mut pad = Prg::new(&Seed([1; 16]));
        assert!(s.recovery_part(0, 0, &e[0], &mut pad).is_err(), "a party cannot help itself");
        let q = s.share_query(t, &cfg).unwrap();
        assert!(s.recovery_part(1, 0, &q[1], &mut pad).is_err(), "only enrolment shares are recovered");
    }
}

/// The audit of the three databases: consistent shares pass on all three parties, for every
/// scheme and mask mode; one entry of one party taken from another sharing of the same template
/// (a corrupted or wrongly recovered share) fails on all three.
fn audits<S: Open>(s: &S) {
    let ts = templates(4, 23);
    for mask_mode in [MaskMode::PerBit, MaskMode::Trimmed] {
        let cfg = MatchConfig { mask_mode, ..MatchConfig::default() };
        let shares: Vec<[S::Share; 3]> = ts.iter().map(|t| s.share_enrollment(t, &cfg).unwrap()).collect();
        let other = s.share_enrollment(&ts[2], &cfg).unwrap();
        for bad in [None, Some(0), Some(1), Some(2)] {
            let verdicts = run3(Backend::Memory, NetConfig::default(), |p| {
                let id = p.id();
                let mut db = s.new_db(G.bits());
                for (k, e) in shares.iter().enumerate() {
                    s.push(&mut db, if k == 2 && bad == Some(id) { &other[id] } else { &e[id] })?;
                }
                s.audit(p, &db, &Seed([7; 16]))
            })
            .unwrap();
            assert_eq!(verdicts, [bad.is_none(); 3], "{} {mask_mode:?}, party {bad:?} corrupted", s.name());
        }
    }
}

#[test]
fn database_audit() {
    every_scheme!(s => audits(&s));
}

#[test]
fn share_recovery() {
    every_scheme!(s => recovers(&s));
}

/// The schemes' tags are those of the stored shares: the registry may not renumber them.
#[test]
fn scheme_tags_are_the_stored_ones() {
    let scheme = |tag: u8| Scheme::from_tag(tag).map(|s| s.name());
    let tags = [(1, "mpclift-Z16-rep3"), (2, "nolift-Z32-rep3"), (3, "mpclift-F16-shamir"), (4, "plain-mask-Z16-rep3")];
    for (tag, name) in tags.into_iter().chain([(6, "mpclift-GR16-shamir")]) {
        assert_eq!(scheme(tag), Some(name));
    }
    assert_eq!(scheme(5), None, "retired: GR's row-major layout");
}

/// The header is the documented 18 bytes and the body packs values at the ring's width.
#[test]
fn byte_layout() {
    let t = &templates(1, 3)[0];
    let cfg = MatchConfig::default();
    let len = G.bits();
    let e = MpcLiftZ16.share_enrollment(t, &cfg).unwrap();
    let b = MpcLiftZ16.encode(&e[0]);
    assert_eq!(&b[..2], &[1, 1]);
    assert_eq!(&b[2..HEADER_LEN], [1u32, 0, len as u32, len as u32].map(u32::to_le_bytes).concat());
    assert_eq!(b.len(), HEADER_LEN + 2 * 4 * len * 2);
    assert_eq!(
        &b[HEADER_LEN..HEADER_LEN + 4],
        &[e[0].left.code.a[0].to_le_bytes(), e[0].left.code.a[1].to_le_bytes()].concat()
    );
    // A query: its unrotated row and masked code bits alone (the nodes make the 31 rotations).
    let q = NoLiftZ32.share_query(t, &cfg).unwrap();
    let qb = NoLiftZ32.encode(&q[1]);
    assert_eq!(&qb[2..6], 31u32.to_le_bytes());
    assert_eq!(qb.len(), HEADER_LEN + 2 * 2 * 3 * len * 4);
    let f = MpcLiftF16.share_query(t, &MatchConfig { mask_mode: MaskMode::Trimmed, ..cfg.clone() }).unwrap();
    assert_eq!(MpcLiftF16.encode(&f[2]).len(), HEADER_LEN + 2 * (2 * len + len / 2) * 2);
    // GR(2^16, 4): the unrotated row monomially, its bits, and the row in the query basis (the
    // nodes rotate); a share of the retired row-major layout (tag 5) is refused by name.
    let g = MpcLiftGr16.share_query(t, &cfg).unwrap();
    let gb = MpcLiftGr16.encode(&g[0]);
    assert_eq!(&gb[..2], &[1, 6]);
    assert_eq!(&gb[2..6], 31u32.to_le_bytes());
    assert_eq!(gb.len(), HEADER_LEN + 2 * 5 * len * 2);
    let mut old = gb.clone();
    old[1] = 5;
    let e = MpcLiftGr16.decode(&old, len, &cfg, query_kind(&cfg, G).unwrap()).unwrap_err().to_string();
    assert!(e.contains("retired row-major layout"), "{e}");
    let p = PlainMaskZ16.share_query(t, &cfg).unwrap();
    assert_eq!(PlainMaskZ16.encode(&p[0]).len(), HEADER_LEN + 2 * (2 * 2 * len * 2 + len / 8));
}

// ------------------------------------------------------------------ enrolment from a query

fn enrollment_from_query<S: Open>(s: &S, modes: &[MaskMode]) {
    for (i, t) in templates(3, 21).iter().enumerate() {
        for &mask_mode in modes {
            let cfg = MatchConfig { mask_mode, ..MatchConfig::default() };
            let q = s.share_query(t, &cfg).unwrap();
            let from_query: [S::Share; 3] = std::array::from_fn(|p| s.enrollment_of(&q[p]).unwrap());
            let direct = s.share_enrollment(t, &cfg).unwrap();
            let opened = S::open(&from_query);
            assert_eq!((opened.rows, opened.unrotated), (1, 0));
            assert_eq!(opened, S::open(&direct), "{} template {i} {mask_mode:?}", s.name());
            // An enrolment share holds exactly its own row.
            let again: [S::Share; 3] = std::array::from_fn(|p| s.enrollment_of(&direct[p]).unwrap());
            assert_eq!(S::open(&again), S::open(&direct));
        }
    }
}

#[test]
fn enrollment_of_a_query_opens_to_the_enrollment() {
    let both = [MaskMode::PerBit, MaskMode::Trimmed];
    every_scheme!(s => enrollment_from_query(&s, &both));
}

/// The window is clamped to the columns like the matcher's, and the unrotated row follows.
#[test]
fn query_kind_follows_the_window_and_geometry() {
    let cfg = MatchConfig::default();
    let narrow = IrisGeometry::new(2, 16, 1, 2).unwrap(); // 16 columns < 31 rotations: all of them
    assert_eq!(query_kind(&cfg, narrow).unwrap(), ShareKind::Query { rotations: 16, unrotated: 0, geometry: narrow });
    let w = MatchConfig { rotations: -3..=2, ..MatchConfig::default() };
    assert_eq!(query_kind(&w, G).unwrap(), ShareKind::Query { rotations: 6, unrotated: 3, geometry: G });
    let no_zero = MatchConfig { rotations: 1..=3, ..MatchConfig::default() };
    assert!(query_kind(&no_zero, G).is_err());
    assert_eq!((ShareKind::Enrollment.rows(), ShareKind::Enrollment.unrotated()), (1, 0));
    // The shares a client makes are of that kind, and their enrolment rows open correctly.
    let t = Generator::new(narrow, 5).unwrap().random_template();
    for (c, g) in [(&cfg, narrow), (&w, G)] {
        let t = if g == narrow { t.clone() } else { templates(1, 6).remove(0) };
        let kind = query_kind(c, g).unwrap();
        let q = MpcLiftF16.share_query(&t, c).unwrap();
        let back: [_; 3] =
            std::array::from_fn(|i| MpcLiftF16.decode(&MpcLiftF16.encode(&q[i]), g.bits(), c, kind).unwrap());
        let e: [_; 3] = std::array::from_fn(|i| MpcLiftF16.enrollment_of(&back[i]).unwrap());
        assert_eq!(MpcLiftF16::open(&e), MpcLiftF16::open(&MpcLiftF16.share_enrollment(&t, c).unwrap()));
    }
}

// ------------------------------------------------------------------ rejection of bad bytes

fn rejects<S: Open>(s: &S, other: u8) {
    let t = &templates(1, 31)[0];
    let cfg = MatchConfig::default();
    let len = G.bits();
    let kind = query_kind(&cfg, G).unwrap();
    let q = s.share_query(t, &cfg).unwrap();
    let e = s.share_enrollment(t, &cfg).unwrap();
    let (qb, eb) = (s.encode(&q[0]), s.encode(&e[1]));
    s.decode(&qb, len, &cfg, kind).unwrap();
    s.decode(&eb, len, &cfg, ShareKind::Enrollment).unwrap();

    // Truncated: inside the header, and by one byte of the body.
    for n in [0, 1, 5, HEADER_LEN - 1] {
        assert_rejects(s, &qb[..n], len, &cfg, kind, "truncated");
    }
    let e1 = assert_rejects(s, &qb[..qb.len() - 1], len, &cfg, kind, "truncated");
    assert!(e1.contains(&format!("expected {}", qb.len() - HEADER_LEN)), "{e1}");
    assert_rejects(s, &eb[..HEADER_LEN], len, &cfg, ShareKind::Enrollment, "truncated");
    // Trailing bytes.
    let mut long = eb.clone();
    long.extend_from_slice(&[0, 0, 0]);
    assert_rejects(s, &long, len, &cfg, ShareKind::Enrollment, "3 trailing bytes");
    // Version and scheme tag.
    let mut v = eb.clone();
    v[0] = 7;
    assert_rejects(s, &v, len, &cfg, ShareKind::Enrollment, "format version 7");
    let mut wrong = eb.clone();
    wrong[1] = other;
    let msg = assert_rejects(s, &wrong, len, &cfg, ShareKind::Enrollment, "share is for scheme");
    assert!(msg.contains(s.name()), "{msg}");
    wrong[1] = 200;
    assert_rejects(s, &wrong, len, &cfg, ShareKind::Enrollment, "unknown scheme tag 200");
    // Enrolment vs query rows, and the unrotated row.
    assert_rejects(s, &qb, len, &cfg, ShareKind::Enrollment, "share has 31 rows per eye, expected 1 (an enrolment)");
    assert_rejects(s, &eb, len, &cfg, kind, "share has 1 row per eye, expected 31 (a query)");
    let shifted = ShareKind::Query { rotations: 31, unrotated: 0, geometry: G };
    assert_rejects(s, &qb, len, &cfg, shifted, "unrotated row at 15, expected 0");
    // A code length that is not the geometry's (a 1024-bit deployment).
    assert_rejects(s, &eb, 2 * len, &cfg, ShareKind::Enrollment, "share has 512 code values per row, expected 1024");
    // A header stating a huge share is refused before anything is allocated.
    let mut huge = eb.clone();
    huge[10..14].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_rejects(s, &huge, len, &cfg, ShareKind::Enrollment, "code values per row");
    // An impossible expectation is the caller's error, not a panic.
    let bogus = ShareKind::Query { rotations: 3, unrotated: 3, geometry: G };
    assert!(matches!(s.decode(&qb, len, &cfg, bogus), Err(IrisError::Unsupported(_))));
    let huge = ShareKind::Query { rotations: usize::MAX, unrotated: 0, geometry: G };
    assert!(s.decode(&qb, len, &cfg, huge).is_err());
    for l in [0, usize::MAX] {
        assert!(matches!(s.decode(&qb, l, &cfg, kind), Err(IrisError::Unsupported(_))));
    }
}

#[test]
fn decode_rejects_malformed_shares() {
    rejects(&MpcLiftZ16, 2);
    rejects(&NoLiftZ32, 1);
    rejects(&MpcLiftF16, 4);
    rejects(&MpcLiftGr16, 3);
    rejects(&PlainMaskZ16, 3);
}

/// Trimmed masks are half as long: a per-bit share does not pass for a trimmed one (and vice
/// versa); public masks are stored expanded in both modes.
#[test]
fn decode_checks_the_mask_length_of_the_mode() {
    fn check<S: IrisScheme>(s: &S) {
        let t = &templates(1, 41)[0];
        let (per_bit, trimmed) =
            (MatchConfig::default(), MatchConfig { mask_mode: MaskMode::Trimmed, ..MatchConfig::default() });
        let len = G.bits();
        let pb = s.encode(&s.share_enrollment(t, &per_bit).unwrap()[0]);
        let tr = s.encode(&s.share_enrollment(t, &trimmed).unwrap()[0]);
        assert_rejects(s, &pb, len, &trimmed, ShareKind::Enrollment, "share has 512 mask values per row, expected 256");
        assert_rejects(s, &tr, len, &per_bit, ShareKind::Enrollment, "share has 256 mask values per row, expected 512");
    }
    check(&MpcLiftZ16);
    check(&NoLiftZ32);
    check(&MpcLiftF16);
    check(&MpcLiftGr16);
    let t = &templates(1, 41)[0];
    let trimmed = MatchConfig { mask_mode: MaskMode::Trimmed, ..MatchConfig::default() };
    let b = PlainMaskZ16.encode(&PlainMaskZ16.share_enrollment(t, &trimmed).unwrap()[0]);
    PlainMaskZ16.decode(&b, G.bits(), &MatchConfig::default(), ShareKind::Enrollment).unwrap();
    PlainMaskZ16.decode(&b, G.bits(), &trimmed, ShareKind::Enrollment).unwrap();
    // ... but a public mask given for trimmed masks must be one: its pairs equal.
    let per_bit = PlainMaskZ16.encode(&PlainMaskZ16.share_enrollment(t, &MatchConfig::default()).unwrap()[0]);
    let e = err_text(PlainMaskZ16.decode(&per_bit, G.bits(), &trimmed, ShareKind::Enrollment));
    assert!(e.contains("differ in a trimmed mask"), "{e}");
}

/// F_65519 shares are canonical: 65519 (= p) and 65535 are refused wherever they are.
#[test]
fn decode_rejects_field_values_of_p_and_above() {
    let t = &templates(1, 51)[0];
    let cfg = MatchConfig::default();
    let kind = query_kind(&cfg, G).unwrap();
    let q = MpcLiftF16.share_query(t, &cfg).unwrap();
    let b = MpcLiftF16.encode(&q[2]);
    let last = b.len() - 2;
    for (at, what) in [
        (HEADER_LEN, "left code shares"),
        (HEADER_LEN + 2 * G.bits() + 6, "left mask shares"),
        (HEADER_LEN + 2 * 2 * G.bits() + 8, "left code bit shares"),
        (last, "right code bit shares"),
    ] {
        for bad in [65519u16, 65535] {
            let mut c = b.clone();
            c[at..at + 2].copy_from_slice(&bad.to_le_bytes());
            let e = assert_rejects(&MpcLiftF16, &c, G.bits(), &cfg, kind, &format!("value {bad}"));
            assert!(e.contains(what) && e.contains("F_65519"), "{e}");
        }
        let mut ok = b.clone();
        ok[at..at + 2].copy_from_slice(&65518u16.to_le_bytes());
        MpcLiftF16.decode(&ok, G.bits(), &cfg, kind).unwrap();
    }
}

/// Public masks of a length that is not a whole number of bytes: stray padding bits are refused.
#[test]
fn decode_rejects_stray_mask_bits() {
    let g = IrisGeometry::new(3, 5, 1, 2).unwrap(); // 30 bits, 4 bytes per mask row
    let t = Generator::new(g, 1).unwrap().random_template();
    let cfg = MatchConfig::default();
    let mut b = PlainMaskZ16.encode(&PlainMaskZ16.share_enrollment(&t, &cfg).unwrap()[0]);
    PlainMaskZ16.decode(&b, 30, &cfg, ShareKind::Enrollment).unwrap();
    *b.last_mut().unwrap() |= 0x80;
    assert_rejects(&PlainMaskZ16, &b, 30, &cfg, ShareKind::Enrollment, "right mask: bits set past bit 30");
}

/// Decoding never panics: random bytes, random bytes behind a valid header, truncations and
/// single-byte corruptions of valid encodings. A corruption that is accepted re-encodes to the
/// same bytes (the encoding is canonical).
fn never_panics<S: IrisScheme>(s: &S) {
    let g = IrisGeometry::new(2, 8, 2, 2).unwrap(); // 64 bits, queries of 8 rows (clamped window)
    let t = Generator::new(g, 61).unwrap().random_template();
    let len = g.bits();
    let configs = [MatchConfig::default(), MatchConfig { mask_mode: MaskMode::Trimmed, ..MatchConfig::default() }];
    let mut runner = TestRunner::new(Config { cases: 256, failure_persistence: None, ..Config::default() });
    for cfg in &configs {
        let kind = query_kind(cfg, g).unwrap();
        let valid = [
            (s.encode(&s.share_query(&t, cfg).unwrap()[1]), kind),
            (s.encode(&s.share_enrollment(&t, cfg).unwrap()[2]), ShareKind::Enrollment),
        ];
        for (bytes, kind) in &valid {
            let decode = |b: &[u8]| -> Result<(), TestCaseError> {
                if let Ok(share) = s.decode(b, len, cfg, *kind) {
                    prop_assert_eq!(s.encode(&share), b.to_vec());
                }
                Ok(())
            };
            runner
                .run(&(0..bytes.len(), any::<u8>()), |(at, x)| {
                    let mut c = bytes.clone();
                    c[at] = x;
                    decode(&c)
                })
                .unwrap();
            runner
                .run(&(0..bytes.len() + 8), |n| {
                    let mut c = bytes.clone();
                    c.resize(n, 0);
                    decode(&c)
                })
                .unwrap();
            runner
                .run(&proptest::collection::vec(any::<u8>(), bytes.len() - HEADER_LEN), |body| {
                    let mut c = bytes[..HEADER_LEN].to_vec();
                    c.extend(body);
                    decode(&c)
                })
                .unwrap();
            runner.run(&proptest::collection::vec(any::<u8>(), 0..300), |b| decode(&b)).unwrap();
        }
    }
}

#[test]
fn decode_never_panics() {
    every_scheme!(s => never_panics(&s));
}

// ------------------------------------------------------------------ end to end, with removal

/// A database enrolled from the unrotated rows of query shares (through bytes, as a node gets
/// them) answers the batch check like one enrolled from enrolment shares; removing entries keeps
/// the order of the others and answers like a database built without them.
fn end_to_end<S: Open>(s: &S) {
    let mut g = Generator::new(G, 71).unwrap();
    let db: Vec<Template> = (0..8).map(|_| g.random_template()).collect();
    let batch = [
        g.genuine_template(&db[1]).unwrap(),
        g.genuine_template(&db[5]).unwrap(),
        g.genuine_template(&db[7]).unwrap(),
        g.random_template(),
        g.impostor(),
        g.genuine_template(&db[0]).unwrap(),
    ];
    let cfg = MatchConfig::default();
    let (len, kind) = (G.bits(), query_kind(&cfg, G).unwrap());
    // Removing 1, then 6 (t7 if the order is kept), then 0 leaves t2..t6.
    let removals = [1, 6, 0];
    let kept: Vec<Template> = db[2..7].to_vec();
    let want = |enrolled: &[Template]| -> Vec<bool> {
        (0..batch.len())
            .map(|i| {
                find_matches(&batch[i], enrolled, &cfg).unwrap().is_empty()
                    && find_matches(&batch[i], &batch[..i], &cfg).unwrap().is_empty()
            })
            .collect()
    };
    let (want_full, want_kept) = (want(&db), want(&kept));
    assert_eq!(want_full, vec![false, false, false, true, true, false]);
    assert_eq!(want_kept, vec![true, false, true, true, true, true]);

    let direct: Vec<[S::Share; 3]> = db.iter().map(|t| s.share_enrollment(t, &cfg).unwrap()).collect();
    let kept_direct: Vec<[S::Share; 3]> = kept.iter().map(|t| s.share_enrollment(t, &cfg).unwrap()).collect();
    // What a node stores when a client's query is unique: enrollment_of the decoded query share,
    // written to and read back from the store.
    let via_query: Vec<Vec<u8>> = db
        .iter()
        .flat_map(|t| {
            let q = s.share_query(t, &cfg).unwrap();
            (0..3).map(move |p| (q.clone(), p))
        })
        .map(|(q, p)| {
            let mine = s.decode(&s.encode(&q[p]), len, &cfg, kind).unwrap();
            s.encode(&s.enrollment_of(&mine).unwrap())
        })
        .collect();
    let queries: Vec<[S::Share; 3]> = batch.iter().map(|t| s.share_query(t, &cfg).unwrap()).collect();

    let out = run3(Backend::Memory, NetConfig::default(), |p| {
        let id = p.id();
        let build = |entries: &[[S::Share; 3]]| -> Result<S::Db, argus_mpc::MpcError> {
            let mut d = s.new_db(len);
            for e in entries {
                s.push(&mut d, &e[id])?;
            }
            Ok(d)
        };
        let full = build(&direct)?;
        let mut from_query = s.new_db(len);
        for k in 0..db.len() {
            let e = s.decode(&via_query[3 * k + id], len, &cfg, ShareKind::Enrollment).unwrap();
            s.push(&mut from_query, &e)?;
        }
        let mut removed = build(&direct)?;
        let per_entry = s.db_bytes(&removed) / db.len();
        for &r in &removals {
            s.remove(&mut removed, r)?;
        }
        let n = s.db_len(&removed);
        assert!(s.remove(&mut removed, n).is_err());
        let reference = build(&kept_direct)?;
        assert_eq!((s.db_len(&full), s.db_len(&from_query), s.db_len(&removed)), (8, 8, 5));
        assert_eq!(s.db_bytes(&from_query), s.db_bytes(&full));
        assert_eq!(s.db_bytes(&removed), s.db_bytes(&reference));
        assert_eq!(s.db_bytes(&removed), 5 * per_entry);
        let mine: Vec<S::Share> = queries.iter().map(|q| q[id].clone()).collect();
        Ok([&full, &from_query, &removed, &reference]
            .map(|d| s.check(p, &mine, d, &cfg, &argus_iris::protocol::Tuning::default(), true).map(|c| c.unique)))
    })
    .unwrap();
    for party in out {
        let [full, from_query, removed, reference] = party.map(Result::unwrap);
        assert_eq!(full, want_full, "{}", s.name());
        assert_eq!(from_query, want_full, "{}: database from query shares", s.name());
        assert_eq!(removed, want_kept, "{}: after removal", s.name());
        assert_eq!(reference, want_kept, "{}", s.name());
    }
}

#[test]
fn end_to_end_enrolment_from_queries_and_removal() {
    every_scheme!(s => end_to_end(&s));
}

/// `db_bytes` per identity: codes at `share_bytes_per_code_bit`, masks on top.
#[test]
fn memory_per_identity() {
    fn per_identity<S: IrisScheme>(s: &S, cfg: &MatchConfig) -> usize {
        let ts = templates(3, 81);
        let mut d = s.new_db(G.bits());
        for t in &ts {
            s.push(&mut d, &s.share_enrollment(t, cfg).unwrap()[0]).unwrap();
        }
        s.db_bytes(&d) / 3
    }
    let len = G.bits();
    let (pb, tr) = (MatchConfig::default(), MatchConfig { mask_mode: MaskMode::Trimmed, ..MatchConfig::default() });
    assert_eq!((MpcLiftZ16.share_bytes_per_code_bit(), NoLiftZ32.share_bytes_per_code_bit()), (4.0, 8.0));
    assert_eq!((MpcLiftF16.share_bytes_per_code_bit(), PlainMaskZ16.share_bytes_per_code_bit()), (2.0, 4.0));
    // Two eyes, code and mask: masks as wide as codes (per bit) or half (trimmed).
    assert_eq!(per_identity(&MpcLiftZ16, &pb), 2 * 2 * len * 4);
    assert_eq!(per_identity(&MpcLiftZ16, &tr), 2 * (len + len / 2) * 4);
    assert_eq!(per_identity(&NoLiftZ32, &pb), 2 * 2 * len * 8);
    assert_eq!(per_identity(&MpcLiftF16, &pb), 2 * 2 * len * 2);
    assert_eq!(per_identity(&MpcLiftF16, &tr), 2 * (len + len / 2) * 2);
    assert_eq!(MpcLiftGr16.share_bytes_per_code_bit(), 2.0);
    assert_eq!(per_identity(&MpcLiftGr16, &pb), 2 * 2 * len * 2);
    assert_eq!(per_identity(&MpcLiftGr16, &tr), 2 * (len + len / 2) * 2);
    // Public masks: packed bits.
    assert_eq!(per_identity(&PlainMaskZ16, &pb), 2 * (len * 4 + len / 8));
}
