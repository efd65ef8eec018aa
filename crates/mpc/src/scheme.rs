//! The seam every protocol family plugs into: one interface to arithmetic on secret-shared
//! vectors, so that a protocol or an app written once (a comparison, a division, k-means) runs on
//! every scheme that has the operations it needs — and under two more interpreters that make
//! testing cheap and honest (swanky's one program, many interpreters; `shared/STYLE.md`):
//!
//! * [`Plain`], the plaintext twin: the same code on clear values;
//! * [`Cost`], the cost counter: the rounds and bytes each party would send, from the scheme's
//!   [`CostModel`], without running a network.
//!
//! The real schemes implement [`Scheme`] on a party's session: [`crate::additive3::Additive3`],
//! [`crate::rep3::Rep3Scheme`] and [`crate::shamir::ShamirScheme`]. Every operation works on a
//! whole vector in a number of rounds that does not depend on its length.

use argus_math::Ring;
use argus_net::PartyId;

use crate::error::{MpcError, Result};

/// An element of a scheme's ring.
pub type El<S> = <<S as Scheme>::Ring as Ring>::El;

/// Arithmetic on secret-shared vectors over a ring.
pub trait Scheme {
    /// The ring the shares live in.
    type Ring: Ring;
    /// One party's share of a vector (or, for the interpreters, what stands for it).
    type Share: Clone + std::fmt::Debug;

    /// The ring.
    fn ring(&self) -> &Self::Ring;
    /// Number of elements `x` shares.
    fn len(&self, x: &Self::Share) -> usize;
    /// Party `owner` secret-shares its `values` (the others pass `None` and the length `n`).
    fn input(&mut self, owner: PartyId, values: Option<&[El<Self>]>, n: usize) -> Result<Self::Share>;
    /// Opens `x` to every party.
    fn reveal(&mut self, x: &Self::Share) -> Result<Vec<El<Self>>>;
    /// Opens `x` to party `to` alone (which gets `Some`).
    fn reveal_to(&mut self, x: &Self::Share, to: PartyId) -> Result<Option<Vec<El<Self>>>>;
    /// A sharing of the public vector `c` (local).
    fn constant(&self, c: &[El<Self>]) -> Self::Share;
    /// `x + y` (local).
    fn add(&self, x: &Self::Share, y: &Self::Share) -> Result<Self::Share>;
    /// `x - y` (local).
    fn sub(&self, x: &Self::Share, y: &Self::Share) -> Result<Self::Share>;
    /// `c · x` for a public vector `c` (local).
    fn mul_public(&self, x: &Self::Share, c: &[El<Self>]) -> Result<Self::Share>;
    /// `c · x` for one public scalar (local).
    fn scale(&self, x: &Self::Share, c: El<Self>) -> Self::Share {
        let n = self.len(x);
        self.mul_public(x, &vec![c; n]).expect("same length")
    }
    /// `x + c` for a public vector `c` (local).
    fn add_public(&self, x: &Self::Share, c: &[El<Self>]) -> Result<Self::Share> {
        self.add(x, &self.constant(c))
    }
    /// Element-wise products of several pairs, all in one round.
    fn mul_many(&mut self, pairs: &[(&Self::Share, &Self::Share)]) -> Result<Vec<Self::Share>>;
    /// Element-wise product `x ⊙ y`.
    fn mul(&mut self, x: &Self::Share, y: &Self::Share) -> Result<Self::Share> {
        Ok(self.mul_many(&[(x, y)])?.pop().expect("one pair"))
    }
    /// Dot products of the `len`-long rows of `x` and `y`, row by row.
    fn dot(&mut self, x: &Self::Share, y: &Self::Share, len: usize) -> Result<Self::Share>;
    /// Every dot product between the `len`-long rows of `x` and of `y`:
    /// `out[i·rows_y + j] = <x_i, y_j>`.
    fn matmul(&mut self, x: &Self::Share, y: &Self::Share, len: usize) -> Result<Self::Share>;
    /// A fresh sharing of the same values, independent of `x`'s shares.
    fn reshare(&mut self, x: &Self::Share) -> Result<Self::Share>;
    /// Elements `[start, start + n)` (local).
    fn slice(&self, x: &Self::Share, start: usize, n: usize) -> Result<Self::Share>;
    /// The concatenation of `parts` (local).
    fn concat(&self, parts: &[&Self::Share]) -> Result<Self::Share>;
    /// Elements rearranged by a public index: `out[t] = x[idx[t]]` (local).
    fn gather(&self, x: &Self::Share, idx: &[usize]) -> Result<Self::Share>;
    /// A public linear map of the `len`-long rows of `x`: `out = m · x`, `m` row-major with one
    /// column per row of `x` (local).
    fn linear(&self, m: &[El<Self>], x: &Self::Share, len: usize) -> Result<Self::Share>;
}

