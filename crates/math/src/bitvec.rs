//! Packed bit vectors: GF(2)^n, 64 bits per word. Invariant: bits past `len` in the last word are 0.

use rand_core::RngCore;

use crate::MathError;

/// A vector of `len` bits packed little-endian into `u64` words (bit i is bit i%64 of word i/64).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BitVec {
    words: Vec<u64>,
    len: usize,
}

/// Words needed for `n` bits.
#[inline]
pub fn words_for(n: usize) -> usize {
    n.div_ceil(64)
}

/// The low `n` bits set (`n ≤ 64`).
#[inline]
pub fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// `n ≤ 64` bits of packed `words` from bit `at` on, as the low bits of a word (the rest 0).
#[inline]
pub fn get_bits(words: &[u64], at: usize, n: usize) -> u64 {
    let (w, sh) = (at / 64, at % 64);
    let mut v = words[w] >> sh;
    if sh + n > 64 {
        v |= words[w + 1] << (64 - sh);
    }
    v & low_bits(n)
}

/// XORs the low `n ≤ 64` bits of `v` into packed `words` from bit `at` on (higher bits of `v`
/// are ignored).
#[inline]
pub fn xor_bits(words: &mut [u64], at: usize, v: u64, n: usize) {
    let v = v & low_bits(n);
    let (w, sh) = (at / 64, at % 64);
    words[w] ^= v << sh;
    if sh + n > 64 {
        words[w + 1] ^= v >> (64 - sh);
    }
}

