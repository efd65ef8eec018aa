//! AMX level: the 16-bit matrix products (mod 2^16 and in F_65519) on the AMX-INT8 tile unit;
//! everything else as AVX-512 VNNI.
//!
//! A 16-bit product is three or four 8-bit ones (the decomposition paper 000 §6.1 uses for GPU
//! int8 GEMMs), with `lo`/`hi` the low and high bytes:
//!
//! ```text
//! a·b mod 2^16 = lo(a)·lo(b) + 2^8·(lo(a)·hi(b) + hi(a)·lo(b))      (the 2^16·hi·hi term vanishes)
//! a·b mod p    = (lo·lo + 2^8·(lo·hi + hi·lo) + 2^16·hi·hi) mod p   (canonical a, b < p)
//! ```
//!
//! `tdpbuud` sums u8×u8 products into i32 lanes that wrap mod 2^32: the ring's sums are exact
//! mod 2^16 for any length, the field's are exact integers up to 66 051 terms (longer vectors
//! go to the VNNI kernel). Per 16×16 output tile the ring keeps two accumulators (`lo·lo`, the
//! cross term) and works on query tiles in pairs, the field keeps four and works on one.
//!
//! Operands: database rows are the tiles' "A" operand (16 rows × 64 bytes of K), which only
//! needs each row split into a low-byte and a high-byte row; queries are the "B" operand, packed
//! in the VNNI layout (packed row r holds, for each of 16 queries, the low bytes of elements
//! 4r..4r+3, then the high bytes; a tile is 16 consecutive packed rows at a stride of 128
//! bytes). Query tiles whose rows are the same offsets shifted by a multiple of 4 elements share
//! one packed stream ([`QueryStreams`]): the iris rotations, ordered rotation-major, are windows
//! of each query's extended row, so a batch of 16 queries packs 14 720 elements per query
//! instead of 31 × 12 800, and the packed block (~0.5 MB) stays in L2 for every database block.
//! Results come out database-row-major per tile and are transposed as they are written. K and
//! both row counts are zero-padded to whole tiles (past a row's end, a query tile may hold
//! other data: it meets the database's zero padding).
//!
//! Loop nest, outer to inner:
//!
//! ```text
//! query block (≤ MQ queries)          packed lo/hi streams, whole K
//!   database block (ND rows)          accumulator tiles of block × query block in scratch (L2)
//!     K-block (KC elements)           the block's rows split into lo/hi, ND × KC × 2 bytes (L2);
//!                                     the next K-block's rows prefetched into L2 meanwhile
//!       query tile group              its chunks stay in L1
//!         database tile (16 rows)     4 accumulator tiles loaded (zeroed in the first K-block),
//!                                     KC/64 steps of 6 (field: 4) `tdpbuud`, stored (tile
//!                                     registers: 4 accumulators, D lo/hi, Q lo/hi; the D tiles
//!                                     loaded with the L1-bypassing hint `tileloaddt1`)
//!   accumulators combined → out
//! ```
//!
//! The shared streams, `ND` and `KC` were chosen by timing the service's shape (496 rotation
//! rows × 4000 × 12 800, one core): without the streams the packed queries (12.7 MB) were
//! re-read from memory for every database block; figures in docs/BENCHMARKS.md (Table 1).
//!
//! Linux only hands out the tile data state on request (`arch_prctl(ARCH_REQ_XCOMP_PERM)`), so
//! detection asks for it once per process; a refusal leaves the level unavailable.

use std::arch::asm;

use super::avx512::{Zmm16, Zmm32, Zmm64};
use super::dispatch::{impl_simd_kernels, level_token};
use super::f65519::P65519;
use super::gemm::{aligned_scratch, Blocking};
use super::isa::Isa;

/// Bytes of K per tile row, and elements of K per tile step.
pub(super) const STEP: usize = 64;
/// Bytes of one 16 × 64-byte tile.
pub(super) const TILE: usize = 1024;
/// Queries per block (a multiple of 32: query tiles are processed in pairs).
const MQ: usize = 1024;
/// Database rows per block (a multiple of 16).
const ND: usize = 64;
/// Elements of K per block (a multiple of STEP).
const KC: usize = 640;