/// `out[t] = x[idx[t]]`, or an error naming the first index out of range.
pub(crate) fn gather_vec<T: Copy>(x: &[T], idx: &[usize]) -> Result<Vec<T>> {
    idx.iter()
        .map(|&i| {
            x.get(i).copied().ok_or_else(|| MpcError::InvalidParameter(format!("index {i} of {} elements", x.len())))
        })
        .collect()
}

/// `m · x` for the `len`-long rows of `x` and `m` with one column per row (zeros skipped).
pub(crate) fn linear_vec<R: Ring>(ring: &R, m: &[R::El], x: &[R::El], len: usize) -> Result<Vec<R::El>> {
    let rows = rows(x.len(), len)?;
    if rows == 0 || !m.len().is_multiple_of(rows) {
        return Err(MpcError::InvalidParameter(format!("a map of {} entries on {rows} rows", m.len())));
    }
    let mut out = vec![ring.zero(); m.len() / rows * len];
    for (o, coeffs) in m.chunks_exact(rows).enumerate() {
        let acc = &mut out[o * len..(o + 1) * len];
        for (row, &c) in x.chunks_exact(len).zip(coeffs) {
            if c != ring.zero() {
                acc.iter_mut().zip(row).for_each(|(a, &v)| *a = ring.add(*a, ring.mul(c, v)));
            }
        }
    }
    Ok(out)
}

/// Comparisons, for schemes that have them. Results are sharings of 0 or 1 in the ring.
pub trait Compare: Scheme {
    /// `[x < y]`, read as the sign bit of `x - y` in the ring: exact when `x - y` does not wrap
    /// past half the ring (both in `[0, 2^(k-1))`, or both signed in `[-2^(k-2), 2^(k-2))`).
    fn lt(&mut self, x: &Self::Share, y: &Self::Share) -> Result<Self::Share>;
    /// `[x = y]`.
    fn eq(&mut self, x: &Self::Share, y: &Self::Share) -> Result<Self::Share>;
}

/// Division, for schemes that have it, on unsigned values of the ring Z_2^k.
pub trait Divide: Scheme {
    /// `floor(x_i / d_i)` for public divisors `d_i ≥ 1`.
    fn div_public(&mut self, x: &Self::Share, d: &[u128]) -> Result<Self::Share>;
    /// `floor(x_i / y_i)` for secret divisors; `x / 0` is 0.
    fn div(&mut self, x: &Self::Share, y: &Self::Share) -> Result<Self::Share>;
}

/// The plaintext twin: shares are the clear values, every operation is the ring's own.
#[derive(Clone, Debug)]
pub struct Plain<R: Ring> {
    ring: R,
}

impl<R: Ring> Plain<R> {
    /// The twin over `ring`.
    pub fn new(ring: R) -> Self {
        Plain { ring }
    }
}

fn zip<R: Ring>(x: &[R::El], y: &[R::El], f: impl Fn(R::El, R::El) -> R::El) -> Result<Vec<R::El>> {
    if x.len() != y.len() {
        return Err(MpcError::LengthMismatch { left: x.len(), right: y.len() });
    }
    Ok(x.iter().zip(y).map(|(&a, &b)| f(a, b)).collect())
}

fn rows(total: usize, len: usize) -> Result<usize> {
    crate::rep3::rows_of(total, len)
}

impl<R: Ring> Scheme for Plain<R> {
    type Ring = R;
    type Share = Vec<R::El>;

