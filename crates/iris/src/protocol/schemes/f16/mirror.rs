//! The mirrored query of Shamir shares over F_65519 ([`crate::protocol::mirror`]).

use argus_math::Ring;
use argus_mpc::shamir::{Degree, Shamir};

use super::{with_rotations, FieldEyeShare, FieldTemplateShare};
use crate::protocol::mirror::unrotated;
use crate::IrisGeometry;

/// F_65519 queries, mirrored (local).
pub(crate) fn mirrored(queries: &[FieldTemplateShare], g: IrisGeometry) -> Vec<FieldTemplateShare> {
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
            with_rotations(one, g, q.rows, q.unrotated, Vec::new())
        })
        .collect()
}