impl BitVec {
    /// `n` zero bits.
    pub fn zeros(n: usize) -> Self {
        BitVec { words: vec![0; words_for(n)], len: n }
    }
    /// `n` one bits.
    pub fn ones(n: usize) -> Self {
        let mut v = BitVec { words: vec![u64::MAX; words_for(n)], len: n };
        v.clear_tail();
        v
    }
    /// From packed words; bits past `len` are cleared. Errors if `words` is too short.
    pub fn from_words(mut words: Vec<u64>, len: usize) -> Result<Self, MathError> {
        if words.len() < words_for(len) {
            return Err(MathError::LengthMismatch { left: words.len() * 64, right: len });
        }
        words.truncate(words_for(len));
        let mut v = BitVec { words, len };
        v.clear_tail();
        Ok(v)
    }
    /// From booleans.
    pub fn from_bools(bits: &[bool]) -> Self {
        let mut v = Self::zeros(bits.len());
        for (i, &b) in bits.iter().enumerate() {
            v.words[i / 64] |= (b as u64) << (i % 64);
        }
        v
    }
    /// `n` uniformly random bits.
    pub fn random<R: RngCore + ?Sized>(rng: &mut R, n: usize) -> Self {
        // Through a small buffer rather than zeroing the vector first: the same stream as
        // `fill_random` (the generators are streams), written once.
        let nw = words_for(n);
        let mut words = Vec::with_capacity(nw);
        let mut buf = [0u64; 256];
        while words.len() < nw {
            let m = (nw - words.len()).min(buf.len());
            rng.fill_bytes(bytemuck::cast_slice_mut(&mut buf[..m]));
            words.extend_from_slice(&buf[..m]);
        }
        let mut v = BitVec { words, len: n };
        v.clear_tail();
        v
    }
    /// Overwrites every bit with a random one (the tail stays clear).
    pub fn fill_random<R: RngCore + ?Sized>(&mut self, rng: &mut R) {
        rng.fill_bytes(bytemuck::cast_slice_mut(&mut self.words));
        self.clear_tail();
    }
    /// As booleans.
    pub fn to_bools(&self) -> Vec<bool> {
        (0..self.len).map(|i| self.get(i)).collect()
    }
    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The packed words.
    pub fn words(&self) -> &[u64] {
        &self.words
    }
    /// The packed words, mutably. Callers must keep the tail clear (or call `clear_tail`).
    pub fn words_mut(&mut self) -> &mut [u64] {
        &mut self.words
    }
    /// Takes the words out.
    pub fn into_words(self) -> Vec<u64> {
        self.words
    }
    /// Bit `i` (panics if out of range, like slice indexing).
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        assert!(i < self.len, "bit index {i} out of range for length {}", self.len);
        (self.words[i / 64] >> (i % 64)) & 1 == 1
    }
    /// Sets bit `i`.
    #[inline]
    pub fn set(&mut self, i: usize, b: bool) {
        assert!(i < self.len, "bit index {i} out of range for length {}", self.len);
        let m = 1u64 << (i % 64);
        if b {
            self.words[i / 64] |= m;
        } else {
            self.words[i / 64] &= !m;
        }
    }
    /// Re-establishes the invariant that bits past `len` are zero.
    pub fn clear_tail(&mut self) {
        if !self.len.is_multiple_of(64) {
            if let Some(w) = self.words.last_mut() {
                *w &= (1u64 << (self.len % 64)) - 1;
            }
        }
    }
    fn check_len(&self, o: &Self) -> Result<(), MathError> {
        if self.len != o.len {
            return Err(MathError::LengthMismatch { left: self.len, right: o.len });
        }
        Ok(())
    }
    /// `self ^= o`.
    pub fn xor_assign(&mut self, o: &Self) -> Result<(), MathError> {
        self.check_len(o)?;
        self.words.iter_mut().zip(&o.words).for_each(|(a, b)| *a ^= b);
        Ok(())
    }
    /// `self &= o`.
    pub fn and_assign(&mut self, o: &Self) -> Result<(), MathError> {
        self.check_len(o)?;
        self.words.iter_mut().zip(&o.words).for_each(|(a, b)| *a &= b);
        Ok(())
    }
    /// `self ^ o` (one pass: no copy of `self` first).
    pub fn xor(&self, o: &Self) -> Result<Self, MathError> {
        self.check_len(o)?;
        Ok(BitVec { words: self.words.iter().zip(&o.words).map(|(a, b)| a ^ b).collect(), len: self.len })
    }
    /// `self & o` (one pass).
    pub fn and(&self, o: &Self) -> Result<Self, MathError> {
        self.check_len(o)?;
        Ok(BitVec { words: self.words.iter().zip(&o.words).map(|(a, b)| a & b).collect(), len: self.len })
    }
    /// Bitwise complement.
    pub fn not(&self) -> Self {
        let mut r = BitVec { words: self.words.iter().map(|w| !w).collect(), len: self.len };
        r.clear_tail();
        r
    }
    /// Number of one bits.
    pub fn count_ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// Bits `[start, start + n)` as a new vector (word-shifted, no per-bit loop).
    pub fn slice(&self, start: usize, n: usize) -> Result<Self, MathError> {
        if start + n > self.len {
            return Err(MathError::LengthMismatch { left: self.len, right: start + n });
        }
        let (w0, sh, nw) = (start / 64, start % 64, words_for(n));
        let src = &self.words[w0..];
        if sh == 0 {
            return Self::from_words(src[..nw].to_vec(), n);
        }
        // Word k takes the high bits of source word k and the low bits of word k + 1 (a funnel
        // shift over adjacent pairs, which vectorises); the last word may have no successor.
        let mut words: Vec<u64> = src.windows(2).take(nw).map(|w| (w[0] >> sh) | (w[1] << (64 - sh))).collect();
        if words.len() < nw {
            words.push(src[words.len()] >> sh);
        }
        Self::from_words(words, n)
    }
    /// Concatenation of several vectors, in order.
    pub fn concat(parts: &[&BitVec]) -> Self {
        let n: usize = parts.iter().map(|p| p.len).sum();
        let mut out = Self::zeros(n);
        let mut at = 0;
        for p in parts {
            out.write_at(at, p);
            at += p.len;
        }
        out
    }
    /// ORs the bits of `src` into `self` starting at bit `at` (the target range must be zero).
    fn write_at(&mut self, at: usize, src: &BitVec) {
        let (w0, sh) = (at / 64, at % 64);
        for (k, &w) in src.words.iter().enumerate() {
            self.words[w0 + k] |= w << sh;
            if sh != 0 && w0 + k + 1 < self.words.len() {
                self.words[w0 + k + 1] |= w >> (64 - sh);
            }
        }
    }
    /// Little-endian bytes, `ceil(len / 8)` of them: the wire form (no padding to whole words).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len.div_ceil(8));
        self.append_bytes(&mut out);
        out
    }
    /// Appends the wire form to `out`.
    pub fn append_bytes(&self, out: &mut Vec<u8>) {
        // Little-endian words are the wire bytes; the tail word is cut to whole bytes.
        out.extend_from_slice(&bytemuck::cast_slice(&self.words)[..self.len.div_ceil(8)]);
    }
    /// Parses `ceil(n / 8)` bytes; stray bits past `n` are an error (they would be a malformed message).
    pub fn from_bytes(bytes: &[u8], n: usize) -> Result<Self, MathError> {
        check_wire(bytes, n)?;
        // Word by word (no zeroing pass first); the tail word is zero-padded.
        let mut words = Vec::with_capacity(words_for(n));
        let chunks = bytes.chunks_exact(8);
        let tail = chunks.remainder();
        words.extend(chunks.map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))));
        if !tail.is_empty() {
            let mut last = [0u8; 8];
            last[..tail.len()].copy_from_slice(tail);
            words.push(u64::from_le_bytes(last));
        }
        Ok(BitVec { words, len: n })
    }
    /// Transposes canonical values into `k` bit planes: plane `j` holds bit `j` of every value
    /// (64 values at a time through a 64 x 64 bit-matrix transpose).
    pub fn planes_of(values: &[u128], k: usize) -> Vec<BitVec> {
        Self::planes_from_fn(values.len(), k, |i| values[i])
    }
    /// [`planes_of`](Self::planes_of) for values given by a function of the index, so callers
    /// transpose straight from their own element type without an intermediate array.
    pub fn planes_from_fn(n: usize, k: usize, value: impl Fn(usize) -> u128) -> Vec<BitVec> {
        let mut planes: Vec<_> = (0..k).map(|_| BitVec::zeros(n)).collect();
        Self::planes_into(&mut planes, 0, n, value).expect("whole planes");
        planes
    }
    /// Bit planes `0..k` (`k ≤ 32`) of 32-bit values: [`planes_of`](Self::planes_of) for the
    /// common case, reading the values as a slice (no call per value) and writing each plane
    /// once (no zeroing first). Bits `k..32` of the values are ignored.
    pub fn planes_from_u32(values: &[u32], k: usize) -> Result<Vec<BitVec>, MathError> {
        if k > 32 {
            return Err(MathError::LengthMismatch { left: k, right: 32 });
        }
        Ok(Self::planes_from_u32_with(values, k, simd_planes()))
    }

    /// [`planes_from_u32`](Self::planes_from_u32) written into bits `at..at + values.len()` of
    /// existing planes (a piece, as [`planes_into`](Self::planes_into) takes): bit plane `j` of
    /// `values` into `planes[j]`, for the `planes.len() ≤ 32` planes given.
    pub fn planes_into_u32(planes: &mut [BitVec], at: usize, values: &[u32]) -> Result<(), MathError> {
        if planes.len() > 32 {
            return Err(MathError::LengthMismatch { left: planes.len(), right: 32 });
        }
        for p in planes.iter() {
            p.check_piece(at, values.len())?;
        }
        let (k, w0) = (planes.len(), at / 64);
        plane_words(values, k, simd_planes(), |w, out| {
            for (plane, &word) in planes.iter_mut().zip(out) {
                plane.words[w0 + w] = word;
            }
        });
        Ok(())
    }

    fn planes_from_u32_with(values: &[u32], k: usize, simd: bool) -> Vec<BitVec> {
        let n = values.len();
        let mut words: Vec<Vec<u64>> = (0..k).map(|_| Vec::with_capacity(words_for(n))).collect();
        plane_words(values, k, simd, |_, out| {
            for (plane, &word) in words.iter_mut().zip(out) {
                plane.push(word);
            }
        });
        words.into_iter().map(|words| BitVec { words, len: n }).collect()
    }

    /// The words holding bits `at..at + n` (see [`check_piece`](Self::check_piece)).
    fn piece(&self, at: usize, n: usize) -> Result<&[u64], MathError> {
        self.check_piece(at, n)?;
        Ok(&self.words[at / 64..at / 64 + words_for(n)])
    }
    fn piece_mut(&mut self, at: usize, n: usize) -> Result<&mut [u64], MathError> {
        self.check_piece(at, n)?;
        Ok(&mut self.words[at / 64..at / 64 + words_for(n)])
    }
    /// Random bits `at..at + n` (a piece: see [`planes_into`](Self::planes_into)), drawn as
    /// [`random`](Self::random)`(rng, n)` draws them, so two holders of one seed fill the same
    /// pad whether they hold it as a whole vector or as a piece.
    pub fn fill_random_at<R: RngCore + ?Sized>(&mut self, rng: &mut R, at: usize, n: usize) -> Result<(), MathError> {
        let words = self.piece_mut(at, n)?;
        rng.fill_bytes(bytemuck::cast_slice_mut(words));
        if let (Some(w), r @ 1..) = (words.last_mut(), n % 64) {
            *w &= (1u64 << r) - 1;
        }
        Ok(())
    }
    /// `self[at..at + n] ^= o[at..at + n]` (a piece of both).
    pub fn xor_at(&mut self, o: &BitVec, at: usize, n: usize) -> Result<(), MathError> {
        let src = o.piece(at, n)?;
        self.piece_mut(at, n)?.iter_mut().zip(src).for_each(|(d, s)| *d ^= s);
        Ok(())
    }
    /// Appends the wire form of bits `at..at + n` (a piece), as [`append_bytes`](Self::append_bytes)
    /// of those bits alone.
    pub fn append_bytes_at(&self, at: usize, n: usize, out: &mut Vec<u8>) -> Result<(), MathError> {
        out.extend_from_slice(&bytemuck::cast_slice(self.piece(at, n)?)[..n.div_ceil(8)]);
        Ok(())
    }
    /// Sets bits `at..at + n` (a piece) from their wire form (`ceil(n / 8)` bytes); stray bits
    /// past `n` are an error, as in [`from_bytes`](Self::from_bytes), and change nothing.
    pub fn set_bytes_at(&mut self, at: usize, n: usize, bytes: &[u8]) -> Result<(), MathError> {
        check_wire(bytes, n)?;
        bytemuck::cast_slice_mut::<u64, u8>(self.piece_mut(at, n)?)[..bytes.len()].copy_from_slice(bytes);
        Ok(())
    }
    /// A piece is bits `at..at + n` with `at` a multiple of 64 and the end either a multiple of
    /// 64 or the vector's end, so pieces never share a word and bits past the end stay zero.
    fn check_piece(&self, at: usize, n: usize) -> Result<(), MathError> {
        if n == 0 && at <= self.len {
            return Ok(()); // an empty piece anywhere (say, an empty third at the end)
        }
        if !at.is_multiple_of(64) {
            return Err(MathError::LengthMismatch { left: at, right: at.next_multiple_of(64) });
        }
        // Either whole words or up to the end, so a piece never shares a word with the next one.
        let end = at.checked_add(n).filter(|&e| e <= self.len && (e.is_multiple_of(64) || e == self.len));
        if end.is_none() {
            return Err(MathError::LengthMismatch { left: at.saturating_add(n), right: self.len });
        }
        Ok(())
    }
    /// [`planes_from_fn`](Self::planes_from_fn) written into bits `at..at + n` of existing
    /// planes (`value(i)` for `i < n` goes to bit `at + i`). The bits form a *piece*: `at` a
    /// multiple of 64 and `at + n` a multiple of 64 or the planes' end, so pieces written apart
    /// never share a word (the other `*_at` methods take pieces too).
    /// Only the first `planes.len()` bits of each value are kept.
    pub fn planes_into(
        planes: &mut [BitVec],
        at: usize,
        n: usize,
        value: impl Fn(usize) -> u128,
    ) -> Result<(), MathError> {
        for p in planes.iter() {
            p.check_piece(at, n)?;
        }
        Self::planes_into_with(planes, at, n, value, simd_planes());
        Ok(())
    }

    /// [`planes_into`](Self::planes_into) after its checks, on the AVX-512 byte-plane path (`simd`,
    /// where the CPU has it) or the portable 64 × 64 transposes.
    fn planes_into_with(planes: &mut [BitVec], at: usize, n: usize, value: impl Fn(usize) -> u128, simd: bool) {
        let (k, nw, w0) = (planes.len(), words_for(n), at / 64);
        #[cfg(target_arch = "x86_64")]
        if simd && k <= 32 {
            let (mut vals, mut out) = ([0u32; 64], [0u64; 32]);
            for w in 0..nw {
                vals.fill(0);
                for (slot, i) in vals.iter_mut().zip(w * 64..n.min(w * 64 + 64)) {
                    *slot = value(i) as u32;
                }
                // SAFETY: `simd` is only set where `simd_planes` found AVX-512 F/BW/VBMI.
                unsafe { planes64_avx512(&vals, k, &mut out) };
                for (plane, &word) in planes.iter_mut().zip(&out) {
                    plane.words[w0 + w] = word;
                }
            }
            return;
        }
        let _ = simd;
        let mut block = [0u64; 64];
        if k <= 32 {
            // Two words of values per transpose: values of word w in the low halves, of word
            // w + 1 in the high halves; rows j and 32 + j come out as plane j of each.
            for w in (0..nw).step_by(2) {
                block.fill(0);
                for (slot, i) in block.iter_mut().zip(w * 64..n.min(w * 64 + 64)) {
                    *slot = value(i) as u64 & 0xffff_ffff;
                }
                for (slot, i) in block.iter_mut().zip(w * 64 + 64..n.min(w * 64 + 128)) {
                    *slot |= (value(i) as u64) << 32;
                }
                transpose64(&mut block);
                for (j, plane) in planes.iter_mut().enumerate() {
                    plane.words[w0 + w] = block[j];
                    if w + 1 < nw {
                        plane.words[w0 + w + 1] = block[32 + j];
                    }
                }
            }
            return;
        }
        for w in 0..nw {
            let chunk = w * 64..n.min(w * 64 + 64);
            for limb in 0..k.div_ceil(64) {
                block.fill(0);
                for (t, i) in chunk.clone().enumerate() {
                    block[t] = (value(i) >> (64 * limb)) as u64;
                }
                transpose64(&mut block);
                for (j, &row) in block.iter().enumerate().take(k - 64 * limb) {
                    planes[64 * limb + j].words[w0 + w] = row;
                }
            }
        }
    }
}

