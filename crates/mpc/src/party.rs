//! A party of a p-party session (2 ≤ p): its network endpoint and its correlated randomness.
//! Every scheme runs on it; the 3-party ones (rep3, shamir, additive3) read `next` and `prev`.

use std::time::{Duration, Instant};

use argus_math::{BitVec, Ring};
use argus_net::{Network, PartyId, Stats};
use argus_prg::{Pairwise, Prg};

use crate::error::{MpcError, Result};

/// One party of a session: the transport plus the correlated randomness agreed with the others.
#[derive(Debug)]
pub struct Party {
    net: Network,
    /// The provider of correlated randomness: a stream shared with each other party, a private one.
    pub prg: Pairwise,
}

impl Party {
    /// Wraps a connected network of at least two parties and agrees a PRG seed with each other
    /// party (one round).
    pub fn new(net: Network) -> Result<Self> {
        if net.n() < 2 {
            return Err(MpcError::WrongPartyCount { scheme: "a session", expected: 2, got: net.n() });
        }
        let prg = Pairwise::setup(&net)?;
        Ok(Party { net, prg })
    }
    /// Errors unless the session has exactly `parties` parties (a scheme's entry check).
    pub fn require(&self, scheme: &'static str, parties: usize) -> Result<()> {
        if self.n() != parties {
            return Err(MpcError::WrongPartyCount { scheme, expected: parties, got: self.n() });
        }
        Ok(())
    }
    /// Number of parties.
    pub fn n(&self) -> usize {
        self.net.n()
    }
    /// This party's index, 0..p.
    pub fn id(&self) -> PartyId {
        self.net.id()
    }
    /// Index of the next party, `id + 1 mod p`.
    pub fn next(&self) -> PartyId {
        self.net.next()
    }
    /// Index of the previous party, `id - 1 mod p`.
    pub fn prev(&self) -> PartyId {
        self.net.prev()
    }
    /// The transport.
    pub fn net(&self) -> &Network {
        &self.net
    }
    /// A fresh stream shared with `peer` alone (forked from the seed agreed with it; both must
    /// call this at the same point of their sessions), e.g. the pad of [`crate::recovery`].
    pub fn stream_with(&mut self, peer: PartyId) -> Result<Prg> {
        let me = self.id();
        let stream = self
            .prg
            .with(peer)
            .ok_or_else(|| MpcError::InvalidParameter(format!("party {me} has no stream with party {peer}")))?;
        Ok(Prg::new(&stream.fork()))
    }
    /// How long a round of messages between the parties takes, for choosing between rounds and
    /// memory: a one-byte token goes `probes` (at least 1) times around the parties
    /// (0 → 1 → … → p−1 → 0), and a round is the median trip over p (the mean one-way delay of
    /// the links on the way), which party 0 measures and sends the others. With one message in
    /// flight, neither parties starting at different times nor messages queueing behind each
    /// other bend it (lockstep rounds could bunch up: a few long rounds and many empty ones).
    /// All parties call it at the same point of their sessions.
    pub fn round_time(&self, probes: usize) -> Result<Duration> {
        let (next, prev) = (self.next(), self.prev());
        let token = |got: Vec<u8>| {
            if got == [0] {
                Ok(())
            } else {
                Err(MpcError::Malformed { peer: prev, reason: format!("a round probe of {} bytes", got.len()) })
            }
        };
        if self.id() != 0 {
            for _ in 0..probes.max(1) {
                token(self.net.recv(prev)?)?;
                self.net.send(next, vec![0])?;
            }
            return Ok(Duration::from_micros(self.value_of_party0(0)?));
        }
        let mut trips: Vec<Duration> = Vec::with_capacity(probes.max(1));
        for _ in 0..probes.max(1) {
            let start = Instant::now();
            self.net.send(next, vec![0])?;
            token(self.net.recv(prev)?)?;
            trips.push(start.elapsed());
        }
        trips.sort();
        let micros = u64::try_from((trips[trips.len() / 2] / self.n() as u32).as_micros()).unwrap_or(u64::MAX);
        Ok(Duration::from_micros(self.value_of_party0(micros)?))
    }
    /// Party 0's `value`, learned by every party (one round: party 0 sends it to the others, whose
    /// own `value` is ignored): for public choices that must be the same everywhere, such as a
    /// block size party 0 measured. All parties call it at the same point of their sessions.
    pub fn value_of_party0(&self, value: u64) -> Result<u64> {
        if self.id() == 0 {
            for q in 1..self.n() {
                self.net.send(q, value.to_le_bytes().to_vec())?;
            }
            return Ok(value);
        }
        let got = self.net.recv(0)?;
        <[u8; 8]>::try_from(got.as_slice())
            .map(u64::from_le_bytes)
            .map_err(|_| MpcError::Malformed { peer: 0, reason: format!("a public value of {} bytes", got.len()) })
    }
    /// Bytes and rounds so far (subtract two readings to measure a protocol call).
    pub fn stats(&self) -> Stats {
        self.net.stats()
    }