/// Whether the CPU has AMX-TILE and AMX-INT8, the OS enabled their state (XCR0 bits 17, 18)
/// and granted this process the tile data (Linux `arch_prctl`). Asked once.
pub(crate) fn usable() -> bool {
    use std::sync::OnceLock;
    static USABLE: OnceLock<bool> = OnceLock::new();
    *USABLE.get_or_init(probe)
}

#[cfg(target_os = "linux")]
fn probe() -> bool {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    // CPUID.1:ECX.OSXSAVE[27] first: xgetbv faults without it.
    if __cpuid(1).ecx & (1 << 27) == 0 {
        return false;
    }
    let ext = __cpuid_count(7, 0);
    if ext.edx & (1 << 24) == 0 || ext.edx & (1 << 25) == 0 {
        return false;
    }
    let xcr0: u64;
    // SAFETY: OSXSAVE is set, so xgetbv with ECX = 0 is defined; it only reads XCR0.
    unsafe {
        let (lo, hi): (u32, u32);
        asm!("xgetbv", in("ecx") 0u32, out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags));
        xcr0 = (u64::from(hi) << 32) | u64::from(lo);
    }
    if xcr0 & (0b11 << 17) != 0b11 << 17 {
        return false;
    }
    const SYS_ARCH_PRCTL: i64 = 158;
    const ARCH_REQ_XCOMP_PERM: i64 = 0x1023;
    const XFEATURE_XTILEDATA: i64 = 18;
    let ret: i64;
    // SAFETY: arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA) only changes which extended states
    // this process may use; the syscall clobbers rcx and r11 and touches no memory of ours.
    unsafe {
        asm!("syscall", inlateout("rax") SYS_ARCH_PRCTL => ret, in("rdi") ARCH_REQ_XCOMP_PERM,
             in("rsi") XFEATURE_XTILEDATA, lateout("rcx") _, lateout("r11") _, options(nostack));
    }
    ret == 0
}

#[cfg(not(target_os = "linux"))]
fn probe() -> bool {
    false
}

level_token!(Amx, Isa::Amx);

impl_simd_kernels! {
    token: Amx,
    isa: Isa::Amx,
    features: "avx512f,avx512bw,avx512dq,avx512vl,avx512vnni",
    v16: Zmm16<true>,
    v32: Zmm32,
    v64: Zmm64,
    tile: (4, 6),
    ring: Blocking { mc: 256, kc: 2048, nc: 96 },
    field: Blocking { mc: 64, kc: 1024, nc: 96 },
    gemm_u16: gemm_u16_amx,
    gemm_f65519: gemm_f65519_amx,
}

/// The tile configuration: palette 1, eight tiles of 16 rows × 64 bytes.
#[repr(C, align(64))]
pub(super) struct TileConfig {
    palette: u8,
    start_row: u8,
    reserved: [u8; 14],
    colsb: [u16; 16],
    rows: [u8; 16],
}

pub(super) const CONFIG: TileConfig = {
    let mut c = TileConfig { palette: 1, start_row: 0, reserved: [0; 14], colsb: [0; 16], rows: [0; 16] };
    let mut t = 0;
    while t < 8 {
        c.colsb[t] = 64;
        c.rows[t] = 16;
        t += 1;
    }
    c
};

/// Where the query tiles of one block are packed: tiles whose 16 rows start at the same offsets
/// shifted by one common multiple of 4 elements (the rotations of a batch of queries, when the
/// rows are ordered rotation-major) share one packed stream, and a tile is a window of it.
struct QueryStreams {
    /// Per tile: byte offset of its first K step in the packed buffer.
    tile_at: Vec<usize>,
    /// Per stream: its 16 row starts (`None`: no row, packed as zeros), the element offset of
    /// its first packed row relative to them, its packed rows and byte offset.
    streams: Vec<([Option<usize>; 16], isize, usize, usize)>,
    /// Bytes of the packed buffer.
    bytes: usize,
}