/// The wire form of `n` bits is `ceil(n / 8)` bytes with no stray bits past `n` (they would be
/// a malformed message).
fn check_wire(bytes: &[u8], n: usize) -> Result<(), MathError> {
    if bytes.len() != n.div_ceil(8) || (!n.is_multiple_of(8) && bytes.last().is_some_and(|&b| b >> (n % 8) != 0)) {
        return Err(MathError::BadEncoding { bytes: bytes.len(), elem_bytes: 0 });
    }
    Ok(())
}

/// Whether [`BitVec::planes_into`] takes its AVX-512 path: the kernels' level allows AVX-512
/// (`ARGUS_ISA`) and the CPU has VBMI's byte permutes.
fn simd_planes() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::kernels::detected() >= crate::kernels::Isa::Avx512 && is_x86_feature_detected!("avx512vbmi")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Bit planes `0..k` (`k ≤ 32`) of 64 values (see [`planes64_avx512`]), on AVX-512 where `simd`
/// says the CPU has it, else by a 64 × 64 transpose.
/// Bit planes `0..k` (`k ≤ 32`) of `values`, 64 values at a time: `emit(w, planes)` gets word
/// `w` of each plane (a short last chunk is padded with zeros).
fn plane_words(values: &[u32], k: usize, simd: bool, mut emit: impl FnMut(usize, &[u64; 32])) {
    let mut out = [0u64; 32];
    for (w, chunk) in values.chunks(64).enumerate() {
        let mut padded = [0u32; 64];
        let vals: &[u32; 64] = match chunk.try_into() {
            Ok(whole) => whole,
            Err(_) => {
                padded[..chunk.len()].copy_from_slice(chunk);
                &padded
            }
        };
        planes64(vals, k, &mut out, simd);
        emit(w, &out);
    }
}

