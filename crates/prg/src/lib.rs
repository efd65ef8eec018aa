//! Argus correlated randomness: seeds agreed once when parties connect, expanded by AES-128-CTR
//! into as many pseudorandom elements as protocols ask for, with no communication per use.
//!
//! * [`Prg`] is the one PRG of the project: an AES-128-CTR keystream implementing `RngCore`.
//! * [`Pairwise`] holds the seeds a party of a p-party session shares with each other party and
//!   derives zero-sharings and random sharings from them: the correlated-randomness provider.
#![deny(missing_docs)]

use std::fmt;

use aes::cipher::{BlockEncrypt, KeyInit, KeyIvInit, StreamCipher, StreamCipherSeek};
use argus_math::{BitVec, Ring};
use argus_net::{NetError, Network, PartyId};
use rand_core::{CryptoRng, RngCore};

#[cfg(target_arch = "x86_64")]
mod vaes;

type Aes128Ctr = ctr::Ctr128LE<aes::Aes128>;

/// A 128-bit PRG seed. Its `Debug` form never shows the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct Seed(pub [u8; 16]);

impl Seed {
    /// A fresh seed from the operating system's CSPRNG.
    pub fn random() -> Self {
        let mut s = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut s);
        Seed(s)
    }
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Seed(..)")
    }
}

/// AES-128 in counter mode, keyed by a [`Seed`]: block `i` of the stream is `AES_k(i)`, `i` a
/// little-endian 128-bit counter from zero (as `ctr::Ctr128LE` with a zero IV). Two parties
/// holding the same seed and making the same sequence of calls draw identical bytes.
///
/// Bulk draws run on VAES (four blocks per AVX-512 instruction) where the CPU has it, else on
/// the `ctr` and `aes` crates' AES-NI or portable code; the stream is the same either way.
pub struct Prg {
    stream: Keystream,
    buf: [u8; 256],
    pos: usize,
}

/// The keystream itself, block by block, on whichever path this CPU has.
struct Keystream {
    key: [u8; 16],
    /// The `aes` crate's stream, made on first use only: where VAES serves the stream, its key
    /// schedule would be wasted work on every (often short) stream, as Gilboa's per-OT ones.
    ctr: Option<Box<Aes128Ctr>>,
    #[cfg(target_arch = "x86_64")]
    vaes: Option<vaes::Keys>,
    /// Index of the next keystream block.
    counter: u128,
}

impl Keystream {
    /// Writes the next `out.len() / 16` keystream blocks into `out` (whole blocks).
    fn fill(&mut self, out: &mut [u8]) {
        let blocks = (out.len() / 16) as u128;
        #[cfg(target_arch = "x86_64")]
        if let Some(k) = &self.vaes {
            // The vector lanes count in 64-bit halves: the portable path takes the (never seen in
            // practice) stretch where the low half would wrap.
            if (self.counter as u64).checked_add(blocks as u64).is_some() {
                k.keystream(self.counter, out);
                self.counter += blocks;
                return;
            }
        }
        // Keystream = E(counter) ^ 0: read zeros from a small cache-resident block instead of
        // clearing the destination in a separate pass.
        static ZEROS: [u8; 4096] = [0; 4096];
        let key = self.key;
        let ctr = self.ctr.get_or_insert_with(|| Box::new(Aes128Ctr::new(&key.into(), &[0u8; 16].into())));
        ctr.seek(self.counter * 16);
        for chunk in out.chunks_mut(ZEROS.len()) {
            ctr.apply_keystream_b2b(&ZEROS[..chunk.len()], chunk).expect("equal lengths");
        }
        self.counter += blocks;
    }
}

/// AES-128 under one key as a permutation of 128-bit blocks (little-endian bytes), many blocks
/// per call: the fixed-key π of the OT extensions' correlation-robust hashes. VAES where the
/// kernels' level allows it (as for [`Prg`], lowered by `ARGUS_ISA`), else the `aes` crate.
pub struct Permutation {
    aes: aes::Aes128,
    #[cfg(target_arch = "x86_64")]
    vaes: Option<vaes::Keys>,
}

