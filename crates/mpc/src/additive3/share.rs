//! Getting values into and out of additive shares; Reshare (Alg. 1); conversions to and from
//! replicated shares.

use argus_math::Ring;
use argus_net::PartyId;
use rand_core::{CryptoRng, RngCore};

use super::{check_len, Add3};
use crate::error::{MpcError, Result};
use crate::party::Party;
use crate::rep3::{self, Rep3};

/// An outside client splits `values` into three additive shares (`[share of party 0, 1, 2]`).
pub fn share_from_client<R: Ring, G: RngCore + CryptoRng>(ring: &R, values: &[R::El], rng: &mut G) -> [Add3<R>; 3] {
    let x1 = ring.sample_vec(rng, values.len());
    let x2 = ring.sample_vec(rng, values.len());
    let x0 = values.iter().zip(&x1).zip(&x2).map(|((&v, &a), &b)| ring.sub(ring.sub(v, a), b)).collect();
    [x0, x1, x2].map(|x| Add3::new(ring.clone(), x))
}

/// Party `owner` secret-shares its `values` (the others pass `None` and the length `n`). The
/// other two parties' components are drawn from the streams they share with the owner, which
/// keeps `v` minus both: no message at all.
pub fn input<R: Ring>(p: &mut Party, ring: &R, owner: PartyId, values: Option<&[R::El]>, n: usize) -> Result<Add3<R>> {
    p.require("additive3", 3)?;
    if owner >= 3 {
        return Err(MpcError::InvalidParameter(format!("input owner {owner} is not a party of 3")));
    }
    let me = p.id();
    if me != owner {
        let stream = p.prg.with(owner).expect("owner is another party");
        return Ok(Add3::new(ring.clone(), ring.sample_vec(stream, n)));
    }
    let v = values.ok_or_else(|| MpcError::InvalidParameter("the input owner must pass its values".into()))?;
    check_len(n, v.len())?;
    let a = ring.sample_vec(p.prg.next(), n);
    let b = ring.sample_vec(p.prg.prev(), n);
    let x = v.iter().zip(a).zip(b).map(|((&v, a), b)| ring.sub(ring.sub(v, a), b)).collect();
    Ok(Add3::new(ring.clone(), x))
}

/// Reshare (Alg. 1): a fresh sharing of the same values, each component `u_i + r_{i,i+1} -
/// r_{i-1,i}` with the `r` drawn from the pairwise streams instead of sent. No message.
pub fn reshare<R: Ring>(p: &mut Party, x: &Add3<R>) -> Add3<R> {
    let mut out = x.clone();
    p.prg.add_zero_share(x.ring(), &mut out.x);
    out
}

/// Opens `x` to all parties: each sends its (re-randomised) component to both others. One round,
/// two elements per value per party.
pub fn reveal<R: Ring>(p: &mut Party, x: &Add3<R>) -> Result<Vec<R::El>> {
    let r = x.ring();
    let mine = reshare(p, x).x;
    for q in [p.next(), p.prev()] {
        p.send_elems(r, q, &mine)?;
    }
    let (a, b) = (p.recv_elems(r, p.next(), x.len())?, p.recv_elems(r, p.prev(), x.len())?);
    Ok(mine.iter().zip(a).zip(b).map(|((&m, a), b)| r.add(r.add(m, a), b)).collect())
}

/// Opens `x` to party `to` alone (it returns `Some`): the other two send it their components.
pub fn reveal_to<R: Ring>(p: &mut Party, x: &Add3<R>, to: PartyId) -> Result<Option<Vec<R::El>>> {
    if to >= 3 {
        return Err(MpcError::InvalidParameter(format!("party {to} is not a party of 3")));
    }
    let r = x.ring();
    let mine = reshare(p, x).x;
    if p.id() != to {
        p.send_elems(r, to, &mine)?;
        return Ok(None);
    }
    let (a, b) = (p.recv_elems(r, p.next(), x.len())?, p.recv_elems(r, p.prev(), x.len())?);
    Ok(Some(mine.iter().zip(a).zip(b).map(|((&m, a), b)| r.add(r.add(m, a), b)).collect()))
}

/// The replicated sharing of the same values: each party passes its (re-randomised) component to
/// the next, which is Alg. 2's lines 3–5. One round, one element per value.
pub fn to_rep3<R: Ring>(p: &mut Party, x: &Add3<R>) -> Result<Rep3<R>> {
    rep3::reshare(p, x.ring(), x.x.clone())
}

/// The additive sharing of a replicated one: each party keeps its own component (local).
pub fn from_rep3<R: Ring>(x: &Rep3<R>) -> Add3<R> {
    Add3::new(x.ring().clone(), x.a.clone())
}
