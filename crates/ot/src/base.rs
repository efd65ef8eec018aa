//! Base OT: Chou–Orlandi, "The Simplest Protocol for Oblivious Transfer" (CO15), on the Ristretto
//! group, `n` OTs in two messages (semi-honest).
//!
//! The sender draws `a` and sends `A = a·G`. For each choice bit `c_i` the receiver draws `b_i`
//! and sends `B_i = b_i·G + c_i·A`, chosen in constant time. Both hash the Diffie–Hellman point
//! they share (the encoding of its double, all of a batch with one inversion), together with the
//! index and the transcript (`A`, `B_i`): the sender gets
//! `k_0 = H(a·B_i)` and `k_1 = H(a·(B_i − A))`, the receiver `k_{c_i} = H(b_i·A)`; the other key
//! would need the discrete logarithm of `A`. Points are decoded strictly (Ristretto's canonical
//! encoding): anything else is a typed error, not a panic.

use argus_net::{Network, PartyId};
use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use rand_core::{CryptoRng, RngCore};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use subtle::{Choice, ConditionallySelectable};

use crate::{Block, OtError};

const POINT: usize = 32;

/// The sender's side: `n` pairs of keys `(k_0, k_1)`, the receiver learning one of each pair.
pub fn send<R: RngCore + CryptoRng>(
    net: &Network,
    peer: PartyId,
    n: usize,
    rng: &mut R,
) -> Result<Vec<[Block; 2]>, OtError> {
    check_peer(net, peer)?;
    let (offer, msg) = Offer::new(rng);
    net.send(peer, msg)?;
    offer.keys(peer, &net.recv(peer)?, n)
}

/// The receiver's side: the key `k_{c_i}` of each pair, for its choice bits `c_i`.
pub fn receive<R: RngCore + CryptoRng>(
    net: &Network,
    peer: PartyId,
    choices: &[bool],
    rng: &mut R,
) -> Result<Vec<Block>, OtError> {
    check_peer(net, peer)?;
    let (reply, keys) = answer(peer, &net.recv(peer)?, choices, rng)?;
    net.send(peer, reply)?;
    Ok(keys)
}

/// The sender's half, split at its two messages so that many sessions (with several peers, in
/// both directions) can run side by side: [`Offer::new`] gives the message `A`, and
/// [`Offer::keys`] the key pairs from the receiver's [`answer`].
pub struct Offer {
    a: Scalar,
    big_a: RistrettoPoint,
    a_bytes: CompressedRistretto,
}

impl Offer {
    /// A fresh `a` and the message `A = a·G` (32 bytes).
    pub fn new<R: RngCore + CryptoRng>(rng: &mut R) -> (Offer, Vec<u8>) {
        let a = Scalar::random(rng);
        let big_a = &a * RISTRETTO_BASEPOINT_TABLE;
        let a_bytes = big_a.compress();
        (Offer { a, big_a, a_bytes }, a_bytes.as_bytes().to_vec())
    }

    /// The `n` key pairs, from `peer`'s answer (its `B_i`, 32 bytes each).
    pub fn keys(&self, peer: PartyId, reply: &[u8], n: usize) -> Result<Vec<[Block; 2]>, OtError> {
        let points = decode_points(peer, reply, n)?;
        // a·(B − A) = a·B − a·A: one scalar product per OT
        let a_a = self.a * self.big_a;
        // the scalar products on every core: a party's base OTs wait on them
        let shared: Vec<RistrettoPoint> = points
            .par_iter()
            .flat_map_iter(|(b, _)| {
                let a_b = self.a * b;
                [a_b, a_b - a_a]
            })
            .collect();
        let enc = shared_encodings(&shared);
        Ok(points
            .iter()
            .zip(enc.chunks_exact(2))
            .enumerate()
            .map(|(i, ((_, b_bytes), e))| {
                [key(i, &self.a_bytes, b_bytes, &e[0]), key(i, &self.a_bytes, b_bytes, &e[1])]
            })
            .collect())
    }
}

/// The receiver's half: to `peer`'s offer `A`, the answer `B_i` for each choice bit and the keys
/// `k_{c_i}`.
pub fn answer<R: RngCore + CryptoRng>(
    peer: PartyId,
    offer: &[u8],
    choices: &[bool],
    rng: &mut R,
) -> Result<(Vec<u8>, Vec<Block>), OtError> {
    let (big_a, a_bytes) = decode_points(peer, offer, 1)?.pop().expect("one point");
    // b·A for every OT: a table of A's multiples, built once, instead of n variable-base products
    let table = RistrettoBasepointTable::create(&big_a);
    let bs: Vec<Scalar> = choices.iter().map(|_| Scalar::random(rng)).collect();
    // the scalar products on every core: a party's base OTs wait on them
    let (sent, shared): (Vec<CompressedRistretto>, Vec<RistrettoPoint>) = bs
        .par_iter()
        .zip(choices)
        .map(|(b, &c)| {
            let bg = b * RISTRETTO_BASEPOINT_TABLE;
            let big_b = RistrettoPoint::conditional_select(&bg, &(bg + big_a), Choice::from(u8::from(c)));
            (big_b.compress(), b * &table)
        })
        .unzip();
    let msg: Vec<u8> = sent.iter().flat_map(|b| *b.as_bytes()).collect();
    let enc = shared_encodings(&shared);
    let keys = sent.iter().zip(&enc).enumerate().map(|(i, (b_bytes, e))| key(i, &a_bytes, b_bytes, e)).collect();
    Ok((msg, keys))
}

/// The encodings that the keys hash for the Diffie–Hellman points `P`: those of `2·P`, all with
/// one field inversion (a bijection of the prime-order group, so as good as `P`'s own).
fn shared_encodings(points: &[RistrettoPoint]) -> Vec<CompressedRistretto> {
    RistrettoPoint::double_and_compress_batch(points)
}

pub(crate) fn check_peer(net: &Network, peer: PartyId) -> Result<(), OtError> {
    if peer == net.id() || peer >= net.n() {
        return Err(OtError::BadPeer { me: net.id(), peer, n: net.n() });
    }
    Ok(())
}

/// `n` points in canonical encoding, with their encodings.
fn decode_points(peer: PartyId, bytes: &[u8], n: usize) -> Result<Vec<(RistrettoPoint, CompressedRistretto)>, OtError> {
    if bytes.len() != n * POINT {
        return Err(OtError::Malformed { peer, got: bytes.len(), want: n * POINT });
    }
    bytes
        .chunks_exact(POINT)
        .enumerate()
        .map(|(index, c)| {
            let enc = CompressedRistretto::from_slice(c).map_err(|_| OtError::BadPoint { peer, index })?;
            let p = enc.decompress().ok_or(OtError::BadPoint { peer, index })?;
            Ok((p, enc))
        })
        .collect()
}

/// `H(i, A, B_i, enc(2·P))`: the first 128 bits of SHA-256 over a domain tag, the index and the
/// points (`P` the shared Diffie–Hellman point; see [`shared_encodings`]).
fn key(i: usize, a: &CompressedRistretto, b: &CompressedRistretto, shared: &CompressedRistretto) -> Block {
    let mut h = Sha256::new();
    h.update(b"argus base OT (CO15, Ristretto)");
    h.update((i as u64).to_le_bytes());
    h.update(a.as_bytes());
    h.update(b.as_bytes());
    h.update(shared.as_bytes());
    let d = h.finalize();
    u128::from_le_bytes(d[..16].try_into().expect("16 bytes"))
}

#[cfg(test)]
mod tests;