impl QueryStreams {
    /// Groups the tiles of `rows` (16 consecutive rows each) into streams. A tile joins a stream
    /// only if that makes the stream no longer than packing the tile apart would.
    fn plan(rows: &[usize], len: usize, steps: usize) -> Self {
        struct Open {
            base: [Option<usize>; 16],
            min: isize,
            max: isize,
            members: usize,
        }
        let mut open: Vec<Open> = Vec::new();
        let mut tiles = Vec::with_capacity(rows.len().div_ceil(16));
        for t in rows.chunks(16) {
            let starts: [Option<usize>; 16] = std::array::from_fn(|c| t.get(c).copied());
            let joins = open.iter().enumerate().find_map(|(f, o)| {
                let first = starts[0]? as isize - o.base[0]? as isize;
                let same = starts.iter().zip(&o.base).all(|(s, b)| match (s, b) {
                    (Some(s), Some(b)) => *s as isize - *b as isize == first,
                    (None, None) => true,
                    _ => false,
                });
                let span = o.max.max(first) - o.min.min(first) + len as isize;
                (same && first % 4 == 0 && span <= (o.members as isize + 1) * len as isize).then_some((f, first))
            });
            let (f, delta) = joins.unwrap_or_else(|| {
                open.push(Open { base: starts, min: 0, max: 0, members: 0 });
                (open.len() - 1, 0)
            });
            let o = &mut open[f];
            (o.min, o.max, o.members) = (o.min.min(delta), o.max.max(delta), o.members + 1);
            tiles.push((f, delta));
        }
        let mut bytes = 0;
        let streams: Vec<_> = open
            .iter()
            .map(|o| {
                // A tile's K steps read 16 rows each from (delta − min) / 4 on.
                let packed = ((o.max - o.min) / 4) as usize + 16 * steps;
                let at = bytes;
                bytes += packed * 2 * STEP;
                (o.base, o.min, packed, at)
            })
            .collect();
        let tile_at = tiles
            .iter()
            .map(|&(f, delta)| {
                let (_, min, _, at) = streams[f];
                at + ((delta - min) / 4) as usize * 2 * STEP
            })
            .collect();
        QueryStreams { tile_at, streams, bytes }
    }

    /// Packs every stream into `dst` in the VNNI layout: packed row `r` of a stream is 128
    /// bytes, for each of its 16 rows (columns) the low bytes of 4 consecutive elements, then
    /// the same for the high bytes; elements past the end of `a` are zero. (Elements past a
    /// row's own `len` are packed too: they meet the database's zero padding.)
    fn pack(&self, a: &[u16], dst: &mut [u8]) {
        for &(base, min, packed, at) in &self.streams {
            for (col, start) in base.iter().enumerate() {
                let Some(start) = *start else {
                    for r in 0..packed {
                        dst[at + r * 2 * STEP + col * 4..][..4].fill(0);
                        dst[at + r * 2 * STEP + STEP + col * 4..][..4].fill(0);
                    }
                    continue;
                };
                // The stream's first element of this column is a row start of the block: ≥ 0.
                let first = (start as isize + min) as usize;
                let src = a.get(first..).unwrap_or(&[]);
                for (block, out) in (0..packed).step_by(16).zip(src.chunks(STEP).chain(std::iter::repeat(&[][..]))) {
                    let (mut lo, mut hi) = ([0u8; STEP], [0u8; STEP]);
                    for ((l, h), &x) in lo.iter_mut().zip(hi.iter_mut()).zip(out) {
                        *l = x as u8;
                        *h = (x >> 8) as u8;
                    }
                    for r in 0..16.min(packed - block) {
                        let row = at + (block + r) * 2 * STEP + col * 4;
                        dst[row..][..4].copy_from_slice(&lo[4 * r..4 * r + 4]);
                        dst[row + STEP..][..4].copy_from_slice(&hi[4 * r..4 * r + 4]);
                    }
                }
            }
        }
    }
}

