//! Derandomisation (Beaver 1995, "Precomputing oblivious transfer"): random OTs made before the
//! inputs are known (the output of [`iknp::Sender::random`](crate::iknp::Sender::random) and
//! [`iknp::Receiver::random`](crate::iknp::Receiver::random), which is the precomputation), turned
//! into chosen-message or correlated OTs later, with one short message each way.
//!
//! The receiver holds `k_i = k_{r_i, i}` for random choices `r_i` and now wants `c_i`: it sends
//! `d_i = c_i ⊕ r_i` (one bit per OT, a one-time pad on `c_i`). The sender answers with its pair
//! swapped by `d_i`, so the key the receiver holds is the one for `c_i`:
//! - chosen messages: `e_{b,i} = m_{b,i} ⊕ G(k_{b ⊕ d_i, i})` for `b = 0, 1`, the receiver
//!   unmasks `e_{c_i, i}` ([`send_chosen`], [`receive_chosen`]);
//! - correlated: the sender keeps `x_i = k_{d_i, i}` and sends `y_i = k_{0,i} ⊕ k_{1,i} ⊕ Δ_i`, the
//!   receiver gets `k_i ⊕ c_i·y_i = x_i ⊕ c_i·Δ_i` ([`send_correlated`], [`receive_correlated`]).
//!
//! `G` stretches a key to `len` bytes: the key's own first `len` bytes when `len ≤ 16`, else the
//! engine's PRG seeded by the key. Each random OT must be consumed once, by one of these.
//!
//! Bytes, for `m` OTs: receiver → sender `⌈m/8⌉` (the `d` bits); sender → receiver `2·len·m`
//! (chosen messages) or `16·m` (correlated).

use argus_net::{Network, PartyId};
use argus_prg::{Prg, Seed};
use rand_core::RngCore;

use crate::{base::check_peer, Block, OtError};

/// The sender's side of chosen-message OT on precomputed random OTs `keys`: the receiver learns
/// `m0[i]` or `m1[i]`, the `i`-th `len`-byte string of `m0` or `m1` (`m = keys.len()` strings
/// each). Receives `⌈m/8⌉` bytes, sends `2·len·m`.
///
/// # Panics
/// If `m0` or `m1` is not `keys.len()` strings of `len` bytes.
pub fn send_chosen(
    net: &Network,
    peer: PartyId,
    keys: &[[Block; 2]],
    m0: &[u8],
    m1: &[u8],
    len: usize,
) -> Result<(), OtError> {
    check_peer(net, peer)?;
    assert!(m0.len() == keys.len() * len && m1.len() == keys.len() * len, "m0, m1: m strings of len bytes");
    let d = recv_bits(net, peer, keys.len())?;
    answer_strings(net, peer, keys, Some(&d), m0, m1, len)
}

/// The receiver's side of [`send_chosen`]: `keys[i]` was received for `random_choices[i]`, the
/// result is the `choices[i]` string of each pair, `len` bytes each, concatenated. Sends `⌈m/8⌉`
/// bytes, receives `2·len·m`.
///
/// # Panics
/// If `keys`, `random_choices` and `choices` differ in length.
pub fn receive_chosen(
    net: &Network,
    peer: PartyId,
    keys: &[Block],
    random_choices: &[bool],
    choices: &[bool],
    len: usize,
) -> Result<Vec<u8>, OtError> {
    check_peer(net, peer)?;
    send_corrections(net, peer, keys, random_choices, choices)?;
    finish_strings(net, peer, keys, choices, len)
}

/// The sender's side of correlated OT on precomputed random OTs `keys`: returns `x_i`, the
/// receiver gets `x_i ⊕ c_i·delta[i]`. Receives `⌈m/8⌉` bytes, sends `16·m`.
///
/// # Panics
/// If `keys` and `delta` differ in length.
pub fn send_correlated(
    net: &Network,
    peer: PartyId,
    keys: &[[Block; 2]],
    delta: &[Block],
) -> Result<Vec<Block>, OtError> {
    check_peer(net, peer)?;
    assert_eq!(keys.len(), delta.len(), "one correlation per OT");
    let d = recv_bits(net, peer, keys.len())?;
    answer_correlated(net, peer, keys, Some(&d), delta)
}

/// The receiver's side of [`send_correlated`]: `keys[i]` was received for `random_choices[i]`,
/// the result is `x_i ⊕ choices[i]·Δ_i`. Sends `⌈m/8⌉` bytes, receives `16·m`.
///
/// # Panics
/// If `keys`, `random_choices` and `choices` differ in length.
pub fn receive_correlated(
    net: &Network,
    peer: PartyId,
    keys: &[Block],
    random_choices: &[bool],
    choices: &[bool],
) -> Result<Vec<Block>, OtError> {
    check_peer(net, peer)?;
    send_corrections(net, peer, keys, random_choices, choices)?;
    finish_correlated(net, peer, keys, choices)
}