fn planes64(values: &[u32; 64], k: usize, out: &mut [u64; 32], simd: bool) {
    #[cfg(target_arch = "x86_64")]
    if simd {
        // SAFETY: `simd` is only set where `simd_planes` found AVX-512 F/BW/VBMI.
        unsafe { planes64_avx512(values, k, out) };
        return;
    }
    let _ = simd;
    let mut block: [u64; 64] = std::array::from_fn(|i| values[i] as u64);
    transpose64(&mut block);
    out[..k].copy_from_slice(&block[..k]);
}

/// Bit planes `0..k` (`k ≤ 32`) of 64 values: bit `i` of `out[j]` is bit `j` of `values[i]`.
/// Byte `b` of every value is gathered into one register (two VBMI byte permutes and a blend),
/// then each of its 8 bits is one `vptestmb` — about 50 instructions where the 64 × 64 bit
/// transpose takes several hundred.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn planes64_avx512(values: &[u32; 64], k: usize, out: &mut [u64; 32]) {
    use std::arch::x86_64::*;
    let p = values.as_ptr().cast::<__m512i>();
    // SAFETY: `values` is 256 readable bytes: four unaligned 64-byte loads.
    let z = unsafe {
        [
            _mm512_loadu_si512(p),
            _mm512_loadu_si512(p.add(1)),
            _mm512_loadu_si512(p.add(2)),
            _mm512_loadu_si512(p.add(3)),
        ]
    };
    // Position i takes byte 4·(i mod 32) of a register pair: value i mod 32 of that pair.
    let base: [u8; 64] = std::array::from_fn(|i| (4 * (i % 32)) as u8);
    // SAFETY: `base` is 64 readable bytes.
    let base = unsafe { _mm512_loadu_si512(base.as_ptr().cast()) };
    for b in 0..k.div_ceil(8) {
        let idx = _mm512_add_epi8(base, _mm512_set1_epi8(b as i8));
        let lo = _mm512_permutex2var_epi8(z[0], idx, z[1]); // values 0..31 in positions 0..31
        let hi = _mm512_permutex2var_epi8(z[2], idx, z[3]); // values 32..63 in positions 32..63
        let bytes = _mm512_mask_blend_epi8(0xFFFF_FFFF_0000_0000, lo, hi);
        for t in 0..(k - 8 * b).min(8) {
            out[8 * b + t] = _mm512_test_epi8_mask(bytes, _mm512_set1_epi8((1u8 << t) as i8));
        }
    }
}