/// Splits database rows `j0..j0 + 16` of `b` (missing rows zero), elements `k`, into low and
/// high bytes: `lo[r·KC + k]`, `hi[r·KC + k]`, zero-padded to `kp` elements. Returns the largest
/// element split for the field's canonical check (0 for the ring, which has none).
#[inline(always)]
fn split_rows<const FIELD: bool>(
    b: &[u16],
    len: usize,
    j0: usize,
    k: std::ops::Range<usize>,
    kp: usize,
    lo: &mut [u8],
    hi: &mut [u8],
) -> u16 {
    let rows_b = b.len() / len;
    let kn = k.len();
    let mut max = 0;
    for r in 0..16 {
        let (l, h) = (&mut lo[r * KC..][..kp], &mut hi[r * KC..][..kp]);
        let j = j0 + r;
        if j >= rows_b {
            l.fill(0);
            h.fill(0);
            continue;
        }
        for ((dl, dh), &x) in l.iter_mut().zip(h.iter_mut()).zip(&b[j * len..][k.clone()]) {
            *dl = x as u8;
            *dh = (x >> 8) as u8;
            if FIELD {
                max = max.max(x);
            }
        }
        l[kn..].fill(0);
        h[kn..].fill(0);
    }
    max
}

/// Asks for every cache line of `v` in L2 (a hint: no effect on results).
#[inline(always)]
fn prefetch_l2(v: &[u16]) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
    for line in v.chunks(32) {
        // SAFETY: a prefetch of an address inside `v` reads nothing architecturally.
        unsafe { _mm_prefetch::<_MM_HINT_T1>(line.as_ptr().cast()) };
    }
}

/// Loads the four accumulator tiles tmm0–tmm3 from `acc` (consecutive tiles), or zeroes them.
///
/// # Safety
/// Tiles configured by [`CONFIG`] on this thread; 4 tiles readable at `acc` unless `fresh`.
#[inline(always)]
unsafe fn tiles_in(acc: *const u8, fresh: bool) {
    // SAFETY: the caller guarantees the configuration and the extent read.
    unsafe {
        if fresh {
            asm!("tilezero tmm0", "tilezero tmm1", "tilezero tmm2", "tilezero tmm3", options(nomem, nostack));
        } else {
            asm!(
                "tileloadd tmm0, [{acc} + {s}*1]",
                "tileloadd tmm1, [{acc} + {s}*1 + 1024]",
                "tileloadd tmm2, [{acc} + {s}*1 + 2048]",
                "tileloadd tmm3, [{acc} + {s}*1 + 3072]",
                acc = in(reg) acc, s = in(reg) 64usize, options(readonly, nostack),
            );
        }
    }
}

/// Stores the accumulator tiles tmm0–tmm3 to `acc`.
///
/// # Safety
/// Tiles configured by [`CONFIG`] on this thread; 4 tiles writable at `acc`.
#[inline(always)]
unsafe fn tiles_out(acc: *mut u8) {
    // SAFETY: the caller guarantees the configuration and the extent written.
    unsafe {
        asm!(
            "tilestored [{acc} + {s}*1], tmm0",
            "tilestored [{acc} + {s}*1 + 1024], tmm1",
            "tilestored [{acc} + {s}*1 + 2048], tmm2",
            "tilestored [{acc} + {s}*1 + 3072], tmm3",
            acc = in(reg) acc, s = in(reg) 64usize, options(nostack),
        );
    }
}