    fn ring(&self) -> &R {
        &self.ring
    }
    fn len(&self, x: &Vec<R::El>) -> usize {
        x.len()
    }
    fn input(&mut self, _owner: PartyId, values: Option<&[R::El]>, n: usize) -> Result<Vec<R::El>> {
        let v = values.ok_or_else(|| MpcError::InvalidParameter("the plaintext twin needs the input values".into()))?;
        if v.len() != n {
            return Err(MpcError::LengthMismatch { left: n, right: v.len() });
        }
        Ok(v.to_vec())
    }
    fn reveal(&mut self, x: &Vec<R::El>) -> Result<Vec<R::El>> {
        Ok(x.clone())
    }
    fn reveal_to(&mut self, x: &Vec<R::El>, _to: PartyId) -> Result<Option<Vec<R::El>>> {
        Ok(Some(x.clone()))
    }
    fn constant(&self, c: &[R::El]) -> Vec<R::El> {
        c.to_vec()
    }
    fn add(&self, x: &Vec<R::El>, y: &Vec<R::El>) -> Result<Vec<R::El>> {
        zip::<R>(x, y, |a, b| self.ring.add(a, b))
    }
    fn sub(&self, x: &Vec<R::El>, y: &Vec<R::El>) -> Result<Vec<R::El>> {
        zip::<R>(x, y, |a, b| self.ring.sub(a, b))
    }
    fn mul_public(&self, x: &Vec<R::El>, c: &[R::El]) -> Result<Vec<R::El>> {
        zip::<R>(x, c, |a, b| self.ring.mul(a, b))
    }
    fn mul_many(&mut self, pairs: &[(&Vec<R::El>, &Vec<R::El>)]) -> Result<Vec<Vec<R::El>>> {
        pairs.iter().map(|(x, y)| zip::<R>(x, y, |a, b| self.ring.mul(a, b))).collect()
    }
    fn dot(&mut self, x: &Vec<R::El>, y: &Vec<R::El>, len: usize) -> Result<Vec<R::El>> {
        if x.len() != y.len() {
            return Err(MpcError::LengthMismatch { left: x.len(), right: y.len() });
        }
        rows(x.len(), len)?;
        Ok(x.chunks_exact(len).zip(y.chunks_exact(len)).map(|(a, b)| self.ring.dot(a, b)).collect())
    }
    fn matmul(&mut self, x: &Vec<R::El>, y: &Vec<R::El>, len: usize) -> Result<Vec<R::El>> {
        let (rx, ry) = (rows(x.len(), len)?, rows(y.len(), len)?);
        let mut out = vec![self.ring.zero(); rx * ry];
        self.ring.gemm(x, y, len, &mut out);
        Ok(out)
    }
    fn reshare(&mut self, x: &Vec<R::El>) -> Result<Vec<R::El>> {
        Ok(x.clone())
    }
    fn slice(&self, x: &Vec<R::El>, start: usize, n: usize) -> Result<Vec<R::El>> {
        x.get(start..start + n)
            .map(<[R::El]>::to_vec)
            .ok_or(MpcError::LengthMismatch { left: x.len(), right: start + n })
    }
    fn concat(&self, parts: &[&Vec<R::El>]) -> Result<Vec<R::El>> {
        Ok(parts.iter().flat_map(|p| p.iter().copied()).collect())
    }
    fn gather(&self, x: &Vec<R::El>, idx: &[usize]) -> Result<Vec<R::El>> {
        gather_vec(x, idx)
    }
    fn linear(&self, m: &[R::El], x: &Vec<R::El>, len: usize) -> Result<Vec<R::El>> {
        linear_vec(&self.ring, m, x, len)
    }
}

/// `x` as an unsigned integer below `2^bits`.
fn unsigned<R: Ring>(ring: &R, x: R::El) -> u128 {
    ring.to_u128(x)
}