impl fmt::Debug for Permutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Permutation(..)")
    }
}

impl Permutation {
    /// The permutation keyed by `key` (a public constant where it is used as π).
    pub fn new(key: u128) -> Self {
        let bytes = key.to_le_bytes();
        Permutation {
            aes: aes::Aes128::new(&bytes.into()),
            #[cfg(target_arch = "x86_64")]
            vaes: vaes::Keys::new(&bytes),
        }
    }

    /// `x = AES_k(x)` for every block.
    pub fn permute(&self, xs: &mut [u128]) {
        #[cfg(target_arch = "x86_64")]
        if let Some(k) = &self.vaes {
            return k.encrypt(xs);
        }
        self.permute_portable(xs);
    }

    /// [`permute`](Self::permute) on the `aes` crate, 64 blocks per call (its AES-NI path
    /// pipelines them).
    fn permute_portable(&self, xs: &mut [u128]) {
        let mut p = [aes::Block::default(); 64];
        for chunk in xs.chunks_mut(64) {
            let n = chunk.len();
            for (b, &x) in p.iter_mut().zip(chunk.iter()) {
                *b = x.to_le_bytes().into();
            }
            self.aes.encrypt_blocks(&mut p[..n]);
            for (x, b) in chunk.iter_mut().zip(&p) {
                *x = u128::from_le_bytes((*b).into());
            }
        }
    }
}

impl fmt::Debug for Prg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Prg(..)")
    }
}

impl Prg {
    /// The stream of `seed` (each seed is used for exactly one stream).
    pub fn new(seed: &Seed) -> Self {
        let stream = Keystream {
            key: seed.0,
            ctr: None,
            #[cfg(target_arch = "x86_64")]
            vaes: vaes::Keys::new(&seed.0),
            counter: 0,
        };
        Prg { stream, buf: [0; 256], pos: 256 }
    }
    /// A private stream seeded from the OS.
    pub fn from_entropy() -> Self {
        Self::new(&Seed::random())
    }
    /// A fresh seed drawn from this stream (to derive independent sub-streams).
    pub fn fork(&mut self) -> Seed {
        let mut s = [0u8; 16];
        self.fill_bytes(&mut s);
        Seed(s)
    }
}

impl RngCore for Prg {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }
    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        // Serve from the buffer first, then whole blocks straight into the destination, then the
        // rest through a fresh buffer.
        let take = dest.len().min(self.buf.len() - self.pos);
        dest[..take].copy_from_slice(&self.buf[self.pos..self.pos + take]);
        self.pos += take;
        let rest = &mut dest[take..];
        if rest.is_empty() {
            return; // served from the buffer (the common case for small draws)
        }
        let (blocks, tail) = rest.split_at_mut(rest.len() / 16 * 16);
        self.stream.fill(blocks);
        if !tail.is_empty() {
            self.stream.fill(&mut self.buf);
            tail.copy_from_slice(&self.buf[..tail.len()]);
            self.pos = tail.len();
        }
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for Prg {}

/// The correlated randomness of one party of a p-party session (2 ≤ p): a PRG stream shared with
/// each other party, from a seed agreed at connection time, and a private stream. Everything here
/// is drawn without communication; OT, triples and VOLE join it as the engine's next schemes need
/// them.
///
/// The 3-party replicated schemes (ABY3, paper 000 app. C) index components as the streams: party
/// `i` holds `s_i`, shared with party `i+1` ([`next`](Self::next)), and `s_{i-1}`, shared with
/// party `i-1` ([`prev`](Self::prev)), and holds components `(x_i, x_{i-1})`.
#[derive(Debug)]
pub struct Pairwise {
    me: PartyId,
    /// Stream shared with each peer (`None` at this party's own index).
    streams: Vec<Option<Prg>>,
    /// Private stream of this party.
    own: Prg,
}