/// `steps` K steps of one database tile (`d_lo`, `d_hi`: 16 rows, row stride `KC`) against a
/// pair of query tiles (`q0`, `q1`: consecutive lo/hi tiles per step), accumulating into the
/// four tiles at `acc` (lo·lo and cross for query tile 0, then for 1), which are loaded first
/// (or zeroed if `fresh`) and stored after.
///
/// # Safety
/// AMX tiles configured by [`CONFIG`] on this thread; `acc` has 4 tiles, `d_lo`/`d_hi` 16 rows
/// of `steps·64` bytes at stride `KC`, `q0`/`q1` `steps` lo/hi tile pairs.
#[inline(always)]
unsafe fn tile_pair(
    acc: *mut u8,
    fresh: bool,
    d_lo: *const u8,
    d_hi: *const u8,
    q0: *const u8,
    q1: *const u8,
    steps: usize,
) {
    // SAFETY (all blocks): the caller guarantees the configuration and the extents read and
    // written; the tile registers are used by nothing else in this program.
    unsafe {
        tiles_in(acc, fresh);
        asm!(
            "2:",
            "tileloaddt1 tmm4, [{dl} + {ds}*1]",
            "tileloaddt1 tmm5, [{dh} + {ds}*1]",
            "tileloadd tmm6, [{q0} + {s}*1]",
            "tileloadd tmm7, [{q0} + {s}*1 + 64]",
            "tdpbuud tmm0, tmm4, tmm6",
            "tdpbuud tmm1, tmm4, tmm7",
            "tdpbuud tmm1, tmm5, tmm6",
            "tileloadd tmm6, [{q1} + {s}*1]",
            "tileloadd tmm7, [{q1} + {s}*1 + 64]",
            "tdpbuud tmm2, tmm4, tmm6",
            "tdpbuud tmm3, tmm4, tmm7",
            "tdpbuud tmm3, tmm5, tmm6",
            "add {dl}, 64",
            "add {dh}, 64",
            "add {q0}, 2048",
            "add {q1}, 2048",
            "dec {n}",
            "jnz 2b",
            dl = inout(reg) d_lo => _, dh = inout(reg) d_hi => _,
            q0 = inout(reg) q0 => _, q1 = inout(reg) q1 => _,
            n = inout(reg) steps => _,
            ds = in(reg) KC, s = in(reg) 2 * STEP,
            options(readonly, nostack),
        );
        tiles_out(acc);
    }
}

/// The field's counterpart of [`tile_pair`]: `steps` K steps of one database tile against one
/// query tile (`q`), four accumulators at `acc`: lo·lo, lo·hi, hi·lo, hi·hi (the two cross
/// terms apart, so that no accumulator is updated twice in a row).
///
/// # Safety
/// As for [`tile_pair`], with one query tile.
#[inline(always)]
unsafe fn tile_field(acc: *mut u8, fresh: bool, d_lo: *const u8, d_hi: *const u8, q: *const u8, steps: usize) {
    // SAFETY (all blocks): as in `tile_pair`.
    unsafe {
        tiles_in(acc, fresh);
        asm!(
            "2:",
            "tileloadd tmm4, [{dl} + {ds}*1]",
            "tileloadd tmm6, [{q} + {s}*1]",
            "tdpbuud tmm0, tmm4, tmm6",
            "tileloadd tmm7, [{q} + {s}*1 + 64]",
            "tdpbuud tmm1, tmm4, tmm7",
            "tileloadd tmm5, [{dh} + {ds}*1]",
            "tdpbuud tmm2, tmm5, tmm6",
            "tdpbuud tmm3, tmm5, tmm7",
            "add {dl}, 64",
            "add {dh}, 64",
            "add {q}, 2048",
            "dec {n}",
            "jnz 2b",
            dl = inout(reg) d_lo => _, dh = inout(reg) d_hi => _,
            q = inout(reg) q => _, n = inout(reg) steps => _,
            ds = in(reg) KC, s = in(reg) 2 * STEP,
            options(readonly, nostack),
        );
        tiles_out(acc);
    }
}

/// Wrapping matrix product mod 2^16 on the tile unit, with the contract of
/// `gemm::gemm_ring`: `out[i·rows_b + j] = Σ_k a[a_rows[i] + k]·b[j·len + k]`.
///
/// # Safety
/// [`usable`] must be true (the token guarantees it) and the CPU must have AVX-512 BW (part of
/// the level) for the byte splitting the compiler vectorises.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn gemm_u16_amx(a: &[u16], a_rows: &[usize], b: &[u16], len: usize, out: &mut [u16]) {
    // SAFETY: forwarded contract.
    unsafe { gemm_amx::<false>(a, a_rows, b, len, out) };
}

/// Longest vector the field product takes on the tile unit: each of its four byte-product sums
/// must stay below 2^32 (255² · 66 051 < 2^32); longer ones go to the VNNI kernel.
const FIELD_LEN_MAX: usize = 66_051;

