//! Products: local (degree 2), with degree reduction, and deferred-reduction dot products
//! (paper 000 section 4.3.2).

use argus_math::Field;

use super::convert::{from_rep3, to_rep3};
use super::{check_len, require_degree, Degree, Shamir};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// Element-wise product of two degree-1 sharings without degree reduction: each party multiplies
/// its two points, giving a degree-2 sharing (local).
pub fn mul_local<F: Field>(x: &Shamir<F>, y: &Shamir<F>) -> Result<Shamir<F>> {
    x.check_compatible(y)?;
    require_degree(x, Degree::One, "mul_local")?;
    let f = &x.field;
    let shares = x.shares.iter().zip(&y.shares).map(|(&a, &b)| f.mul(a, b)).collect();
    Ok(Shamir { field: f.clone(), degree: Degree::Two, shares })
}

/// Element-wise product `x ⊙ y` of degree-1 sharings, returned with degree 1.
///
/// Degree reduction through replicated sharing: the local degree-2 product is turned additive by
/// the Lagrange coefficient of the party's point, re-randomised by a zero-sharing and passed to
/// the next party ([`to_rep3`], i.e. `rep3::reshare`), and the replicated result is re-read as a
/// degree-1 Shamir sharing locally ([`from_rep3`]). One round, one element per value per party:
/// half of the classic re-sharing reduction (BGW/GRR: every party sends a fresh share of its
/// product to both others).
pub fn mul<F: Field>(p: &mut Party, x: &Shamir<F>, y: &Shamir<F>) -> Result<Shamir<F>> {
    let z = mul_local(x, y)?;
    let r = to_rep3(p, &z)?;
    from_rep3(p.id(), &r)
}

/// Dot products of `rows` pairs of length-`len` vectors laid out row after row in `x` and `y`
/// (degree 1), with deferred reduction: each party takes the plain dot product of its points
/// (one field dot product per row, the SIMD kernel for F_65519), which is a degree-2 sharing of
/// the result. Local: no communication whatever `len` is; reduce or convert the `rows` results
/// afterwards (e.g. [`to_rep3`]: one element per row).
pub fn dot<F: Field>(x: &Shamir<F>, y: &Shamir<F>, len: usize) -> Result<Shamir<F>> {
    x.check_compatible(y)?;
    require_degree(x, Degree::One, "dot")?;
    if len == 0 || !x.shares.chunks_exact(len).remainder().is_empty() {
        return Err(MpcError::InvalidParameter(format!("{} elements do not split into rows of {len}", x.len())));
    }
    check_len(x.len(), y.len())?;
    let f = &x.field;
    let shares = x.shares.chunks_exact(len).zip(y.shares.chunks_exact(len)).map(|(a, b)| f.dot(a, b)).collect();
    Ok(Shamir { field: f.clone(), degree: Degree::Two, shares })
}

/// All dot products between the `len`-long rows of `x` (e.g. queries) and of `y` (e.g. the
/// database), `out[i·rows_y + j] = <x_i, y_j>`, as degree-2 sharings: one plain matrix product
/// per party (the blocked SIMD kernel for F_65519), no communication.
pub fn matmul<F: Field>(x: &Shamir<F>, y: &Shamir<F>, len: usize) -> Result<Shamir<F>> {
    if x.field != y.field {
        return Err(MpcError::RingMismatch { left: x.field.modulus(), right: y.field.modulus() });
    }
    require_degree(x, Degree::One, "matmul")?;
    require_degree(y, Degree::One, "matmul")?;
    let (rx, ry) = (crate::rep3::rows_of(x.len(), len)?, crate::rep3::rows_of(y.len(), len)?);
    let mut shares = vec![x.field.zero(); rx * ry];
    x.field.gemm(&x.shares, &y.shares, len, &mut shares);
    Ok(Shamir { field: x.field.clone(), degree: Degree::Two, shares })
}
