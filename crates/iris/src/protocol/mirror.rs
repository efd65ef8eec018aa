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

use argus_math::Ring;
use argus_mpc::rep3::Rep3;

use crate::IrisGeometry;

/// The unrotated row of `rows` rows of values.
pub(crate) fn unrotated<T: Clone>(v: &[T], rows: usize, unrotated: usize) -> &[T] {
    let w = v.len() / rows.max(1);
    &v[unrotated * w..][..w]
}

/// The mirror of a replicated row (the unrotated one of `rows`, at `u`): a public permutation of
/// both components, a code's imaginary values negated.
pub(crate) fn mirror_rep3<R: Ring>(x: &Rep3<R>, g: IrisGeometry, rows: usize, u: usize, code: bool) -> Rep3<R> {
    let ring = x.ring().clone();
    let neg = |v: R::El| ring.neg(v);
    let negate: Option<&dyn Fn(R::El) -> R::El> = if code { Some(&neg) } else { None };
    let a = g.mirror_values(unrotated(&x.a, rows, u), negate);
    let b = g.mirror_values(unrotated(&x.b, rows, u), negate);
    Rep3::from_parts(ring.clone(), a, b).expect("components of one length")
}