impl Pairwise {
    /// Agrees one seed per pair over `net` (one round): for each pair `i < j`, party `i` samples
    /// the seed and sends it to `j` over their (TLS-protected) link.
    pub fn setup(net: &Network) -> Result<Self, NetError> {
        let (me, n) = (net.id(), net.n());
        let mut seeds = vec![None; n];
        for (j, slot) in seeds.iter_mut().enumerate().skip(me + 1) {
            let s = Seed::random();
            net.send(j, s.0.to_vec())?;
            *slot = Some(s);
        }
        for (j, slot) in seeds.iter_mut().enumerate().take(me) {
            let bytes = net.recv(j)?;
            let arr: [u8; 16] = bytes.as_slice().try_into().map_err(|_| NetError::Frame {
                peer: j,
                reason: format!("seed message of {} bytes, expected 16", bytes.len()),
            })?;
            *slot = Some(Seed(arr));
        }
        Ok(Self::from_seeds(me, &seeds))
    }
    /// From explicit seeds, one per party (`None` at `me`): tests, or seeds restored by a node.
    pub fn from_seeds(me: PartyId, seeds: &[Option<Seed>]) -> Self {
        let streams = seeds.iter().map(|s| s.as_ref().map(Prg::new)).collect();
        Pairwise { me, streams, own: Prg::from_entropy() }
    }
    /// Number of parties.
    pub fn parties(&self) -> usize {
        self.streams.len()
    }
    /// The stream shared with `peer`, or `None` for this party itself or an unknown index.
    pub fn with(&mut self, peer: PartyId) -> Option<&mut Prg> {
        self.streams.get_mut(peer).and_then(Option::as_mut)
    }
    /// The stream shared with party `me + 1 mod p` (`s_i` of the replicated schemes).
    #[allow(clippy::should_implement_trait)] // the papers' name; not an iterator
    pub fn next(&mut self) -> &mut Prg {
        let peer = (self.me + 1) % self.parties();
        self.with(peer).expect("a session has at least two parties")
    }
    /// The stream shared with party `me - 1 mod p` (`s_{i-1}` of the replicated schemes).
    pub fn prev(&mut self) -> &mut Prg {
        let peer = (self.me + self.parties() - 1) % self.parties();
        self.with(peer).expect("a session has at least two parties")
    }
    /// This party's private stream.
    pub fn own(&mut self) -> &mut Prg {
        &mut self.own
    }
    /// This party's part of a sharing of zero (the parts of all parties sum to 0).
    pub fn zero_share<R: Ring>(&mut self, ring: &R, n: usize) -> Vec<R::El> {
        let mut z = vec![ring.zero(); n];
        self.add_zero_share(ring, &mut z);
        z
    }
    /// Adds this party's part of a fresh zero-sharing to `z` in place: `F(s_i) - F(s_{i-1})`
    /// around the ring of parties (two streams whatever p; hides the sum from any one party, the
    /// honest-majority schemes' need), or `±F(s_01)` for two parties. Works through the vector
    /// in cache-sized chunks so no stream output is ever materialised in full.
    pub fn add_zero_share<R: Ring>(&mut self, ring: &R, z: &mut [R::El]) {
        const CHUNK: usize = 2048;
        if self.parties() == 2 {
            let sign_plus = self.me == 0;
            for chunk in z.chunks_mut(CHUNK) {
                let a = ring.sample_vec(self.next(), chunk.len());
                for (z, a) in chunk.iter_mut().zip(a) {
                    *z = if sign_plus { ring.add(*z, a) } else { ring.sub(*z, a) };
                }
            }
            return;
        }
        for chunk in z.chunks_mut(CHUNK) {
            let a = ring.sample_vec(self.next(), chunk.len());
            let b = ring.sample_vec(self.prev(), chunk.len());
            for ((z, a), b) in chunk.iter_mut().zip(a).zip(b) {
                *z = ring.add(*z, ring.sub(a, b));
            }
        }
    }
    /// This party's part of an XOR-sharing of zero over GF(2)^n (the same two streams as
    /// [`add_zero_share`](Self::add_zero_share); for two parties both hold the same bits).
    pub fn zero_bits(&mut self, n: usize) -> BitVec {
        let mut z = BitVec::random(self.next(), n);
        if self.parties() == 2 {
            return z;
        }
        // XOR the second stream in through a small buffer instead of a second vector.
        let mut buf = [0u64; 256];
        for chunk in z.words_mut().chunks_mut(buf.len()) {
            let b = &mut buf[..chunk.len()];
            let bytes: &mut [u8] = bytemuck_bytes(b);
            self.prev().fill_bytes(bytes);
            chunk.iter_mut().zip(b.iter()).for_each(|(w, r)| *w ^= r);
        }
        z.clear_tail();
        z
    }
    /// Components `(x_i, x_{i-1})` of a replicated sharing of a random value nobody knows
    /// (3 parties).
    pub fn random_pair<R: Ring>(&mut self, ring: &R, n: usize) -> (Vec<R::El>, Vec<R::El>) {
        (ring.sample_vec(self.next(), n), ring.sample_vec(self.prev(), n))
    }
}

