//! The byte form of one party's share of a template, for the wire (client to node) and the store
//! (node to disk), and the validation of such bytes when they come back.
//!
//! ```text
//! offset  size  field
//!  0      1     format version (FORMAT_VERSION = 1)
//!  1      1     scheme tag: the scheme's in the registry (schemes::Scheme::tag); a retired one
//!               (schemes::RETIRED_TAGS) is refused by name
//!  2      4     rows per eye (u32 LE): 1 for an enrolment, the number of rotations for a query
//!               (which carries its unrotated row alone: the nodes make the rotations)
//!  6      4     unrotated: index of the rotation-0 row (u32 LE)
//! 10      4     code values per row (u32 LE): the code length in bits
//! 14      4     mask values per row (u32 LE): = code length, or half of it for trimmed masks
//! 18      ...   body: left eye, then right eye
//! ```
//!
//! Each eye's body holds one row — the unrotated one — with `n` code values and `m` mask values
//! per row, elements packed little-endian at the ring's width ([`Ring::wire_encode`]); a query
//! adds its masked code bits β (`n` values, `c = m − 2β`, for the validity check). The order of
//! the values is the scheme's, in its folder's `codec.rs` ([`schemes`](super::schemes)).
//!
//! Decoding checks, in this order, that the header is whole, the version and scheme tag are
//! this build's, rows and unrotated are the expected [`ShareKind`], the code and mask lengths are
//! those of the geometry and mask mode, the body is exactly as long as they imply, and every
//! value is canonical; the first failure is returned as [`IrisError::BadShare`] saying what was
//! wrong. No input makes it panic, and it allocates no more than the input's size.

use argus_math::{MathError, Ring};

use super::scheme::ShareKind;
use super::schemes::{Scheme, RETIRED_TAGS};
use crate::{IrisError, MaskMode, MAX_BITS};

/// The version byte this build writes and reads.
pub const FORMAT_VERSION: u8 = 1;
/// Bytes of the header before the share values.
pub const HEADER_LEN: usize = 18;

/// The scheme of `tag`, or what a retired tag was, by name.
fn scheme_name(tag: u8) -> Option<&'static str> {
    Scheme::from_tag(tag)
        .map(Scheme::name)
        .or_else(|| RETIRED_TAGS.iter().find(|(t, _)| *t == tag).map(|(_, name)| *name))
}

pub(crate) fn bad(msg: impl Into<String>) -> IrisError {
    IrisError::BadShare(msg.into())
}

pub(crate) fn trailing(n: usize) -> IrisError {
    bad(format!("{n} trailing byte{} after the share", if n == 1 { "" } else { "s" }))
}

/// The shape of a share, as the header states it (or as it is expected).
pub(crate) struct Shape {
    pub(crate) rows: usize,
    pub(crate) unrotated: usize,
    pub(crate) code_len: usize,
    pub(crate) mask_len: usize,
}

fn u32_field(x: usize) -> [u8; 4] {
    // Shapes beyond u32 cannot be built in memory; saturating keeps `encode` total, and such a
    // header fails to decode as a length mismatch.
    u32::try_from(x).unwrap_or(u32::MAX).to_le_bytes()
}

pub(crate) fn write_header(out: &mut Vec<u8>, tag: u8, s: &Shape) {
    out.push(FORMAT_VERSION);
    out.push(tag);
    for x in [s.rows, s.unrotated, s.code_len, s.mask_len] {
        out.extend_from_slice(&u32_field(x));
    }
}

/// Per-row values over the total a share holds (0 for a share without rows).
pub(crate) fn per_row(total: usize, rows: usize) -> usize {
    total.checked_div(rows).unwrap_or(0)
}

/// Mask values per row that codes of `len` bits need under `mode`.
pub(crate) fn mask_len_for(len: usize, mode: MaskMode) -> Result<usize, IrisError> {
    match mode {
        MaskMode::PerBit => Ok(len),
        MaskMode::Trimmed if len.is_multiple_of(2) => Ok(len / 2),
        MaskMode::Trimmed => {
            Err(IrisError::Unsupported(format!("trimmed masks need an even code length, got {len} bits")))
        }
    }
}

/// The shape `expect` asks of codes of `len` bits with `mask_len` mask values per row.
pub(crate) fn expected_shape(expect: ShareKind, len: usize, mask_len: usize) -> Result<Shape, IrisError> {
    let (rows, unrotated) = (expect.rows(), expect.unrotated());
    if rows == 0 || unrotated >= rows {
        return Err(IrisError::Unsupported(format!(
            "a share kind needs at least one row and the unrotated row among them, got {expect:?}"
        )));
    }
    Ok(Shape { rows, unrotated, code_len: len, mask_len })
}

/// Refuses code lengths no geometry has (before any arithmetic on them).
pub(crate) fn check_code_len(len: usize) -> Result<(), IrisError> {
    if len == 0 || len > MAX_BITS {
        return Err(IrisError::Unsupported(format!("codes of {len} bits (a geometry has 1 to 2^32)")));
    }
    Ok(())
}

fn describe(kind: ShareKind) -> &'static str {
    match kind {
        ShareKind::Enrollment => "an enrolment",
        ShareKind::Query { .. } => "a query",
    }
}

