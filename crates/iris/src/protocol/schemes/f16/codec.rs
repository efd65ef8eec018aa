//! The byte form of a Shamir share over F_65519: the body
//! (after the header of [`codec`](crate::protocol::codec)), per eye, left then right:
//! code shares (`n` × 2 B), mask shares (`m` × 2 B), for a query β (`n` × 2 B),
//! each value `< 65519`.

use argus_math::{Ring, F65519};
use argus_mpc::shamir::{Degree, Shamir};

use super::{FieldEyeShare, FieldTemplateShare};
use crate::protocol::codec::{
    bad, check_code_len, expected_shape, eye_values, mask_len_for, per_row, read_header, unrotated_range, wire_size,
    write_header, Reader, Shape, EYES, HEADER_LEN,
};
use crate::protocol::scheme::ShareKind;
use crate::protocol::Scheme;
use crate::{IrisError, MatchConfig};

/// The tag of this format ([`Scheme::tag`]).
const TAG: u8 = Scheme::MpcLiftF16.tag();

pub(crate) fn encode(s: &FieldTemplateShare) -> Vec<u8> {
    let f = F65519;
    let shape = Shape {
        rows: s.rows,
        unrotated: s.unrotated,
        code_len: per_row(s.left.code.len(), s.rows),
        mask_len: per_row(s.left.mask.len(), s.rows),
    };
    let row = |x: &Shamir<F65519>, width: usize| -> Vec<u16> {
        x.shares().get(s.unrotated * width..(s.unrotated + 1) * width).unwrap_or(x.shares()).to_vec()
    };
    let mut comps = Vec::new();
    for (e, bits) in [&s.left, &s.right].into_iter().zip([s.bits.first(), s.bits.get(1)]) {
        comps.push(row(&e.code, shape.code_len));
        comps.push(row(&e.mask, shape.mask_len));
        comps.extend(bits.map(|b| b.shares().to_vec()));
    }
    let mut out = Vec::with_capacity(HEADER_LEN + comps.iter().map(|c| 2 * c.len()).sum::<usize>());
    write_header(&mut out, TAG, &shape);
    for c in &comps {
        f.wire_encode(c, &mut out);
    }
    out
}

pub(crate) fn decode(
    bytes: &[u8],
    len: usize,
    cfg: &MatchConfig,
    expect: ShareKind,
) -> Result<FieldTemplateShare, IrisError> {
    let f = F65519;
    check_code_len(len)?;
    super::lifted_ring(len, cfg)?;
    let want = expected_shape(expect, len, mask_len_for(len, cfg.mask_mode)?)?;
    let body_size = || wire_size(&f, eye_values(expect, len, want.mask_len)?)?.checked_mul(2);
    let body = read_header(bytes, TAG, expect, &want, body_size())?;
    let mut r = Reader { rest: body };
    let mut bits = Vec::new();
    let mut eye = |name: &str| -> Result<FieldEyeShare, IrisError> {
        let mut comp = |count: usize, what: &str| -> Result<Shamir<F65519>, IrisError> {
            let v = r.elems(&f, count, &format!("{name} {what} shares"))?;
            Shamir::from_parts(f, Degree::One, v).map_err(|e| bad(e.to_string()))
        };
        let eye = FieldEyeShare { code: comp(len, "code")?, mask: comp(want.mask_len, "mask")? };
        if let ShareKind::Query { .. } = expect {
            bits.push(comp(len, "code bit")?);
        }
        Ok(eye)
    };
    let (left, right) = (eye(EYES[0])?, eye(EYES[1])?);
    r.finish()?;
    let row = FieldTemplateShare { left, right, rows: 1, unrotated: 0, bits: Vec::new() };
    Ok(match expect {
        ShareKind::Enrollment => row,
        ShareKind::Query { geometry, .. } => super::with_rotations(row, geometry, want.rows, want.unrotated, bits),
    })
}

pub(crate) fn enrollment_of(q: &FieldTemplateShare) -> Result<FieldTemplateShare, IrisError> {
    let row = |x: &Shamir<F65519>, what: &str| -> Result<Shamir<F65519>, IrisError> {
        let (start, width) = unrotated_range(x.len(), q.rows, q.unrotated, what)?;
        x.slice(start, width).map_err(|e| bad(e.to_string()))
    };
    let eye = |e: &FieldEyeShare| -> Result<FieldEyeShare, IrisError> {
        Ok(FieldEyeShare { code: row(&e.code, "code shares")?, mask: row(&e.mask, "mask shares")? })
    };
    Ok(FieldTemplateShare { left: eye(&q.left)?, right: eye(&q.right)?, rows: 1, unrotated: 0, bits: Vec::new() })
}