/// In-place transpose of a 64 x 64 bit matrix: afterwards bit `t` of `a[j]` is what bit `j` of
/// `a[t]` was. Swaps off-diagonal blocks of size 32, 16, ..., 1 (Hacker's Delight 7-3).
pub fn transpose64(a: &mut [u64; 64]) {
    // Stage j pairs row k with row k + j in every block of 2j rows; written as runs of
    // consecutive rows so that the compiler vectorises the wide stages.
    for (j, m) in [
        (32, 0x0000_0000_FFFF_FFFFu64),
        (16, 0x0000_FFFF_0000_FFFF),
        (8, 0x00FF_00FF_00FF_00FF),
        (4, 0x0F0F_0F0F_0F0F_0F0F),
        (2, 0x3333_3333_3333_3333),
        (1, 0x5555_5555_5555_5555),
    ] {
        for block in a.chunks_exact_mut(2 * j) {
            let (lo, hi) = block.split_at_mut(j);
            for (x, y) in lo.iter_mut().zip(hi) {
                let t = ((*x >> j) ^ *y) & m;
                *y ^= t;
                *x ^= t << j;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn slice_concat_roundtrip(bits in proptest::collection::vec(any::<bool>(), 0..400), cut in 0usize..400) {
            let v = BitVec::from_bools(&bits);
            let cut = cut.min(bits.len());
            let a = v.slice(0, cut).unwrap();
            let b = v.slice(cut, bits.len() - cut).unwrap();
            prop_assert_eq!(a.to_bools(), &bits[..cut]);
            prop_assert_eq!(BitVec::concat(&[&a, &b]), v.clone());
            prop_assert_eq!(BitVec::from_bytes(&v.to_bytes(), v.len()).unwrap(), v.clone());
            prop_assert_eq!(v.not().count_ones(), bits.len() - v.count_ones());
        }

        /// `get_bits` reads and `xor_bits` writes the same bits as a per-bit walk, at every
        /// offset and width, leaving the bits around them alone.
        #[test]
        fn bits_at_offsets(words in proptest::collection::vec(any::<u64>(), 3), v: u64, at in 0usize..128, n in 0usize..=64) {
            let bit = |ws: &[u64], k: usize| ws[k / 64] >> (k % 64) & 1;
            let want = (0..n).fold(0u64, |acc, k| acc | bit(&words, at + k) << k);
            prop_assert_eq!(get_bits(&words, at, n), want);
            let mut out = words.clone();
            xor_bits(&mut out, at, v, n);
            for k in 0..192 {
                let flip = if (at..at + n).contains(&k) { v >> (k - at) & 1 } else { 0 };
                prop_assert_eq!(bit(&out, k), bit(&words, k) ^ flip);
            }
        }
    }

    /// Pieces (word-aligned ranges ending on a word or at the end) written in place equal the
    /// whole-vector operations on the same bits: transposes at offsets, pads drawn as
    /// `random(n)` draws them, XOR, the wire form and back; a piece starting inside a word,
    /// ending inside a word before the end, or past the end is refused, as are stray bits.
    #[test]
    fn pieces_in_place_match_whole_vectors() {
        /// A seeded xorshift stream (the draws only have to repeat).
        struct Xs(u64);
        impl rand_core::RngCore for Xs {
            fn next_u32(&mut self) -> u32 {
                self.next_u64() as u32
            }
            fn next_u64(&mut self) -> u64 {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                self.0
            }
            fn fill_bytes(&mut self, dest: &mut [u8]) {
                rand_core::impls::fill_bytes_via_next(self, dest)
            }
            fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
                self.fill_bytes(dest);
                Ok(())
            }
        }
        let seeded = |s: u64| Xs(0x9E37_79B9_7F4A_7C15 ^ s);
        // `random` draws what `fill_random` draws (lengths around its 256-word buffer, partial
        // last words), with the tail clear.
        for n in [0, 1, 63, 64, 100, 256 * 64, 256 * 64 + 37, 3 * 256 * 64 - 5] {
            let mut filled = BitVec::zeros(n);
            filled.fill_random(&mut seeded(7));
            let drawn = BitVec::random(&mut seeded(7), n);
            assert_eq!(drawn, filled, "n {n}");
            assert_eq!(BitVec::from_bytes(&drawn.to_bytes(), n), Ok(drawn), "tail clear, n {n}");
        }
        let n = 64 * 5 + 37;
        let vals: Vec<u128> = (0..n as u128).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 3).collect();
        for (at, len) in [(0, 128), (128, 0), (128, 64 * 3), (64 * 4, 64 + 37), (n, 0)] {
            for k in [1, 31, 32, 33, 64] {
                let mut planes = vec![BitVec::zeros(n); k];
                BitVec::planes_into(&mut planes, at, len, |i| vals[at + i]).unwrap();
                let whole = BitVec::planes_of(&vals[at..at + len], k);
                for (p, w) in planes.iter().zip(&whole) {
                    assert_eq!(p.slice(at, len).unwrap(), *w, "at {at} len {len} k {k}");
                    assert_eq!(p.count_ones(), w.count_ones(), "nothing written outside the piece");
                }
            }
            let mut v = BitVec::zeros(n);
            v.fill_random_at(&mut seeded(7), at, len).unwrap();
            let r = BitVec::random(&mut seeded(7), len);
            assert_eq!(v.slice(at, len).unwrap(), r);
            assert_eq!(v.count_ones(), r.count_ones());
            let mut u = BitVec::ones(n);
            u.xor_at(&v, at, len).unwrap();
            assert_eq!(u.slice(at, len).unwrap(), r.not());
            let mut wire = vec![9];
            v.append_bytes_at(at, len, &mut wire).unwrap();
            assert_eq!(wire[1..], r.to_bytes()[..]);
            let mut w = BitVec::zeros(n);
            w.set_bytes_at(at, len, &wire[1..]).unwrap();
            assert_eq!(w, v);
        }
        let mut v = BitVec::zeros(n);
        let mut rng = seeded(1);
        for (at, len) in [(1, 63), (0, 100), (64, n), (n + 64, 0)] {
            assert!(v.fill_random_at(&mut rng, at, len).is_err(), "at {at} len {len}");
            assert!(BitVec::planes_into(std::slice::from_mut(&mut v), at, len, |_| 0).is_err());
        }
        assert!(v.set_bytes_at(64 * 4, 64 + 37, &[0xff; 13]).is_err(), "stray bits past the piece");
        assert!(v.set_bytes_at(0, 64, &[0; 7]).is_err(), "short");
        assert_eq!(v, BitVec::zeros(n), "refused calls change nothing");
    }

    #[test]
    fn transpose_matches_naive() {
        // Counts of 64-bit words odd and even (k ≤ 32 transposes two words at once), partial
        // last words, and values with bits above k (ignored); the AVX-512 path (where this CPU
        // has it) and the portable one.
        for (n, simd, k) in [0u128, 1, 64, 100, 128, 150, 200]
            .into_iter()
            .flat_map(|n| [false, simd_planes()].map(|simd| (n, simd)))
            .flat_map(|(n, simd)| [1, 7, 8, 9, 16, 24, 30, 31, 32, 33, 64, 65, 128].map(|k| (n, simd, k)))
        {
            let vals: Vec<u128> =
                (0..n).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835) ^ (i << 100)).collect();
            let mut planes: Vec<_> = (0..k).map(|_| BitVec::zeros(vals.len())).collect();
            BitVec::planes_into_with(&mut planes, 0, vals.len(), |i| vals[i], simd);
            if k <= 32 {
                let low: Vec<u32> = vals.iter().map(|&v| v as u32).collect();
                assert_eq!(BitVec::planes_from_u32_with(&low, k, simd), planes, "u32 path, n {n} k {k} simd {simd}");
                // Into the piece at word 1 of longer planes, the word before it untouched.
                let mut longer: Vec<_> = (0..k).map(|_| BitVec::ones(vals.len() + 64)).collect();
                BitVec::planes_into_u32(&mut longer, 64, &low).unwrap();
                for (l, p) in longer.iter().zip(&planes) {
                    assert_eq!(&l.slice(64, p.len()).unwrap(), p, "into a piece, n {n} k {k}");
                    assert_eq!(l.slice(0, 64).unwrap().count_ones(), 64, "before the piece");
                }
            }
            for (j, p) in planes.iter().enumerate() {
                assert_eq!(BitVec::from_bytes(&p.to_bytes(), p.len()).as_ref(), Ok(p), "padding bits stay zero");
                for (t, &v) in vals.iter().enumerate() {
                    assert_eq!(p.get(t), (v >> j) & 1 == 1, "n {n} k {k} bit {j} value {t} simd {simd}");
                }
            }
        }
    }

    #[test]
    fn errors() {
        let a = BitVec::zeros(10);
        assert_eq!(a.xor(&BitVec::zeros(11)), Err(MathError::LengthMismatch { left: 10, right: 11 }));
        assert!(BitVec::from_bytes(&[0xff, 0xff], 10).is_err());
        assert!(a.slice(5, 6).is_err());
        assert_eq!(BitVec::ones(70).count_ones(), 70);
        assert!(BitVec::planes_from_u32(&[1, 2], 33).is_err());
    }
}
