//! The mirrored query of Shamir shares over GR(2^16, 4) ([`crate::protocol::mirror`]): each
//! party deals its mirrored additive values afresh (one round).

use argus_math::{Ring, Z16};
use argus_mpc::galois::{self as mg, Basis};
use argus_mpc::{MpcError, Party};
use rand::rngs::OsRng;

use super::{GrEyeShare, GrTemplateShare};
use crate::IrisGeometry;

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
pub(crate) fn mirrored(
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
