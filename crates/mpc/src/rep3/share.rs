//! Getting values into and out of replicated shares.

use argus_math::{BitVec, Ring};
use argus_net::PartyId;
use rand_core::{CryptoRng, RngCore};

use super::{check_len, Rep3, Rep3Bits};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// An outside client splits `values` into three shares, one per party (`[share of party 0, 1, 2]`).
/// The client needs a CSPRNG; no party ever sees a plaintext.
pub fn share_from_client<R: Ring, G: RngCore + CryptoRng>(ring: &R, values: &[R::El], rng: &mut G) -> [Rep3<R>; 3] {
    let x0 = ring.sample_vec(rng, values.len());
    let x1 = ring.sample_vec(rng, values.len());
    let x2: Vec<R::El> = values.iter().zip(&x0).zip(&x1).map(|((&v, &a), &b)| ring.sub(ring.sub(v, a), b)).collect();
    let comps = [x0, x1, x2];
    std::array::from_fn(|i| Rep3 { ring: ring.clone(), a: comps[i].clone(), b: comps[(i + 2) % 3].clone() })
}

/// Bit version of [`share_from_client`].
pub fn share_bits_from_client<G: RngCore + CryptoRng>(values: &BitVec, rng: &mut G) -> [Rep3Bits; 3] {
    let x0 = BitVec::random(rng, values.len());
    let x1 = BitVec::random(rng, values.len());
    let x2 = values.xor(&x0).and_then(|v| v.xor(&x1)).expect("same length");
    let comps = [x0, x1, x2];
    std::array::from_fn(|i| Rep3Bits { a: comps[i].clone(), b: comps[(i + 2) % 3].clone() })
}

/// Party `owner` secret-shares its `values` (others pass `None` and the expected length `n`).
/// Owner `i` sets `x_{i-1}` from the seed it shares with `i-1`, `x_{i+1} = 0`, and sends
/// `x_i = v - x_{i-1}` to party `i+1`: one message of `n` elements, one round.
pub fn input<R: Ring>(p: &mut Party, ring: &R, owner: PartyId, values: Option<&[R::El]>, n: usize) -> Result<Rep3<R>> {
    check_owner(owner)?;
    let me = p.id();
    if me == owner {
        let v = values.ok_or_else(|| MpcError::InvalidParameter("the input owner must pass its values".into()))?;
        check_len(n, v.len())?;
        let r = ring.sample_vec(p.prg.prev(), n);
        let xi: Vec<R::El> = v.iter().zip(&r).map(|(&v, &r)| ring.sub(v, r)).collect();
        p.send_elems(ring, p.next(), &xi)?;
        Ok(Rep3 { ring: ring.clone(), a: xi, b: r })
    } else if me == (owner + 1) % 3 {
        let xi = p.recv_elems(ring, owner, n)?;
        Ok(Rep3 { ring: ring.clone(), a: vec![ring.zero(); n], b: xi })
    } else {
        let r = ring.sample_vec(p.prg.next(), n);
        Ok(Rep3 { ring: ring.clone(), a: r, b: vec![ring.zero(); n] })
    }
}

/// Bit version of [`input`].
pub fn input_bits(p: &mut Party, owner: PartyId, values: Option<&BitVec>, n: usize) -> Result<Rep3Bits> {
    check_owner(owner)?;
    let me = p.id();
    if me == owner {
        let v = values.ok_or_else(|| MpcError::InvalidParameter("the input owner must pass its values".into()))?;
        check_len(n, v.len())?;
        let r = BitVec::random(p.prg.prev(), n);
        let xi = v.xor(&r)?;
        p.net().send(p.next(), xi.to_bytes())?;
        Ok(Rep3Bits { a: xi, b: r })
    } else if me == (owner + 1) % 3 {
        let bytes = p.net().recv(owner)?;
        let xi =
            BitVec::from_bytes(&bytes, n).map_err(|e| MpcError::Malformed { peer: owner, reason: e.to_string() })?;
        Ok(Rep3Bits { a: BitVec::zeros(n), b: xi })
    } else {
        Ok(Rep3Bits { a: BitVec::random(p.prg.next(), n), b: BitVec::zeros(n) })
    }
}

fn check_owner(owner: PartyId) -> Result<()> {
    if owner >= 3 {
        return Err(MpcError::InvalidParameter(format!("input owner {owner} is not a party of 3")));
    }
    Ok(())
}

/// Opens `x` to all parties: each sends `x_{i-1}` to the next party, which lacks exactly it.
pub fn reveal<R: Ring>(p: &mut Party, x: &Rep3<R>) -> Result<Vec<R::El>> {
    let r = x.ring();
    let missing = p.pass_elems(r, &x.b)?;
    Ok(x.a.iter().zip(&x.b).zip(&missing).map(|((&a, &b), &c)| r.add(r.add(a, b), c)).collect())
}

/// Opens `x` to party `to` only (it returns `Some`); party `to + 1` sends it the missing `x_{to+1}`.
pub fn reveal_to<R: Ring>(p: &mut Party, x: &Rep3<R>, to: PartyId) -> Result<Option<Vec<R::El>>> {
    check_owner(to)?;
    let r = x.ring();
    if p.id() == (to + 1) % 3 {
        p.send_elems(r, to, &x.a)?;
    }
    if p.id() != to {
        return Ok(None);
    }
    let missing = p.recv_elems(r, p.next(), x.len())?;
    Ok(Some(x.a.iter().zip(&x.b).zip(&missing).map(|((&a, &b), &c)| r.add(r.add(a, b), c)).collect()))
}

/// Opens shared bits to all parties.
pub fn reveal_bits(p: &mut Party, x: &Rep3Bits) -> Result<BitVec> {
    let missing = p.pass_bits(std::slice::from_ref(&x.b))?.pop().expect("one part");
    Ok(x.a.xor(&x.b)?.xor(&missing)?)
}