impl<R: Ring> Compare for Plain<R> {
    fn lt(&mut self, x: &Vec<R::El>, y: &Vec<R::El>) -> Result<Vec<R::El>> {
        let r = &self.ring;
        let top = r.bits() - 1;
        zip::<R>(x, y, |a, b| r.from_u128(unsigned(r, r.sub(a, b)) >> top & 1))
    }
    fn eq(&mut self, x: &Vec<R::El>, y: &Vec<R::El>) -> Result<Vec<R::El>> {
        let r = &self.ring;
        zip::<R>(x, y, |a, b| r.from_u128(u128::from(a == b)))
    }
}

impl<R: Ring> Divide for Plain<R> {
    fn div_public(&mut self, x: &Vec<R::El>, d: &[u128]) -> Result<Vec<R::El>> {
        if let Some(i) = d.iter().position(|&d| d == 0) {
            return Err(MpcError::InvalidParameter(format!("public divisor {i} is zero")));
        }
        let r = &self.ring;
        let d: Vec<R::El> = d.iter().map(|&d| r.from_u128(d)).collect();
        zip::<R>(x, &d, |a, b| r.from_u128(unsigned(r, a) / unsigned(r, b)))
    }
    fn div(&mut self, x: &Vec<R::El>, y: &Vec<R::El>) -> Result<Vec<R::El>> {
        let r = &self.ring;
        zip::<R>(x, y, |a, b| r.from_u128(unsigned(r, a).checked_div(unsigned(r, b)).unwrap_or(0)))
    }
}

/// One operation as the cost counter sees it, on a vector of `n` elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// [`Scheme::input`] by `owner`.
    Input {
        /// The party whose values are shared.
        owner: PartyId,
    },
    /// [`Scheme::reveal`].
    Reveal,
    /// [`Scheme::reveal_to`] party `to`.
    RevealTo {
        /// The party that learns the values.
        to: PartyId,
    },
    /// [`Scheme::mul_many`] (all pairs together: `n` is their total length).
    Mul,
    /// [`Scheme::dot`] or [`Scheme::matmul`]: `n` results from operands of `left` and `right`
    /// elements.
    Dot {
        /// Elements of the left operand.
        left: usize,
        /// Elements of the right operand.
        right: usize,
    },
    /// [`Scheme::reshare`].
    Reshare,
    /// [`Compare::lt`].
    Lt,
    /// [`Compare::eq`].
    Eq,
    /// [`Divide::div_public`].
    DivPublic,
    /// [`Divide::div`].
    Div,
}

/// A party's communication event, in the order it happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// One or more messages sent.
    Send,
    /// A message received.
    Recv,
}

/// What one operation costs: each party's bytes sent and its sends and receives in order, from
/// which rounds are counted as the network counts them ([`argus_net::Stats`]: a send opens a
/// round when it is the party's first or follows a receive), so costs compose exactly.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpCost {
    /// Payload bytes sent, per party.
    pub bytes: Vec<u64>,
    /// Sends and receives, per party.
    pub events: Vec<Vec<Event>>,
}

impl OpCost {
    /// Nothing yet, for `parties` parties.
    pub fn zero(parties: usize) -> Self {
        OpCost { bytes: vec![0; parties], events: vec![Vec::new(); parties] }
    }
    /// Party `i` sends `bytes` (one or more messages before its next receive).
    pub fn send(&mut self, i: usize, bytes: u64) -> &mut Self {
        self.bytes[i] += bytes;
        self.events[i].push(Event::Send);
        self
    }
    /// Party `i` receives a message.
    pub fn recv(&mut self, i: usize) -> &mut Self {
        self.events[i].push(Event::Recv);
        self
    }
    /// Every party sends `bytes` then receives (a pass around the ring of parties).
    pub fn pass(&mut self, bytes: u64) -> &mut Self {
        for i in 0..self.bytes.len() {
            self.send(i, bytes).recv(i);
        }
        self
    }
    /// `other` after this.
    pub fn then(&mut self, other: &OpCost) -> &mut Self {
        for (i, (b, e)) in other.bytes.iter().zip(&other.events).enumerate() {
            self.bytes[i] += b;
            self.events[i].extend_from_slice(e);
        }
        self
    }
    /// Rounds of each party, counted from a fresh start.
    pub fn rounds_per_party(&self) -> Vec<u64> {
        self.events
            .iter()
            .map(|e| {
                let mut c = RoundCounter::default();
                c.apply(e);
                c.rounds
            })
            .collect()
    }
    /// Rounds of the busiest party, counted from a fresh start.
    pub fn rounds(&self) -> u64 {
        self.rounds_per_party().into_iter().max().unwrap_or(0)
    }
}

