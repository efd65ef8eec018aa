//! The byte form of a replicated share (Z_2^16, Z_2^32): the body
//! (after the header of [`codec`](crate::protocol::codec)), per eye, left then right:
//! code `a` (`n`), code `b` (`n`), mask `a` (`m`), mask `b` (`m`) — the two
//! components `(x_i, x_{i-1})` a party holds — then for a query β `a` and `b` (`n` each).

use argus_math::Ring;
use argus_mpc::rep3::Rep3;

use super::{EyeShare, TemplateShare};
use crate::protocol::codec::{
    bad, check_code_len, expected_shape, eye_values, mask_len_for, per_row, read_header, unrotated_range, wire_size,
    write_header, Reader, Shape, EYES, HEADER_LEN,
};
use crate::protocol::compare::check_ring;
use crate::protocol::scheme::ShareKind;
use crate::{IrisError, MatchConfig};

pub(crate) fn encode<R: Ring>(tag: u8, s: &TemplateShare<R>) -> Vec<u8> {
    let ring = s.left.code.ring();
    let shape = Shape {
        rows: s.rows,
        unrotated: s.unrotated,
        code_len: per_row(s.left.code.len(), s.rows),
        mask_len: per_row(s.left.mask.len(), s.rows),
    };
    let row = |x: &Rep3<R>, width: usize| x.slice(s.unrotated * width, width).unwrap_or_else(|_| x.clone());
    let mut comps = Vec::new();
    for (e, bits) in [&s.left, &s.right].into_iter().zip([s.bits.first(), s.bits.get(1)]) {
        comps.push(row(&e.code, shape.code_len));
        comps.push(row(&e.mask, shape.mask_len));
        comps.extend(bits.cloned());
    }
    let size = HEADER_LEN + comps.iter().map(|c| 2 * wire_size(ring, c.len()).unwrap_or(0)).sum::<usize>();
    let mut out = Vec::with_capacity(size);
    write_header(&mut out, tag, &shape);
    for c in &comps {
        ring.wire_encode(&c.a, &mut out);
        ring.wire_encode(&c.b, &mut out);
    }
    out
}

pub(crate) fn decode<R: Ring>(
    ring: &R,
    tag: u8,
    bytes: &[u8],
    len: usize,
    cfg: &MatchConfig,
    expect: ShareKind,
) -> Result<TemplateShare<R>, IrisError> {
    check_code_len(len)?;
    check_ring(ring, len, cfg)?;
    let want = expected_shape(expect, len, mask_len_for(len, cfg.mask_mode)?)?;
    // Two eyes of two components each.
    let body_size = || wire_size(ring, eye_values(expect, len, want.mask_len)?)?.checked_mul(4);
    let body = read_header(bytes, tag, expect, &want, body_size())?;
    let mut r = Reader { rest: body };
    let mut bits = Vec::new();
    let mut eye = |name: &str| -> Result<EyeShare<R>, IrisError> {
        let mut comp = |count: usize, what: &str| -> Result<Rep3<R>, IrisError> {
            let a = r.elems(ring, count, &format!("{name} {what} shares"))?;
            let b = r.elems(ring, count, &format!("{name} {what} shares"))?;
            Rep3::from_parts(ring.clone(), a, b).map_err(|e| bad(e.to_string()))
        };
        let eye = EyeShare { code: comp(len, "code")?, mask: comp(want.mask_len, "mask")? };
        if let ShareKind::Query { .. } = expect {
            bits.push(comp(len, "code bit")?);
        }
        Ok(eye)
    };
    let (left, right) = (eye(EYES[0])?, eye(EYES[1])?);
    r.finish()?;
    let row = TemplateShare { left, right, rows: 1, unrotated: 0, bits: Vec::new() };
    Ok(match expect {
        ShareKind::Enrollment => row,
        ShareKind::Query { geometry, .. } => super::with_rotations(row, geometry, want.rows, want.unrotated, bits),
    })
}

pub(crate) fn enrollment_of<R: Ring>(q: &TemplateShare<R>) -> Result<TemplateShare<R>, IrisError> {
    let row = |x: &Rep3<R>, what: &str| -> Result<Rep3<R>, IrisError> {
        let (start, width) = unrotated_range(x.len(), q.rows, q.unrotated, what)?;
        x.slice(start, width).map_err(|e| bad(e.to_string()))
    };
    let eye = |e: &EyeShare<R>| -> Result<EyeShare<R>, IrisError> {
        Ok(EyeShare { code: row(&e.code, "code shares")?, mask: row(&e.mask, "mask shares")? })
    };
    Ok(TemplateShare { left: eye(&q.left)?, right: eye(&q.right)?, rows: 1, unrotated: 0, bits: Vec::new() })
}
