//! The mirrored query of public-mask shares ([`crate::protocol::mirror`]).

use argus_mpc::MpcError;

use super::{with_rotations, PlainMaskShare};
use crate::protocol::mirror::mirror_rep3;
use crate::IrisGeometry;

/// Public-mask queries, mirrored (local).
pub(crate) fn mirrored(queries: &[PlainMaskShare], g: IrisGeometry) -> Result<Vec<PlainMaskShare>, MpcError> {
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
            with_rotations(one, g, q.rows, q.unrotated, Vec::new())
                .map_err(|e| MpcError::InvalidParameter(e.to_string()))
        })
        .collect()
}
