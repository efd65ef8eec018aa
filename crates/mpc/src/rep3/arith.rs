//! Multiplication, resharing and length-independent dot products (paper 000 appendix C).

use argus_math::Ring;

use super::{check_len, Rep3};
use crate::error::{MpcError, Result};
use crate::party::Party;

/// Turns an additive sharing (one component `z_i` per party) into a replicated one: add a fresh
/// zero-sharing (re-randomisation) and send `z_i` to the next party. One round, one element each.
pub fn reshare<R: Ring>(p: &mut Party, ring: &R, mut z: Vec<R::El>) -> Result<Rep3<R>> {
    p.prg.add_zero_share(ring, &mut z);
    let prev = p.pass_elems(ring, &z)?;
    Rep3::from_parts(ring.clone(), z, prev)
}

/// [`reshare`] of several additive sharings at once (one round, one message per party): the
/// same as resharing their concatenation, without building it.
pub fn reshare_parts<R: Ring>(p: &mut Party, ring: &R, zs: Vec<Vec<R::El>>) -> Result<Vec<Rep3<R>>> {
    let uses = vec![ReshareFor::Any; zs.len()];
    reshare_parts_for(p, ring, zs, &uses)
}

/// What a reshared value is for ([`reshare_parts_for`]). The two-operand MSB ([`super::msb_of`],
/// [`super::msb_of_u32`], [`super::msb_two_operand`]) splits the values in thirds (in whole words
/// of 64 values); in third `s` party `s + 1` adds components `s` and `s + 1`, and parties `s + 2`
/// and `s` hold component `s + 2`. So component `s + 1` over third `s` is read only where it is
/// made, and the copy party `s + 2` would receive is not needed by the MSB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReshareFor {
    /// Any use: a full replicated sharing.
    Any,
    /// Only the input of a two-operand MSB of the same values, after local linear steps: that
    /// copy is not sent (a third fewer elements) and is left zero, so the result is **not a
    /// sharing for any other use**.
    Msb,
    /// MPCLift's `ml` in Z_2^k: the input of [`super::carry_count_for_msb`], then (with the carry
    /// count, locally) of a two-operand MSB. The copy above goes to the carry count's helper,
    /// which reads only its top two bits: those are sent, four values to a byte, the rest left
    /// zero. Again **not a sharing for any other use**.
    CarryCountThenMsb,
}

/// [`reshare`] for a use ([`ReshareFor`]).
pub fn reshare_for<R: Ring>(p: &mut Party, ring: &R, z: Vec<R::El>, use_: ReshareFor) -> Result<Rep3<R>> {
    Ok(reshare_parts_for(p, ring, vec![z], &[use_])?.pop().expect("one part"))
}

