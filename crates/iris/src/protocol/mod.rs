//! The uniqueness check in MPC (paper 000 Alg. 3 with secret masks, Alg. 2 with public ones): a
//! batch of queries against a shared database and against the batch's earlier queries, in a
//! number of rounds independent of both sizes.
//!
//! * [`schemes`]: the registry of the schemes — each listed once — and one folder per scheme
//!   with the same files: its shares, database and batch check (`mod.rs`, with its
//!   [`IrisScheme`](scheme::IrisScheme) impl), its byte format (`codec.rs`), its share recovery
//!   and database audit (`recovery.rs`), its validity check (`validity.rs`) and its mirrored query
//!   (`mirror.rs`).
//! * [`scheme`]: the one interface over the schemes ([`IrisScheme`](scheme::IrisScheme)) that
//!   the node, the benchmarks and the tests use.
//! * [`compare`](mod@compare): the step every batch check ends with — the comparisons, then OR
//!   over rotations and targets and the one revealed bit per query.
//! * What the schemes' folders share: the codec's header ([`codec`]), the recovery and audit
//!   traits ([`recovery`]), the validity check's combinations ([`validity`]), the mirror's
//!   permutations ([`mirror`]), the kernel planner, and below the helpers every scheme's sharing
//!   uses (mask rows, masked code bits, rotations).

pub mod codec;
pub mod compare;
pub mod mirror;
mod plan;
pub mod recovery;
pub mod scheme;
pub mod schemes;
pub mod validity;

pub use compare::{
    auto_compare_chunk, check_ring, choose_compare_chunk, compare_chunk, comparison_bits, mpclift_msb, reduced_terms,
    Checked, ChunkTimes, Tuning, AUTO_CHUNKS, AUTO_CHUNK_ROUNDS, CHUNK_CANDIDATES, CHUNK_SAMPLE, COMPARE_CHUNK,
    ROUND_PROBES,
};
pub use plan::{choose_kernels, kernel_name, plan_compare_chunk, plan_kernels, ChunkPlan};
pub use schemes::Scheme;

use argus_math::Ring;
use argus_mpc::rep3::Rep3Pre;
use argus_mpc::MpcError;

use crate::matcher::rotations_in;
use crate::{mask_vector, IrisCode, IrisError, IrisGeometry, MaskMode, MatchConfig};

/// Code bits per mask value: 1 per-bit, 2 trimmed (one mask bit per real/imaginary pair).
pub(crate) fn factor_of(mode: MaskMode) -> i128 {
    match mode {
        MaskMode::PerBit => 1,
        MaskMode::Trimmed => 2,
    }
}

/// The mask row a party stores: one bit per code bit, or with [`MaskMode::Trimmed`] one bit per
/// real/imaginary pair (half the storage and half the mask products; then `ml` is twice the
/// product of the trimmed rows).
pub(crate) fn mask_row(c: &IrisCode, mode: MaskMode) -> Vec<u8> {
    match mode {
        MaskMode::PerBit => mask_vector(c),
        MaskMode::Trimmed => c.trim().to_bools().into_iter().map(u8::from).collect(),
    }
}

/// Whether rows of `mask_len` values are trimmed masks for codes of `len` bits, or an error.
pub(crate) fn mask_factor(len: usize, mask_len: usize) -> Result<i128, MpcError> {
    match mask_len {
        m if m == len => Ok(1),
        m if 2 * m == len => Ok(2),
        m => Err(MpcError::InvalidParameter(format!("mask rows of {m} values for codes of {len} bits"))),
    }
}

/// The masked code bits `β = code ∧ mask` of a code (mask mode applied), one per code bit: its
/// masked-bitvector value is `m − 2β` ([`encode_masked`](crate::encode_masked)), and a client shares β with a query
/// so that the nodes can check the values without an MSB ([`validity`]).
pub(crate) fn masked_bits(c: &IrisCode) -> Vec<u8> {
    let (code, mask) = (c.code().words(), c.mask().words());
    (0..c.geometry().bits()).map(|i| ((code[i / 64] & mask[i / 64]) >> (i % 64)) as u8 & 1).collect()
}

/// The `rows` rotations of one row of values in the geometry's order (`[row][col][cell]`, `cell
/// = row.len() / (g.rows · g.cols)` values: code bits, or trimmed mask values), one after the
/// other: rotation index `k` moves column `col` to `col + k − unrotated` (mod `g.cols`), as
/// [`IrisCode::rotate`] does, so the rows are those of the window [`query_window`] lists.
pub(crate) fn rotated_rows<T: Copy>(row: &[T], g: IrisGeometry, rows: usize, unrotated: usize) -> Vec<T> {
    let cells = g.rows * g.cols;
    let cell = row.len() / cells.max(1);
    let mut out = Vec::with_capacity(rows * row.len());
    for k in 0..rows {
        let shift = g.rotated_col(0, k as i32 - unrotated as i32);
        for r in 0..g.rows {
            for col in 0..g.cols {
                // The value at `col` after the rotation came from `col − shift`.
                let from = (col + g.cols - shift) % g.cols;
                out.extend_from_slice(&row[(r * g.cols + from) * cell..][..cell]);
            }
        }
    }
    out
}

/// The rotations a query holds for codes with `cols` angular columns (the window of `cfg`, or every
/// column when the window covers them all), and the position of rotation 0 among them.
pub(crate) fn query_window(cfg: &MatchConfig, cols: usize) -> Result<(Vec<i32>, usize), IrisError> {
    let window = rotations_in(&cfg.rotations, cols);
    let unrotated = window
        .iter()
        .position(|&r| r == 0)
        .ok_or_else(|| IrisError::Unsupported("the rotation window must contain 0 (the unrotated code)".into()))?;
    Ok((window, unrotated))
}

/// Removes elements `[index·width, (index + 1)·width)` of a pre-processed vector of `count` rows
/// in place, keeping the order of the others.
pub(crate) fn drain_row<R: Ring>(v: &mut Rep3Pre<R>, index: usize, count: usize) {
    let width = v.len() / count;
    let range = index * width..(index + 1) * width;
    v.sum.drain(range.clone());
    v.b.drain(range);
}

/// The error for removing entry `index` of a database of `count`.
pub(crate) fn no_entry(index: usize, count: usize) -> MpcError {
    MpcError::InvalidParameter(format!("no database entry {index}: the database holds {count}"))
}