    /// Sends `msg` to the next party and returns what the previous party sent (one round).
    pub(crate) fn pass_next(&self, msg: Vec<u8>) -> Result<Vec<u8>> {
        self.net.send(self.next(), msg)?;
        Ok(self.net.recv(self.prev())?)
    }
    /// Receives `n` ring elements from `peer`.
    pub(crate) fn recv_elems<R: Ring>(&self, ring: &R, peer: PartyId, n: usize) -> Result<Vec<R::El>> {
        self.recv_elems_with(ring, peer, n, <[R::El]>::to_vec)
    }
    /// Receives `n` ring elements from `peer` and hands them to `f`, read in place from the
    /// message where the ring allows ([`Ring::wire_view`]), else decoded first.
    pub(crate) fn recv_elems_with<R: Ring, T>(
        &self,
        ring: &R,
        peer: PartyId,
        n: usize,
        f: impl FnOnce(&[R::El]) -> T,
    ) -> Result<T> {
        let bytes = self.net.recv(peer)?;
        if bytes.len() == ring.wire_len(n) {
            if let Some(view) = ring.wire_view(&bytes) {
                return Ok(f(view));
            }
        }
        Ok(f(&decode_exact(ring, peer, &bytes, n)?))
    }
    /// Sends ring elements to `peer`.
    pub(crate) fn send_elems<R: Ring>(&self, ring: &R, peer: PartyId, xs: &[R::El]) -> Result<()> {
        let mut out = Vec::with_capacity(ring.wire_len(xs.len()));
        ring.wire_encode(xs, &mut out);
        Ok(self.net.send(peer, out)?)
    }
    /// Sends elements to the next party and receives as many from the previous one.
    pub(crate) fn pass_elems<R: Ring>(&self, ring: &R, xs: &[R::El]) -> Result<Vec<R::El>> {
        Ok(self.pass_elem_parts(ring, &[xs])?.pop().expect("one part"))
    }
    /// [`pass_elems`](Self::pass_elems) for several vectors in one message (one round): each is
    /// encoded and decoded on its own, so nobody concatenates or splits the vectors themselves.
    pub(crate) fn pass_elem_parts<R: Ring>(&self, ring: &R, parts: &[&[R::El]]) -> Result<Vec<Vec<R::El>>> {
        let sizes: Vec<usize> = parts.iter().map(|x| ring.wire_len(x.len())).collect();
        let total = sizes.iter().sum();
        let mut out = Vec::with_capacity(total);
        for x in parts {
            ring.wire_encode(x, &mut out);
        }
        let got = self.pass_next(out)?;
        let peer = self.prev();
        if got.len() != total {
            let n: usize = parts.iter().map(|x| x.len()).sum();
            return Err(MpcError::Malformed {
                peer,
                reason: format!("expected {n} elements in {total} bytes, got {} bytes", got.len()),
            });
        }
        let mut at = 0;
        parts
            .iter()
            .zip(sizes)
            .map(|(x, size)| {
                at += size;
                decode_exact(ring, peer, &got[at - size..at], x.len())
            })
            .collect()
    }
    /// Sends bit vectors (concatenated, each `ceil(len/8)` bytes) to the next party and receives
    /// vectors of the same lengths from the previous one.
    pub(crate) fn pass_bits(&self, parts: &[BitVec]) -> Result<Vec<BitVec>> {
        let mut out = Vec::with_capacity(parts.iter().map(|p| p.len().div_ceil(8)).sum());
        for p in parts {
            p.append_bytes(&mut out);
        }
        let got = self.pass_next(out)?;
        split_bits(self.prev(), &got, parts.iter().map(|p| p.len()))
    }
}

/// Decodes exactly `n` elements or reports a malformed message.
pub(crate) fn decode_exact<R: Ring>(ring: &R, peer: PartyId, bytes: &[u8], n: usize) -> Result<Vec<R::El>> {
    if bytes.len() != ring.wire_len(n) {
        return Err(MpcError::Malformed {
            peer,
            reason: format!("expected {n} elements in {} bytes, got {} bytes", ring.wire_len(n), bytes.len()),
        });
    }
    ring.wire_decode(bytes, n).map_err(|e| MpcError::Malformed { peer, reason: e.to_string() })
}

/// Splits a message into bit vectors of the given lengths.
pub(crate) fn split_bits(peer: PartyId, bytes: &[u8], lens: impl Iterator<Item = usize>) -> Result<Vec<BitVec>> {
    let mut at = 0;
    let mut out = Vec::new();
    for n in lens {
        let nb = n.div_ceil(8);
        let chunk = bytes.get(at..at + nb).ok_or_else(|| MpcError::Malformed {
            peer,
            reason: format!("bit message of {} bytes is too short", bytes.len()),
        })?;
        out.push(BitVec::from_bytes(chunk, n).map_err(|e| MpcError::Malformed { peer, reason: e.to_string() })?);
        at += nb;
    }
    if at != bytes.len() {
        return Err(MpcError::Malformed { peer, reason: format!("{} trailing bytes", bytes.len() - at) });
    }
    Ok(out)
}