/// Matrix product in F_65519 on the tile unit, with the contract of `Kernels::gemm_f65519`
/// (returns `false`, with unspecified canonical `out`, if an input is ≥ p).
///
/// # Safety
/// As for [`gemm_u16_amx`]; the level includes AVX-512 VNNI for long vectors.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn gemm_f65519_amx(a: &[u16], b: &[u16], len: usize, out: &mut [u16]) -> bool {
    use super::dispatch::Kernels;
    if len > FIELD_LEN_MAX {
        return match super::avx512::Avx512Vnni::get() {
            Some(k) => k.gemm_f65519(a, b, len, out),
            None => unreachable!("the AMX level includes AVX-512 VNNI"),
        };
    }
    let a_rows: Vec<usize> = (0..a.len() / len).map(|i| i * len).collect();
    // SAFETY: forwarded contract.
    let max = unsafe { gemm_amx::<true>(a, &a_rows, b, len, out) };
    max < P65519
}

/// One output tile from its accumulator tiles (`acc`: the ring's lo·lo and cross term, or the
/// field's lo·lo, lo·hi, hi·lo, hi·hi; `[database row][query]` i32 lanes), as
/// `[database row][query]` (written to `out` transposed by the caller). Row by row, so that the
/// compiler vectorises it.
#[inline(always)]
fn combine_tile<const FIELD: bool>(acc: &[u8]) -> [[u16; 16]; 16] {
    let word = |at: usize| u32::from_le_bytes([acc[at], acc[at + 1], acc[at + 2], acc[at + 3]]);
    let mut tile = [[0u16; 16]; 16];
    for (r, row) in tile.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            let at = r * 64 + c * 4;
            *v = if FIELD {
                let (lolo, lohi, hilo, hihi) = (word(at), word(at + TILE), word(at + 2 * TILE), word(at + 3 * TILE));
                let sum = u64::from(lolo) + ((u64::from(lohi) + u64::from(hilo)) << 8) + (u64::from(hihi) << 16);
                (sum % u64::from(P65519)) as u16
            } else {
                word(at).wrapping_add(word(at + TILE) << 8) as u16
            };
        }
    }
    tile
}

