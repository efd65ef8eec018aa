//! The byte form of a Shamir share over GR(2^16, 4): the body
//! (after the header of [`codec`](crate::protocol::codec)), per eye, left then right:
//! values column-major ([`column_major`](super::column_major)): the row shared
//! monomially — code (`n` × 2 B), mask (`m` × 2 B) — then, for a query only, β monomially
//! (`n` × 2 B) and the row shared in the query basis, code then mask; every u16 is a valid
//! coefficient.

use argus_math::Ring;

use super::{GrEyeShare, GrTemplateShare};
use crate::protocol::codec::{
    bad, check_code_len, expected_shape, mask_len_for, read_header, write_header, Reader, Shape, EYES, HEADER_LEN,
};
use crate::protocol::scheme::ShareKind;
use crate::protocol::Scheme;
use crate::{IrisError, MatchConfig};

/// The tag of this format ([`Scheme::tag`]).
const TAG: u8 = Scheme::MpcLiftGr16.tag();

pub(crate) fn encode(s: &GrTemplateShare) -> Vec<u8> {
    let ring = argus_math::Z16::new();
    let shape = Shape {
        rows: s.rows,
        unrotated: s.unrotated,
        code_len: s.entry[0].code.len(),
        mask_len: s.entry[0].mask.len(),
    };
    let comps =
        (0..2).flat_map(|e| [&s.entry[e].code, &s.entry[e].mask, &s.bits[e], &s.query[e].code, &s.query[e].mask]);
    let mut out = Vec::with_capacity(HEADER_LEN + comps.clone().map(|c| 2 * c.len()).sum::<usize>());
    write_header(&mut out, TAG, &shape);
    for c in comps {
        ring.wire_encode(c, &mut out);
    }
    out
}

pub(crate) fn decode(
    bytes: &[u8],
    len: usize,
    cfg: &MatchConfig,
    expect: ShareKind,
) -> Result<GrTemplateShare, IrisError> {
    let ring = argus_math::Z16::new();
    check_code_len(len)?;
    // A query carries its masked code bits and one row in the query basis on top of the
    // monomial entry row.
    let cols = match expect {
        ShareKind::Enrollment => None,
        ShareKind::Query { geometry, .. } => Some(geometry.cols),
    };
    let query_rows = usize::from(cols.is_some());
    super::check_len(len, cols, cfg)?;
    let want = expected_shape(expect, len, mask_len_for(len, cfg.mask_mode)?)?;
    let (n, m) = (query_rows.checked_mul(len), query_rows.checked_mul(want.mask_len));
    let body_size = || n?.checked_mul(2)?.checked_add(m?)?.checked_add(len + want.mask_len)?.checked_mul(4);
    let body = read_header(bytes, TAG, expect, &want, body_size())?;
    let (n, m) = (n.unwrap_or(0), m.unwrap_or(0));
    let mut r = Reader { rest: body };
    let mut eye = |name: &str| -> Result<(GrEyeShare, Vec<u16>, GrEyeShare), IrisError> {
        let mut comp = |count: usize, what: &str| r.elems(&ring, count, &format!("{name} {what} shares"));
        let entry = GrEyeShare { code: comp(len, "code")?, mask: comp(want.mask_len, "mask")? };
        let bits = comp(n, "code bit")?;
        let query = GrEyeShare { code: comp(n, "query code")?, mask: comp(m, "query mask")? };
        Ok((entry, bits, query))
    };
    let ((el, bl, ql), (er, br, qr)) = (eye(EYES[0])?, eye(EYES[1])?);
    r.finish()?;
    Ok(GrTemplateShare {
        entry: [el, er],
        query: [ql, qr],
        rows: want.rows,
        unrotated: want.unrotated,
        cols: cols.unwrap_or(0),
        bits: [bl, br],
    })
}

pub(crate) fn enrollment_of(q: &GrTemplateShare) -> Result<GrTemplateShare, IrisError> {
    if q.rows == 0 || q.unrotated >= q.rows {
        return Err(bad(format!("a share of {} rows has no unrotated row {}", q.rows, q.unrotated)));
    }
    Ok(GrTemplateShare {
        entry: q.entry.clone(),
        query: Default::default(),
        rows: 1,
        unrotated: 0,
        cols: 0,
        bits: Default::default(),
    })
}