/// The network's round rule applied to a party's events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct RoundCounter {
    rounds: u64,
    sent: bool,
    received_since: bool,
}

impl RoundCounter {
    fn apply(&mut self, events: &[Event]) {
        for e in events {
            match e {
                Event::Send => {
                    if !self.sent || self.received_since {
                        self.rounds += 1;
                    }
                    self.sent = true;
                    self.received_since = false;
                }
                Event::Recv => self.received_since = true,
            }
        }
    }
}

/// A scheme's costs per operation, as its implementation sends them (tests hold the two equal).
pub trait CostModel {
    /// Number of parties.
    fn parties(&self) -> usize;
    /// The cost of `op` on `n` elements.
    fn cost(&self, op: Op, n: usize) -> OpCost;
}

/// The cost counter: runs a protocol written against [`Scheme`] without a network, on lengths
/// alone, and adds up what the scheme's [`CostModel`] says each operation sends. A revealed value
/// reads as zero, so a protocol whose control flow depends on revealed values follows one path.
#[derive(Clone, Debug)]
pub struct Cost<M: CostModel> {
    model: M,
    ring: argus_math::Z128,
    counters: Vec<RoundCounter>,
    /// Bytes sent so far, per party.
    pub bytes: Vec<u64>,
}

impl<M: CostModel> Cost<M> {
    /// A counter at zero for the scheme `model` describes.
    pub fn new(model: M) -> Self {
        let bytes = vec![0; model.parties()];
        let counters = vec![RoundCounter::default(); model.parties()];
        Cost { model, ring: argus_math::Z128::new(), counters, bytes }
    }
    /// Counts `op` on `n` elements.
    pub fn count(&mut self, op: Op, n: usize) {
        let c = self.model.cost(op, n);
        for (i, (b, e)) in c.bytes.iter().zip(&c.events).enumerate() {
            self.bytes[i] += b;
            self.counters[i].apply(e);
        }
    }
    /// Rounds so far, per party, as the network counts them.
    pub fn rounds(&self) -> Vec<u64> {
        self.counters.iter().map(|c| c.rounds).collect()
    }
}

impl<M: CostModel> Scheme for Cost<M> {
    type Ring = argus_math::Z128;
    type Share = usize;

    fn ring(&self) -> &Self::Ring {
        &self.ring
    }
    fn len(&self, x: &usize) -> usize {
        *x
    }
    fn input(&mut self, owner: PartyId, _values: Option<&[u128]>, n: usize) -> Result<usize> {
        self.count(Op::Input { owner }, n);
        Ok(n)
    }
    fn reveal(&mut self, x: &usize) -> Result<Vec<u128>> {
        self.count(Op::Reveal, *x);
        Ok(vec![0; *x])
    }
    fn reveal_to(&mut self, x: &usize, to: PartyId) -> Result<Option<Vec<u128>>> {
        self.count(Op::RevealTo { to }, *x);
        Ok(Some(vec![0; *x]))
    }
    fn constant(&self, c: &[u128]) -> usize {
        c.len()
    }
    fn add(&self, x: &usize, y: &usize) -> Result<usize> {
        same(*x, *y)
    }
    fn sub(&self, x: &usize, y: &usize) -> Result<usize> {
        same(*x, *y)
    }
    fn mul_public(&self, x: &usize, c: &[u128]) -> Result<usize> {
        same(*x, c.len())
    }
    fn mul_many(&mut self, pairs: &[(&usize, &usize)]) -> Result<Vec<usize>> {
        let out = pairs.iter().map(|(x, y)| same(**x, **y)).collect::<Result<Vec<_>>>()?;
        self.count(Op::Mul, out.iter().sum());
        Ok(out)
    }
    fn dot(&mut self, x: &usize, y: &usize, len: usize) -> Result<usize> {
        let n = rows(same(*x, *y)?, len)?;
        self.count(Op::Dot { left: *x, right: *y }, n);
        Ok(n)
    }
    fn matmul(&mut self, x: &usize, y: &usize, len: usize) -> Result<usize> {
        let n = rows(*x, len)? * rows(*y, len)?;
        self.count(Op::Dot { left: *x, right: *y }, n);
        Ok(n)
    }
    fn reshare(&mut self, x: &usize) -> Result<usize> {
        self.count(Op::Reshare, *x);
        Ok(*x)
    }
    fn slice(&self, x: &usize, start: usize, n: usize) -> Result<usize> {
        if start + n > *x {
            return Err(MpcError::LengthMismatch { left: *x, right: start + n });
        }
        Ok(n)
    }
    fn concat(&self, parts: &[&usize]) -> Result<usize> {
        Ok(parts.iter().copied().sum())
    }
    fn gather(&self, x: &usize, idx: &[usize]) -> Result<usize> {
        match idx.iter().find(|&&i| i >= *x) {
            Some(i) => Err(MpcError::InvalidParameter(format!("index {i} of {x} elements"))),
            None => Ok(idx.len()),
        }
    }
    fn linear(&self, m: &[u128], x: &usize, len: usize) -> Result<usize> {
        let rows = rows(*x, len)?;
        if rows == 0 || !m.len().is_multiple_of(rows) {
            return Err(MpcError::InvalidParameter(format!("a map of {} entries on {rows} rows", m.len())));
        }
        Ok(m.len() / rows * len)
    }
}