/// The tile driver (see the module docs). Ring (`FIELD = false`): query tiles in pairs, per
/// output tile lo·lo and the cross term, `out` = lo·lo + 2^8·cross mod 2^16. Field: one query
/// tile at a time with four accumulators, `out` = (lo·lo + 2^8·(lo·hi + hi·lo) + 2^16·hi·hi) mod p
/// (every sum exact: `len` ≤ [`FIELD_LEN_MAX`]). Returns the largest input element seen (for
/// the field's canonical check; `out` is then unspecified but canonical).
///
/// # Safety
/// As for [`gemm_u16_amx`].
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl")]
unsafe fn gemm_amx<const FIELD: bool>(a: &[u16], a_rows: &[usize], b: &[u16], len: usize, out: &mut [u16]) -> u16 {
    let (rows_a, rows_b) = (a_rows.len(), b.len() / len);
    if rows_a == 0 || rows_b == 0 {
        return a.iter().chain(b).copied().max().unwrap_or(0);
    }
    // Query tiles per call of the inner kernel (either way it keeps 4 accumulator tiles).
    let group = if FIELD { 16 } else { 32 };
    let steps = len.div_ceil(STEP);
    let mq = MQ.min(rows_a.div_ceil(32) * 32);
    let (mut acc, a_off) = aligned_scratch::<u8>(ND / 16 * mq / group * 4 * TILE);
    let (mut dsplit, d_off) = aligned_scratch::<u8>(ND / 16 * 2 * 16 * KC);
    let (acc, dsplit) = (&mut acc[a_off..], &mut dsplit[d_off..]);
    let mut max = 0;
    // SAFETY: the token guarantees AMX is usable; the configuration is loaded before any tile
    // instruction and released at the end.
    unsafe { asm!("ldtilecfg [{}]", in(reg) &CONFIG, options(readonly, nostack)) };
    for i0 in (0..rows_a).step_by(mq) {
        let rows = &a_rows[i0..(i0 + mq).min(rows_a)];
        let plan = QueryStreams::plan(rows, len, steps);
        let (mut qpack, q_off) = aligned_scratch::<u8>(plan.bytes);
        let qpack = &mut qpack[q_off..];
        plan.pack(a, qpack);
        if FIELD {
            // The canonical check (the ring ignores it).
            max = rows.iter().fold(max, |m, &s| m.max(a[s..s + len].iter().copied().max().unwrap_or(0)));
        }
        let groups = rows.len().div_ceil(group);
        for j0 in (0..rows_b).step_by(ND) {
            let tiles = (rows_b - j0).min(ND).div_ceil(16);
            for (kb, k0) in (0..len).step_by(KC).enumerate() {
                let kn = KC.min(len - k0);
                let ks = kn.div_ceil(STEP);
                for (dt, d) in dsplit.chunks_exact_mut(2 * 16 * KC).take(tiles).enumerate() {
                    let (lo, hi) = d.split_at_mut(16 * KC);
                    max = max.max(split_rows::<FIELD>(b, len, j0 + 16 * dt, k0..k0 + kn, ks * STEP, lo, hi));
                }
                // The database rows of the next K-block (or of the next block's first) are read
                // from memory while the tile unit works on this one: a share of their lines is
                // prefetched into L2 before each inner kernel call.
                let next = if k0 + KC < len {
                    (j0..(j0 + ND).min(rows_b), k0 + KC..(k0 + 2 * KC).min(len))
                } else {
                    (j0 + ND..(j0 + 2 * ND).min(rows_b), 0..KC.min(len))
                };
                let per_call = next.0.len().div_ceil(groups * tiles).max(1);
                let mut next_rows = next.0.clone();
                // Query groups outer: a group's packed rows for this K-block (KC/4 + 16 rows of
                // 128 bytes when its two tiles are neighbouring windows) stay in L1 while the
                // block's database tiles stream from L2.
                for g in 0..groups {
                    // The group's query tiles at this K-block (a missing second tile of the
                    // ring's pair repeats the first: its accumulators are never read).
                    let tile = g * group / 16;
                    let q0 = plan.tile_at[tile] + k0 / STEP * 2 * TILE;
                    let q1 = plan.tile_at.get(tile + 1).map_or(q0, |at| at + k0 / STEP * 2 * TILE);
                    for dt in 0..tiles {
                        for j in next_rows.by_ref().take(per_call) {
                            prefetch_l2(&b[j * len..][next.1.clone()]);
                        }
                        let acc_at = (dt * groups + g) * 4 * TILE;
                        let d_at = dt * 2 * 16 * KC;
                        // SAFETY: configured above; the offsets stay inside the buffers (a
                        // tile's steps k0/64 .. + ks ≤ steps read packed rows inside its
                        // stream, accumulator group < ND/16 · mq/group, split tile dt < ND/16).
                        unsafe {
                            let (q, d, acc) = (qpack.as_ptr(), dsplit.as_ptr().add(d_at), acc.as_mut_ptr().add(acc_at));
                            if FIELD {
                                tile_field(acc, kb == 0, d, d.add(16 * KC), q.add(q0), ks);
                            } else {
                                tile_pair(acc, kb == 0, d, d.add(16 * KC), q.add(q0), q.add(q1), ks);
                            }
                        }
                    }
                }
            }
            // Combine the accumulators, transposed into out.
            for dt in 0..tiles {
                let (j, rn) = (j0 + 16 * dt, 16.min(rows_b - (j0 + 16 * dt)));
                for g in 0..groups {
                    for t in 0..group / 16 {
                        let base = (dt * groups + g) * 4 * TILE + t * 2 * TILE;
                        let i_base = i0 + g * group + 16 * t;
                        let cn = 16.min((i0 + rows.len()).saturating_sub(i_base));
                        let tile = combine_tile::<FIELD>(&acc[base..base + (if FIELD { 4 } else { 2 }) * TILE]);
                        for c in 0..cn {
                            let dst = &mut out[(i_base + c) * rows_b + j..][..rn];
                            for (r, d) in dst.iter_mut().enumerate() {
                                *d = tile[r][c];
                            }
                        }
                    }
                }
            }
        }
    }
    // SAFETY: releases this thread's tile state (cheaper context switches).
    unsafe { asm!("tilerelease", options(nomem, nostack)) };
    max
}