/// [`reshare_parts`] with each part's use ([`ReshareFor`]): all in one message, each party's
/// copy over the third where it is the MSB's adder sent in full, as two bits or not at all.
pub fn reshare_parts_for<R: Ring>(
    p: &mut Party,
    ring: &R,
    mut zs: Vec<Vec<R::El>>,
    uses: &[ReshareFor],
) -> Result<Vec<Rep3<R>>> {
    if uses.len() != zs.len() {
        return Err(MpcError::InvalidParameter(format!("{} parts but {} uses", zs.len(), uses.len())));
    }
    let top_shift = if uses.contains(&ReshareFor::CarryCountThenMsb) {
        match ring.modulus() {
            argus_math::Modulus::Pow2(k) if k >= 2 => k - 2,
            m => {
                return Err(MpcError::InvalidParameter(format!("a carry count's input lives in Z_2^k, k ≥ 2, not {m}")))
            }
        }
    } else {
        0
    };
    let top = |e: R::El| (ring.to_u128(e) >> top_shift) as u8 & 3;
    for z in &mut zs {
        p.prg.add_zero_share(ring, z);
    }
    let (me, next, prev) = (p.id(), p.next(), p.prev());
    // Sent: all but my copy over third me − 1 (where I am the adder), in full or as top bits.
    let mut msg = Vec::new();
    for (z, u) in zs.iter().zip(uses) {
        let skip = super::third(z.len(), (me + 2) % 3);
        match u {
            ReshareFor::Any => ring.wire_encode(z, &mut msg),
            ReshareFor::Msb => {
                ring.wire_encode(&z[..skip.start], &mut msg);
                ring.wire_encode(&z[skip.end..], &mut msg);
            }
            ReshareFor::CarryCountThenMsb => {
                ring.wire_encode(&z[..skip.start], &mut msg);
                ring.wire_encode(&z[skip.end..], &mut msg);
                msg.extend(
                    z[skip].chunks(4).map(|c| c.iter().enumerate().fold(0u8, |b, (i, &e)| b | top(e) << (2 * i))),
                );
            }
        }
    }
    let got = p.pass_next(msg)?;
    // Received: the previous party's copies, without (or with only the top bits over) the third
    // where it is the adder, which is my next party's third.
    let mut read = Reader { got: &got, at: 0, peer: prev };
    let mut out = Vec::with_capacity(zs.len());
    for (z, u) in zs.into_iter().zip(uses) {
        let n = z.len();
        let gap = super::third(n, next);
        let b = match u {
            ReshareFor::Any => read.elems(ring, n)?,
            ReshareFor::Msb | ReshareFor::CarryCountThenMsb => {
                let mut b = read.elems(ring, gap.start)?;
                let after = read.elems(ring, n - gap.end)?;
                if *u == ReshareFor::Msb {
                    b.resize(gap.end, ring.zero());
                } else {
                    let packed = read.bytes(gap.len().div_ceil(4))?;
                    let unpack = |i: usize| u128::from(packed[i / 4] >> (2 * (i % 4)) & 3) << top_shift;
                    b.extend((0..gap.len()).map(|i| ring.from_u128(unpack(i))));
                }
                b.extend_from_slice(&after);
                b
            }
        };
        out.push(Rep3::from_parts(ring.clone(), z, b)?);
    }
    if read.at != got.len() {
        return Err(MpcError::Malformed {
            peer: prev,
            reason: format!("{} trailing bytes in a reshare", got.len() - read.at),
        });
    }
    Ok(out)
}

/// Reads a message's pieces in order.
struct Reader<'a> {
    got: &'a [u8],
    at: usize,
    peer: argus_net::PartyId,
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, len: usize) -> Result<&'a [u8]> {
        let bytes = self.got.get(self.at..self.at + len).ok_or_else(|| MpcError::Malformed {
            peer: self.peer,
            reason: format!("a reshare of {} bytes is too short", self.got.len()),
        })?;
        self.at += len;
        Ok(bytes)
    }

    fn elems<R: Ring>(&mut self, ring: &R, n: usize) -> Result<Vec<R::El>> {
        let bytes = self.bytes(ring.wire_len(n))?;
        crate::party::decode_exact(ring, self.peer, bytes, n)
    }
}

/// Element-wise product `x ⊙ y` (paper 000 eq. 4): `z_i = x_i y_i + x_{i-1} y_i + x_i y_{i-1} + r_i`.
pub fn mul<R: Ring>(p: &mut Party, x: &Rep3<R>, y: &Rep3<R>) -> Result<Rep3<R>> {
    x.check_compatible(y)?;
    let r = x.ring();
    // x_i y_i + x_{i-1} y_i + x_i y_{i-1} = x_i (y_i + y_{i-1}) + x_{i-1} y_i
    let z =
        x.a.iter()
            .zip(&x.b)
            .zip(y.a.iter().zip(&y.b))
            .map(|((&xa, &xb), (&ya, &yb))| r.add(r.mul(xa, r.add(ya, yb)), r.mul(xb, ya)))
            .collect();
    reshare(p, r, z)
}

/// A share in the pre-processed form of paper 000 eq. 6: `(x_i + x_{i-1}, x_{i-1})`, so that a
/// product needs two plain multiplications: `z_i = a'_x a'_y - b_x b_y + r_i`.
#[derive(Clone)]
pub struct Rep3Pre<R: Ring> {
    /// `x_i + x_{i-1}`.
    pub sum: Vec<R::El>,
    /// `x_{i-1}`.
    pub b: Vec<R::El>,
    ring: R,
}

impl<R: Ring> std::fmt::Debug for Rep3Pre<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rep3Pre<{:?}>[{}]", self.ring, self.sum.len())
    }
}