/// Sends `d = choices ⊕ random_choices`, packed LSB first.
fn send_corrections(
    net: &Network,
    peer: PartyId,
    keys: &[Block],
    random_choices: &[bool],
    choices: &[bool],
) -> Result<(), OtError> {
    assert!(keys.len() == random_choices.len() && keys.len() == choices.len(), "one key and two choices per OT");
    let mut d = vec![0u8; choices.len().div_ceil(8)];
    for (i, (&r, &c)) in random_choices.iter().zip(choices).enumerate() {
        d[i / 8] |= u8::from(r ^ c) << (i % 8);
    }
    net.send(peer, d)?;
    Ok(())
}

/// `m` bits from `peer`, packed LSB first.
fn recv_bits(net: &Network, peer: PartyId, m: usize) -> Result<Vec<u8>, OtError> {
    let got = net.recv(peer)?;
    if got.len() != m.div_ceil(8) {
        return Err(OtError::Malformed { peer, got: got.len(), want: m.div_ceil(8) });
    }
    Ok(got)
}

fn bit(d: Option<&[u8]>, i: usize) -> usize {
    d.map_or(0, |d| usize::from(d[i / 8] >> (i % 8) & 1))
}

/// Sends `m_b ⊕ G(k_{b ⊕ d_i})` for both `b`, per OT (`d = None`: no swap, the random OTs were
/// run on the real choices).
pub(crate) fn answer_strings(
    net: &Network,
    peer: PartyId,
    keys: &[[Block; 2]],
    d: Option<&[u8]>,
    m0: &[u8],
    m1: &[u8],
    len: usize,
) -> Result<(), OtError> {
    let mut msg = Vec::with_capacity(2 * len * keys.len());
    let mut scratch = vec![0u8; len];
    for (i, k) in keys.iter().enumerate() {
        let s = bit(d, i);
        for (b, m) in [m0, m1].into_iter().enumerate() {
            let at = msg.len();
            msg.extend_from_slice(&m[i * len..(i + 1) * len]);
            xor_pad(k[b ^ s], &mut msg[at..], &mut scratch);
        }
    }
    net.send(peer, msg)?;
    Ok(())
}

/// Receives the `2·len·m` masked strings and unmasks the chosen one of each pair.
pub(crate) fn finish_strings(
    net: &Network,
    peer: PartyId,
    keys: &[Block],
    choices: &[bool],
    len: usize,
) -> Result<Vec<u8>, OtError> {
    let got = net.recv(peer)?;
    let want = 2 * len * keys.len();
    if got.len() != want {
        return Err(OtError::Malformed { peer, got: got.len(), want });
    }
    let mut out = Vec::with_capacity(len * keys.len());
    let mut scratch = vec![0u8; len];
    for (i, (&k, &c)) in keys.iter().zip(choices).enumerate() {
        let at = (2 * i + usize::from(c)) * len;
        let start = out.len();
        out.extend_from_slice(&got[at..at + len]);
        xor_pad(k, &mut out[start..], &mut scratch);
    }
    Ok(out)
}

/// Sends `y_i = k_0 ⊕ k_1 ⊕ Δ_i` and returns `k_{d_i}`.
pub(crate) fn answer_correlated(
    net: &Network,
    peer: PartyId,
    keys: &[[Block; 2]],
    d: Option<&[u8]>,
    delta: &[Block],
) -> Result<Vec<Block>, OtError> {
    let mut msg = Vec::with_capacity(16 * keys.len());
    let mut out = Vec::with_capacity(keys.len());
    for (i, (k, &dl)) in keys.iter().zip(delta).enumerate() {
        msg.extend_from_slice(&(k[0] ^ k[1] ^ dl).to_le_bytes());
        out.push(k[bit(d, i)]);
    }
    net.send(peer, msg)?;
    Ok(out)
}

/// Receives the `y_i` and returns `k_i ⊕ c_i·y_i`.
pub(crate) fn finish_correlated(
    net: &Network,
    peer: PartyId,
    keys: &[Block],
    choices: &[bool],
) -> Result<Vec<Block>, OtError> {
    let got = net.recv(peer)?;
    if got.len() != 16 * keys.len() {
        return Err(OtError::Malformed { peer, got: got.len(), want: 16 * keys.len() });
    }
    Ok(keys
        .iter()
        .zip(choices)
        .zip(got.chunks_exact(16))
        .map(|((&k, &c), y)| {
            k ^ (u128::from_le_bytes(y.try_into().expect("16 bytes")) & 0u128.wrapping_sub(u128::from(c)))
        })
        .collect())
}

/// `out ^= G(key)`: the key's first bytes when `out` fits in a block, else the key's PRG stream
/// (drawn into `scratch`, at least `out.len()` bytes, so nothing is allocated per OT).
fn xor_pad(key: Block, out: &mut [u8], scratch: &mut [u8]) {
    let bytes = key.to_le_bytes();
    let pad = if out.len() <= bytes.len() {
        &bytes[..out.len()]
    } else {
        let pad = &mut scratch[..out.len()];
        Prg::new(&Seed(bytes)).fill_bytes(pad);
        pad
    };
    for (o, p) in out.iter_mut().zip(pad) {
        *o ^= p;
    }
}

#[cfg(test)]
mod tests;
