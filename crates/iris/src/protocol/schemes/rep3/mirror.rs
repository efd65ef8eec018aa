//! The mirrored query of replicated shares ([`crate::protocol::mirror`]).

use argus_math::Ring;

use super::{with_rotations, EyeShare, TemplateShare};
use crate::protocol::mirror::mirror_rep3;
use crate::IrisGeometry;

/// Replicated queries, mirrored (local).
pub(crate) fn mirrored<R: Ring>(queries: &[TemplateShare<R>], g: IrisGeometry) -> Vec<TemplateShare<R>> {
    queries
        .iter()
        .map(|q| {
            let eye = |e: &EyeShare<R>| EyeShare {
                code: mirror_rep3(&e.code, g, q.rows, q.unrotated, true),
                mask: mirror_rep3(&e.mask, g, q.rows, q.unrotated, false),
            };
            let row =
                TemplateShare { left: eye(&q.right), right: eye(&q.left), rows: 1, unrotated: 0, bits: Vec::new() };
            with_rotations(row, g, q.rows, q.unrotated, Vec::new())
        })
        .collect()
}
