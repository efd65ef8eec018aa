//! The mirrored query (issue 35, item 9): the shares of [`Template::mirrored`](crate::Template::mirrored)
//! from a query's shares — each eye mirrored ([`IrisGeometry::mirror_values`]: a public
//! permutation of the values, the imaginary code values negated) and the eyes swapped — which a
//! node checks against its database to find mirror attacks.
//!
//! Replicated, F_65519 and public-mask shares: local (a permutation and a negation are linear).
//! GR(2^16, 4): the permutation moves whole ring elements (shares are column-major), but negating
//! some values of an element is no ring operation, so each party takes its additive values
//! (`λ_i·t_i`), mirrors them, and deals a fresh Shamir sharing of them in both bases to the others
//! (one round); the three sharings add up to the mirrored rows.

use argus_math::{Ring, Z16};
use argus_mpc::galois::{self as mg, Basis};
use argus_mpc::rep3::Rep3;
use argus_mpc::shamir::{Degree, Shamir};
use argus_mpc::{MpcError, Party};
use rand::rngs::OsRng;

use super::field::{FieldEyeShare, FieldTemplateShare};
use super::galois::{GrEyeShare, GrTemplateShare};
use super::plain_mask::PlainMaskShare;
use super::{EyeShare, TemplateShare};
use crate::IrisGeometry;

fn unrotated<T: Clone>(v: &[T], rows: usize, unrotated: usize) -> &[T] {
    let w = v.len() / rows.max(1);
    &v[unrotated * w..][..w]
}

fn mirror_rep3<R: Ring>(x: &Rep3<R>, g: IrisGeometry, rows: usize, u: usize, code: bool) -> Rep3<R> {
    let ring = x.ring().clone();
    let neg = |v: R::El| ring.neg(v);
    let negate: Option<&dyn Fn(R::El) -> R::El> = if code { Some(&neg) } else { None };
    let a = g.mirror_values(unrotated(&x.a, rows, u), negate);
    let b = g.mirror_values(unrotated(&x.b, rows, u), negate);
    Rep3::from_parts(ring.clone(), a, b).expect("components of one length")
}

/// Replicated queries, mirrored (local).
pub fn mirrored_rep3<R: Ring>(queries: &[TemplateShare<R>], g: IrisGeometry) -> Vec<TemplateShare<R>> {
    queries
        .iter()
        .map(|q| {
            let eye = |e: &EyeShare<R>| EyeShare {
                code: mirror_rep3(&e.code, g, q.rows, q.unrotated, true),
                mask: mirror_rep3(&e.mask, g, q.rows, q.unrotated, false),
            };
            let row =
                TemplateShare { left: eye(&q.right), right: eye(&q.left), rows: 1, unrotated: 0, bits: Vec::new() };
            super::with_rotations(row, g, q.rows, q.unrotated, Vec::new())
        })
        .collect()
}

/// F_65519 queries, mirrored (local).
pub fn mirrored_field(queries: &[FieldTemplateShare], g: IrisGeometry) -> Vec<FieldTemplateShare> {
    let f = argus_math::F65519;
    let neg = |v: u16| f.neg(v);
    queries
        .iter()
        .map(|q| {
            let row = |x: &Shamir<argus_math::F65519>, code: bool| {
                let negate: Option<&dyn Fn(u16) -> u16> = if code { Some(&neg) } else { None };
                let v = g.mirror_values(unrotated(x.shares(), q.rows, q.unrotated), negate);
                Shamir::from_parts(f, Degree::One, v).expect("degree-1 shares")
            };
            let eye = |e: &FieldEyeShare| FieldEyeShare { code: row(&e.code, true), mask: row(&e.mask, false) };
            let one = FieldTemplateShare {
                left: eye(&q.right),
                right: eye(&q.left),
                rows: 1,
                unrotated: 0,
                bits: Vec::new(),
            };
            super::field::with_rotations(one, g, q.rows, q.unrotated, Vec::new())
        })
        .collect()
}