impl<R: Ring> Rep3Pre<R> {
    /// Pre-processes a share (done once, e.g. when a database row is loaded).
    pub fn new(x: &Rep3<R>) -> Self {
        let r = x.ring();
        Rep3Pre { sum: x.a.iter().zip(&x.b).map(|(&a, &b)| r.add(a, b)).collect(), b: x.b.clone(), ring: r.clone() }
    }
    /// The ring.
    pub fn ring(&self) -> &R {
        &self.ring
    }
    /// An empty pre-processed vector (to grow with [`extend`](Self::extend)).
    pub fn empty(ring: R) -> Self {
        Rep3Pre { sum: Vec::new(), b: Vec::new(), ring }
    }
    /// Appends another pre-processed vector over the same ring (e.g. a newly enrolled row).
    pub fn extend(&mut self, o: &Rep3Pre<R>) -> Result<()> {
        if self.ring != o.ring {
            return Err(MpcError::RingMismatch { left: self.ring.modulus(), right: o.ring.modulus() });
        }
        self.sum.extend_from_slice(&o.sum);
        self.b.extend_from_slice(&o.b);
        Ok(())
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.sum.len()
    }
    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.sum.is_empty()
    }
}

/// Dot products of `rows` pairs of length-`len` vectors laid out row after row in `x` and `y`.
/// Communication is one element per row, whatever `len` is.
pub fn dot<R: Ring>(p: &mut Party, x: &Rep3<R>, y: &Rep3<R>, len: usize) -> Result<Rep3<R>> {
    x.check_compatible(y)?;
    dot_pre(p, &Rep3Pre::new(x), &Rep3Pre::new(y), len)
}

/// [`dot`] on pre-processed shares: two plain dot products per row (eq. 6), then a reshare.
pub fn dot_pre<R: Ring>(p: &mut Party, x: &Rep3Pre<R>, y: &Rep3Pre<R>, len: usize) -> Result<Rep3<R>> {
    if x.ring != y.ring {
        return Err(MpcError::RingMismatch { left: x.ring.modulus(), right: y.ring.modulus() });
    }
    check_len(x.len(), y.len())?;
    let rows = rows_of(x.len(), len)?;
    let r = &x.ring;
    let z = (0..rows)
        .map(|k| {
            let s = k * len..(k + 1) * len;
            r.sub(r.dot(&x.sum[s.clone()], &y.sum[s.clone()]), r.dot(&x.b[s.clone()], &y.b[s]))
        })
        .collect();
    reshare(p, r, z)
}

/// This party's additive share `z_i` (not yet re-randomised or reshared) of every dot product
/// between the `len`-long rows of `x` (e.g. queries) and of `y` (e.g. database rows):
/// `z[i·rows_y + j]`, by eq. 6 as two plain matrix products (`sum·sum − b·b`). Callers may combine
/// several such shares locally (e.g. `a·ml − b·hd`) and [`reshare`] once.
pub fn matmul_local<R: Ring>(x: &Rep3Pre<R>, y: &Rep3Pre<R>, len: usize) -> Result<Vec<R::El>> {
    if x.ring != y.ring {
        return Err(MpcError::RingMismatch { left: x.ring.modulus(), right: y.ring.modulus() });
    }
    let (rx, ry) = (rows_of(x.len(), len)?, rows_of(y.len(), len)?);
    let r = &x.ring;
    let mut z = vec![r.zero(); rx * ry];
    let mut t = vec![r.zero(); rx * ry];
    r.gemm(&x.sum, &y.sum, len, &mut z);
    r.gemm(&x.b, &y.b, len, &mut t);
    z.iter_mut().zip(&t).for_each(|(z, &t)| *z = r.sub(*z, t));
    Ok(z)
}

/// Every dot product between the rows of `x` and of `y` (see [`matmul_local`]), reshared: one
/// element per product and one round, whatever `len` is.
pub fn matmul<R: Ring>(p: &mut Party, x: &Rep3Pre<R>, y: &Rep3Pre<R>, len: usize) -> Result<Rep3<R>> {
    let z = matmul_local(x, y, len)?;
    reshare(p, &x.ring, z)
}

/// `total / len` if `total` splits into whole rows of `len > 0`.
pub(crate) fn rows_of(total: usize, len: usize) -> Result<usize> {
    if len == 0 || !total.is_multiple_of(len) {
        return Err(MpcError::InvalidParameter(format!("{total} elements do not split into rows of {len}")));
    }
    Ok(total / len)
}