/// The bytes of a word buffer (little-endian, like the streams' consumers expect).
fn bytemuck_bytes(words: &mut [u64]) -> &mut [u8] {
    bytemuck::cast_slice_mut(words)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_permutation_is_aes_on_every_path() {
        use aes::cipher::{BlockEncrypt, KeyInit};
        let key = 0x243F_6A88_85A3_08D3_1319_8A2E_0370_7344u128;
        let pi = super::Permutation::new(key);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            pi.vaes.is_some(),
            argus_math::kernels::detected() >= argus_math::kernels::Isa::Avx512
                && is_x86_feature_detected!("aes")
                && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("vaes")
        );
        let aes = aes::Aes128::new(&key.to_le_bytes().into());
        let mut prg = super::Prg::new(&super::Seed([9; 16]));
        for n in [0usize, 1, 3, 4, 5, 31, 32, 33, 64, 65, 200] {
            let xs: Vec<u128> = (0..n).map(|_| u128::from(prg.next_u64()) << 64 | u128::from(prg.next_u64())).collect();
            let want: Vec<u128> = xs
                .iter()
                .map(|x| {
                    let mut b = aes::Block::from(x.to_le_bytes());
                    aes.encrypt_block(&mut b);
                    u128::from_le_bytes(b.into())
                })
                .collect();
            let mut got = xs.clone();
            pi.permute_portable(&mut got);
            assert_eq!(got, want, "portable, {n} blocks");
            let mut got = xs.clone();
            pi.permute(&mut got);
            assert_eq!(got, want, "dispatched, {n} blocks");
        }
    }

    use super::*;
    use argus_math::Z64;

    #[test]
    fn same_seed_same_stream_any_chunking() {
        let s = Seed([7; 16]);
        let (mut a, mut b) = (Prg::new(&s), Prg::new(&s));
        let mut x = vec![0u8; 5000];
        a.fill_bytes(&mut x);
        let mut y = vec![0u8; 5000];
        let (p1, rest) = y.split_at_mut(3);
        b.fill_bytes(p1);
        let (p2, p3) = rest.split_at_mut(1000);
        b.fill_bytes(p2);
        b.fill_bytes(p3);
        assert_eq!(x, y);
        assert_ne!(Prg::new(&Seed([8; 16])).next_u64(), Prg::new(&s).next_u64());
        assert_eq!(format!("{:?}", s), "Seed(..)");
    }

    /// The stream is AES-128-CTR as the `ctr` crate computes it (little-endian 128-bit counter,
    /// zero IV), on the VAES path where this CPU has it and on the portable one, for draws of
    /// every shape (whole blocks, tails, the 8-register stride of the VAES kernel and past it),
    /// and across the counter's 64-bit boundary (where the VAES path hands over).
    #[test]
    fn stream_is_aes_ctr() {
        let sizes = [1usize, 15, 16, 17, 64, 100, 255, 256, 511, 512, 513, 4096, 5000];
        for (key, start) in [([3u8; 16], 0u128), ([9u8; 16], (1u128 << 64) - 40), ([5u8; 16], 7 << 70)] {
            for portable in [false, true] {
                let total: usize = sizes.iter().sum();
                let mut want = vec![0u8; total];
                let mut reference = ctr::Ctr128LE::<aes::Aes128>::new(&key.into(), &[0u8; 16].into());
                reference.seek(start * 16);
                reference.apply_keystream(&mut want);
                let mut prg = Prg::new(&Seed(key));
                prg.stream.counter = start;
                #[cfg(target_arch = "x86_64")]
                if portable {
                    prg.stream.vaes = None;
                }
                let mut got = vec![0u8; total];
                let mut at = 0;
                for n in sizes {
                    prg.fill_bytes(&mut got[at..at + n]);
                    at += n;
                }
                assert!(got == want, "key {key:?} from block {start}, portable {portable}");
            }
        }
    }

    #[test]
    fn zero_shares_sum_to_zero() {
        let r = Z64::new();
        for p in 2..=16 {
            let mut parties = sessions(p);
            let shares: Vec<Vec<u64>> = parties.iter_mut().map(|q| q.zero_share(&r, 100)).collect();
            for i in 0..100 {
                assert_eq!(shares.iter().fold(0u64, |acc, s| acc.wrapping_add(s[i])), 0, "{p} parties");
            }
            assert_eq!(shares[0].len(), 100);
            assert!(shares.iter().all(|s| s[0] != 0), "{p} parties");
            let bits: Vec<BitVec> = parties.iter_mut().map(|q| q.zero_bits(77)).collect();
            let sum = bits.iter().skip(1).fold(bits[0].clone(), |acc, b| acc.xor(b).unwrap());
            assert_eq!(sum.count_ones(), 0, "{p} parties");
        }
    }

    /// p parties with one seed per pair, as [`Pairwise::setup`] agrees them.
    fn sessions(p: usize) -> Vec<Pairwise> {
        let seeds: Vec<Vec<Seed>> = (0..p).map(|_| (0..p).map(|_| Seed::random()).collect()).collect();
        let pick = |i: usize, j: usize| if i == j { None } else { Some(seeds[i.min(j)][i.max(j)].clone()) };
        (0..p).map(|i| Pairwise::from_seeds(i, &(0..p).map(|j| pick(i, j)).collect::<Vec<_>>())).collect()
    }

    #[test]
    fn streams_are_shared_pairwise() {
        let mut parties = sessions(5);
        for i in 0..5 {
            assert!(parties[i].with(i).is_none() && parties[i].with(5).is_none());
            for j in i + 1..5 {
                let a = parties[i].with(j).unwrap().next_u64();
                let b = parties[j].with(i).unwrap().next_u64();
                assert_eq!(a, b, "{i}-{j}");
            }
        }
        let mut three = sessions(3);
        let (a, b) = (three[0].next().next_u64(), three[1].prev().next_u64());
        assert_eq!(a, b);
    }
}

#[cfg(test)]
mod speed {
    /// `cargo test --release -p argus-prg speed -- --ignored --nocapture` prints the stream rate.
    #[test]
    #[ignore]
    fn prg_throughput() {
        use rand_core::RngCore;
        let mut p = super::Prg::new(&super::Seed([1; 16]));
        let mut buf = vec![0u8; 256 << 10];
        let t = std::time::Instant::now();
        for _ in 0..1024 {
            p.fill_bytes(&mut buf);
        }
        println!("AES-CTR: {:.2} GB/s", 1024.0 * buf.len() as f64 / t.elapsed().as_secs_f64() / 1e9);
    }
}