/// Public-mask queries, mirrored (local).
pub fn mirrored_plain_mask(queries: &[PlainMaskShare], g: IrisGeometry) -> Result<Vec<PlainMaskShare>, MpcError> {
    queries
        .iter()
        .map(|q| {
            let mask = |m: &[argus_math::BitVec]| {
                let row =
                    m.get(q.unrotated).ok_or_else(|| MpcError::InvalidParameter("a query without its mask".into()))?;
                Ok::<_, MpcError>(vec![argus_math::BitVec::from_bools(&g.mirror_values(&row.to_bools(), None))])
            };
            let one = PlainMaskShare {
                codes: [1, 0].map(|e| mirror_rep3(&q.codes[e], g, q.rows, q.unrotated, true)),
                masks: [mask(&q.masks[1])?, mask(&q.masks[0])?],
                rows: 1,
                unrotated: 0,
                bits: Vec::new(),
            };
            super::plain_mask::with_rotations(one, g, q.rows, q.unrotated, Vec::new())
                .map_err(|e| MpcError::InvalidParameter(e.to_string()))
        })
        .collect()
}

/// [`IrisGeometry::mirror_values`] for a GR row, column-major (`[col][row][cell]`).
fn mirror_column_major(v: &[u16], g: IrisGeometry, code: bool) -> Vec<u16> {
    let block = v.len() / g.cols.max(1);
    let cell = block / g.rows.max(1);
    let negate = code && cell == g.cell_bits() && g.parts >= 2;
    let mut out = Vec::with_capacity(v.len());
    for col in 0..g.cols {
        let from = (g.cols - col) % g.cols;
        out.extend(v[from * block..][..block].iter().enumerate().map(|(k, &x)| {
            if negate && (k % cell) % g.parts == 1 {
                x.wrapping_neg()
            } else {
                x
            }
        }));
    }
    out
}

/// GR queries, mirrored: every party deals its mirrored additive values of each query-basis row
/// (one round, 2 rows of `len` values per query to each peer). The mirrored query is checked
/// against the database alone (no batch deduplication), which reads its query-basis rows only:
/// its monomial rows are zero.
pub fn mirrored_gr(
    p: &mut Party,
    queries: &[GrTemplateShare],
    g: IrisGeometry,
) -> Result<Vec<GrTemplateShare>, MpcError> {
    let me = p.id();
    // Per query, per (new) eye: query-basis code, query-basis mask.
    let mut dealt: [Vec<u16>; 3] = Default::default();
    let mut lens = Vec::new();
    for q in queries {
        for old in [1, 0] {
            for (t, code) in [(&q.query[old].code, true), (&q.query[old].mask, false)] {
                let v = mirror_column_major(&mg::additive_values(me, t, Basis::Query)?, g, code);
                let shares = mg::share_from_client(&v, Basis::Query, &mut OsRng)?;
                for (d, s) in dealt.iter_mut().zip(shares) {
                    d.extend(s);
                }
                lens.push(t.len());
            }
        }
    }
    let [a, b, c] = dealt;
    let mut mine = [a, b, c];
    let own = std::mem::take(&mut mine[me]);
    for peer in [p.next(), p.prev()] {
        let mut bytes = Vec::with_capacity(2 * mine[peer].len());
        Z16::new().wire_encode(&mine[peer], &mut bytes);
        p.net().send(peer, bytes)?;
    }
    let mut sum = own;
    for peer in [p.next(), p.prev()] {
        let got = p.net().recv(peer)?;
        let got =
            Z16::new().wire_decode(&got, sum.len()).map_err(|e| MpcError::Malformed { peer, reason: e.to_string() })?;
        for (s, x) in sum.iter_mut().zip(got) {
            *s = s.wrapping_add(x);
        }
    }
    let mut rows = lens.iter().scan(0usize, |at, &n| {
        let r = sum[*at..*at + n].to_vec();
        *at += n;
        Some(r)
    });
    let mut next = || rows.next().expect("two rows per eye");
    Ok(queries
        .iter()
        .map(|q| {
            let mut eye = || {
                let (qc, qm) = (next(), next());
                let zero = GrEyeShare { code: vec![0; qc.len()], mask: vec![0; qm.len()] };
                (zero, GrEyeShare { code: qc, mask: qm })
            };
            let ((el, ql), (er, qr)) = (eye(), eye());
            GrTemplateShare {
                entry: [el, er],
                query: [ql, qr],
                rows: q.rows,
                unrotated: q.unrotated,
                cols: q.cols,
                bits: Default::default(),
            }
        })
        .collect())
}