/// Checks the header against the scheme `tag`, the expected shape and the body size it implies
/// (`body_len` from the expected shape); returns the body.
pub(crate) fn read_header<'a>(
    bytes: &'a [u8],
    tag: u8,
    expect: ShareKind,
    want: &Shape,
    body_len: Option<usize>,
) -> Result<&'a [u8], IrisError> {
    let Some((head, body)) = bytes.split_first_chunk::<HEADER_LEN>() else {
        return Err(bad(format!("truncated: {} bytes, the header alone takes {HEADER_LEN}", bytes.len())));
    };
    if head[0] != FORMAT_VERSION {
        return Err(bad(format!("format version {}, this build reads version {FORMAT_VERSION}", head[0])));
    }
    let want_name = scheme_name(tag).unwrap_or("?");
    if head[1] != tag {
        return Err(bad(match scheme_name(head[1]) {
            Some(name) => format!("share is for scheme {name}, expected {want_name}"),
            None => format!("unknown scheme tag {}, expected {tag} ({want_name})", head[1]),
        }));
    }
    let field = |k: usize| u32::from_le_bytes([head[2 + 4 * k], head[3 + 4 * k], head[4 + 4 * k], head[5 + 4 * k]]);
    let (rows, unrotated, code_len, mask_len) = (field(0), field(1), field(2), field(3));
    if rows as usize != want.rows {
        let plural = if rows == 1 { "" } else { "s" };
        return Err(bad(format!(
            "share has {rows} row{plural} per eye, expected {} ({})",
            want.rows,
            describe(expect)
        )));
    }
    if unrotated as usize != want.unrotated {
        return Err(bad(format!("share has its unrotated row at {unrotated}, expected {}", want.unrotated)));
    }
    if code_len as usize != want.code_len {
        return Err(bad(format!("share has {code_len} code values per row, expected {}", want.code_len)));
    }
    if mask_len as usize != want.mask_len {
        return Err(bad(format!("share has {mask_len} mask values per row, expected {}", want.mask_len)));
    }
    let body_len = body_len.ok_or_else(|| {
        bad(format!("a share of {} rows of {} values is too large for this machine", want.rows, want.code_len))
    })?;
    match body.len() {
        n if n < body_len => Err(bad(format!("truncated: the share body has {n} bytes, expected {body_len}"))),
        n if n > body_len => Err(trailing(n - body_len)),
        _ => Ok(body),
    }
}

/// Bytes `n` elements of `ring` take on the wire, or `None` on overflow.
pub(crate) fn wire_size<R: Ring>(ring: &R, n: usize) -> Option<usize> {
    if ring.bits().is_multiple_of(8) {
        n.checked_mul(ring.byte_len())
    } else {
        Some(n.checked_mul(ring.bits() as usize)?.div_ceil(8))
    }
}

/// Reads from the front of a body whose length has been checked.
pub(crate) struct Reader<'a> {
    pub(crate) rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], IrisError> {
        let Some((head, rest)) = self.rest.split_at_checked(n) else {
            return Err(bad(format!("truncated in {what}")));
        };
        self.rest = rest;
        Ok(head)
    }
    /// `n` elements of `ring`, canonical.
    pub(crate) fn elems<R: Ring>(&mut self, ring: &R, n: usize, what: &str) -> Result<Vec<R::El>, IrisError> {
        let size = wire_size(ring, n).ok_or_else(|| bad(format!("{what} too large")))?;
        let bytes = self.take(size, what)?;
        ring.wire_decode(bytes, n).map_err(|e| match e {
            MathError::OutOfRange { index, .. } if ring.bits().is_multiple_of(8) => {
                let w = ring.byte_len();
                let mut buf = [0u8; 16];
                if let Some(c) = bytes.get(index * w..(index + 1) * w) {
                    buf[..w].copy_from_slice(c);
                }
                bad(format!(
                    "{what}: value {} at index {index} is not an element of {ring:?}",
                    u128::from_le_bytes(buf)
                ))
            }
            e => bad(format!("{what}: {e}")),
        })
    }
    pub(crate) fn finish(self) -> Result<(), IrisError> {
        match self.rest.len() {
            0 => Ok(()),
            n => Err(trailing(n)),
        }
    }
}

pub(crate) const EYES: [&str; 2] = ["left", "right"];

/// Values per eye of a share's one row on the wire: code, mask, and for a query its masked code
/// bits (as many as code values).
pub(crate) fn eye_values(expect: ShareKind, len: usize, mask_len: usize) -> Option<usize> {
    let bits = if matches!(expect, ShareKind::Query { .. }) { len } else { 0 };
    len.checked_add(mask_len)?.checked_add(bits)
}

/// `[unrotated · width, (unrotated + 1) · width)` for a share of `rows` rows of `total` values.
pub(crate) fn unrotated_range(
    total: usize,
    rows: usize,
    unrotated: usize,
    what: &str,
) -> Result<(usize, usize), IrisError> {
    if rows == 0 || unrotated >= rows {
        return Err(bad(format!("a share of {rows} rows has no unrotated row {unrotated}")));
    }
    if !total.is_multiple_of(rows) {
        return Err(bad(format!("{what} of {total} values do not split into {rows} rows")));
    }
    let width = total / rows;
    Ok((unrotated * width, width))
}