fn same(x: usize, y: usize) -> Result<usize> {
    if x != y {
        return Err(MpcError::LengthMismatch { left: x, right: y });
    }
    Ok(x)
}

impl<M: CostModel> Compare for Cost<M> {
    fn lt(&mut self, x: &usize, y: &usize) -> Result<usize> {
        let n = same(*x, *y)?;
        self.count(Op::Lt, n);
        Ok(n)
    }
    fn eq(&mut self, x: &usize, y: &usize) -> Result<usize> {
        let n = same(*x, *y)?;
        self.count(Op::Eq, n);
        Ok(n)
    }
}

impl<M: CostModel> Divide for Cost<M> {
    fn div_public(&mut self, x: &usize, d: &[u128]) -> Result<usize> {
        let n = same(*x, d.len())?;
        self.count(Op::DivPublic, n);
        Ok(n)
    }
    fn div(&mut self, x: &usize, y: &usize) -> Result<usize> {
        let n = same(*x, *y)?;
        self.count(Op::Div, n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    //! One protocol written against the seam, run on every scheme and on the twin.
    use argus_math::{Fp, Ring, Z64};
    use argus_net::NetConfig;

    use super::*;
    use crate::additive3::{Additive3, Additive3Costs};
    use crate::local::{run3, Backend};
    use crate::rep3::Rep3Scheme;
    use crate::shamir::ShamirScheme;

    /// `(x·y + 3x) · <x, y>` per row of 4, then a public map and a gather: arithmetic only.
    fn arith<S: Scheme>(s: &mut S, x: &S::Share, y: &S::Share) -> Result<Vec<El<S>>> {
        let r = s.ring().clone();
        let xy = s.mul(x, y)?;
        let t = s.add(&xy, &s.scale(x, r.from_u128(3)))?;
        let d = s.dot(x, y, 4)?;
        let spread = s.gather(&d, &(0..s.len(x)).map(|i| i / 4).collect::<Vec<_>>())?;
        let prod = s.mul_many(&[(&t, &spread)])?.pop().unwrap();
        let m: Vec<El<S>> = (0..2 * s.len(x) / 4).map(|i| r.from_u128(i as u128 % 3)).collect();
        let mapped = s.linear(&m, &prod, 4)?;
        let mm = s.matmul(x, y, 4)?;
        let both = s.concat(&[&mapped, &mm])?;
        let again = s.reshare(&both)?;
        s.reveal(&again)
    }

    /// [`arith`] plus comparisons.
    fn compare<S: Compare>(s: &mut S, x: &S::Share, y: &S::Share) -> Result<Vec<El<S>>> {
        let mut out = arith(s, x, y)?;
        let l = s.lt(x, y)?;
        let e = s.eq(x, x)?;
        let e2 = s.eq(x, y)?;
        out.extend(s.reveal(&s.concat(&[&l, &e, &e2])?)?);
        Ok(out)
    }

    fn inputs(n: usize) -> (Vec<u128>, Vec<u128>) {
        let x = (0..n as u128).map(|i| (i * 7919 + 13) % 1000).collect();
        let y =
            (0..n as u128).map(|i| if i % 5 == 0 { (i * 7919 + 13) % 1000 } else { (i * 104729 + 7) % 1000 }).collect();
        (x, y)
    }

    fn on_three<T: Send>(f: impl Fn(&mut crate::Party) -> Result<T> + Sync) -> T {
        run3(Backend::Memory, NetConfig::default(), f).unwrap().pop().unwrap()
    }

    #[test]
    fn one_protocol_on_every_scheme_and_the_twin() {
        let n = 16;
        let (xs, ys) = inputs(n);
        let z = Z64::new();
        let (xv, yv): (Vec<u64>, Vec<u64>) =
            (xs.iter().map(|&v| v as u64).collect(), ys.iter().map(|&v| v as u64).collect());
        let twin = compare(&mut Plain::new(z), &xv, &yv).unwrap();
        let additive = on_three(|p| {
            let me = p.id();
            let mut s = Additive3::new(p, z)?;
            let x = s.input(0, (me == 0).then_some(&xv[..]), n)?;
            let y = s.input(1, (me == 1).then_some(&yv[..]), n)?;
            compare(&mut s, &x, &y)
        });
        let rep3 = on_three(|p| {
            let me = p.id();
            let mut s = Rep3Scheme::new(p, z)?;
            let x = s.input(0, (me == 0).then_some(&xv[..]), n)?;
            let y = s.input(2, (me == 2).then_some(&yv[..]), n)?;
            compare(&mut s, &x, &y)
        });
        assert_eq!(additive, twin);
        assert_eq!(rep3, twin);
        // Shamir over a prime field has no comparison here: the arithmetic part
        let f = Fp::new(65519).unwrap();
        let (xf, yf): (Vec<_>, Vec<_>) =
            (xs.iter().map(|&v| f.from_u128(v)).collect(), ys.iter().map(|&v| f.from_u128(v)).collect());
        let twin_f = arith(&mut Plain::new(f), &xf, &yf).unwrap();
        let shamir = on_three(|p| {
            let me = p.id();
            let mut s = ShamirScheme::new(p, f)?;
            let x = s.input(1, (me == 1).then_some(&xf[..]), n)?;
            let y = s.input(0, (me == 0).then_some(&yf[..]), n)?;
            arith(&mut s, &x, &y)
        });
        assert_eq!(shamir, twin_f);
    }

    #[test]
    fn the_cost_counter_predicts_the_network() {
        let n = 40;
        let (xs, ys) = inputs(n);
        let z = Z64::new();
        let (xv, yv): (Vec<u64>, Vec<u64>) =
            (xs.iter().map(|&v| v as u64).collect(), ys.iter().map(|&v| v as u64).collect());
        let measured = run3(Backend::Memory, NetConfig::default(), |p| {
            p.net().send(p.next(), vec![0])?; // every round counter as at a fresh start
            p.net().recv(p.prev())?;
            let before = p.stats();
            let me = p.id();
            let mut s = Additive3::new(p, z)?;
            let x = s.input(0, (me == 0).then_some(&xv[..]), n)?;
            let y = s.input(1, (me == 1).then_some(&yv[..]), n)?;
            compare(&mut s, &x, &y)?;
            Ok(s.party().stats() - before)
        })
        .unwrap();
        let mut cost = Cost::new(Additive3Costs { bits: 64 });
        let x = cost.input(0, None, n).unwrap();
        let y = cost.input(1, None, n).unwrap();
        compare(&mut cost, &x, &y).unwrap();
        assert_eq!(measured.iter().map(|s| s.bytes_sent).collect::<Vec<_>>(), cost.bytes);
        assert_eq!(measured.iter().map(|s| s.rounds).collect::<Vec<_>>(), cost.rounds());
    }
}
