//! The byte form of one party's share of a template, for the wire (client to node) and the store
//! (node to disk), and the validation of such bytes when they come back.
//!
//! ```text
//! offset  size  field
//!  0      1     format version (FORMAT_VERSION = 1)
//!  1      1     scheme tag: 1 mpclift-Z16-rep3, 2 nolift-Z32-rep3, 3 mpclift-F16-shamir, 4 plain-mask-Z16-rep3,
//!               6 mpclift-GR16-shamir (5: its retired row-major layout, refused)
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
//! adds its masked code bits β (`n` values, `c = m − 2β`, for the validity check):
//! * rep3 (Z_2^16, Z_2^32): code `a` (`n`), code `b` (`n`), mask `a` (`m`), mask `b` (`m`) — the two
//!   components `(x_i, x_{i-1})` a party holds — then for a query β `a` and `b` (`n` each);
//! * Shamir F_65519: code shares (`n` × 2 B), mask shares (`m` × 2 B), for a query β (`n` × 2 B),
//!   each value `< 65519`;
//! * Shamir GR(2^16, 4), values column-major (`galois::column_major`): the row shared
//!   monomially — code (`n` × 2 B), mask (`m` × 2 B) — then, for a query only, β monomially
//!   (`n` × 2 B) and the row shared in the query basis, code then mask; every u16 is a valid
//!   coefficient;
//! * public masks: code `a` (`n` × 2 B), code `b` (`n` × 2 B), the mask in `ceil(n / 8)` bytes
//!   (bit `k` of the row is bit `k % 8` of byte `k / 8`, padding bits zero), then for a query β
//!   `a` and `b` (`n` × 2 B each).
//!
//! Decoding checks, in this order, that the header is whole, the version and scheme tag are
//! this build's, rows and unrotated are the expected [`ShareKind`], the code and mask lengths are
//! those of the geometry and mask mode, the body is exactly as long as they imply, and every
//! value is canonical; the first failure is returned as [`IrisError::BadShare`] saying what was
//! wrong. No input makes it panic, and it allocates no more than the input's size.

use argus_math::{BitVec, MathError, Ring, F65519};
use argus_mpc::rep3::Rep3;
use argus_mpc::shamir::{Degree, Shamir};

use super::field::{FieldEyeShare, FieldTemplateShare};
use super::galois::{GrEyeShare, GrTemplateShare};
use super::plain_mask::PlainMaskShare;
use super::scheme::{IrisScheme, MpcLiftF16, MpcLiftGr16, MpcLiftZ16, NoLiftZ32, PlainMaskZ16, ShareKind};
use super::{EyeShare, TemplateShare};
use crate::{IrisError, MaskMode, MatchConfig, MAX_BITS};

/// The version byte this build writes and reads.
pub const FORMAT_VERSION: u8 = 1;
/// Bytes of the header before the share values.
pub const HEADER_LEN: usize = 18;

/// Scheme tag of [`MpcLiftZ16`].
pub const TAG_MPCLIFT_Z16: u8 = 1;
/// Scheme tag of [`NoLiftZ32`].
pub const TAG_NOLIFT_Z32: u8 = 2;
/// Scheme tag of [`MpcLiftF16`].
pub const TAG_MPCLIFT_F16: u8 = 3;
/// Scheme tag of [`PlainMaskZ16`].
pub const TAG_PLAIN_MASK_Z16: u8 = 4;
/// Scheme tag of [`MpcLiftGr16`].
pub const TAG_MPCLIFT_GR16: u8 = 6;
/// The tag of [`MpcLiftGr16`]'s first layout (row-major shares, rotations made by the client):
/// recognised only to refuse such shares by name.
pub const TAG_RETIRED_GR16_ROW_MAJOR: u8 = 5;

fn scheme_name(tag: u8) -> Option<&'static str> {
    match tag {
        TAG_MPCLIFT_Z16 => Some(MpcLiftZ16.name()),
        TAG_NOLIFT_Z32 => Some(NoLiftZ32.name()),
        TAG_MPCLIFT_F16 => Some(MpcLiftF16.name()),
        TAG_PLAIN_MASK_Z16 => Some(PlainMaskZ16.name()),
        TAG_MPCLIFT_GR16 => Some(MpcLiftGr16.name()),
        TAG_RETIRED_GR16_ROW_MAJOR => Some("mpclift-GR16-shamir in its retired row-major layout (share again)"),
        _ => None,
    }
}

fn bad(msg: impl Into<String>) -> IrisError {
    IrisError::BadShare(msg.into())
}

fn trailing(n: usize) -> IrisError {
    bad(format!("{n} trailing byte{} after the share", if n == 1 { "" } else { "s" }))
}

/// The shape of a share, as the header states it (or as it is expected).
struct Shape {
    rows: usize,
    unrotated: usize,
    code_len: usize,
    mask_len: usize,
}

fn u32_field(x: usize) -> [u8; 4] {
    // Shapes beyond u32 cannot be built in memory; saturating keeps `encode` total, and such a
    // header fails to decode as a length mismatch.
    u32::try_from(x).unwrap_or(u32::MAX).to_le_bytes()
}

fn write_header(out: &mut Vec<u8>, tag: u8, s: &Shape) {
    out.push(FORMAT_VERSION);
    out.push(tag);
    for x in [s.rows, s.unrotated, s.code_len, s.mask_len] {
        out.extend_from_slice(&u32_field(x));
    }
}

/// Per-row values over the total a share holds (0 for a share without rows).
fn per_row(total: usize, rows: usize) -> usize {
    total.checked_div(rows).unwrap_or(0)
}

/// Mask values per row that codes of `len` bits need under `mode`.
fn mask_len_for(len: usize, mode: MaskMode) -> Result<usize, IrisError> {
    match mode {
        MaskMode::PerBit => Ok(len),
        MaskMode::Trimmed if len.is_multiple_of(2) => Ok(len / 2),
        MaskMode::Trimmed => {
            Err(IrisError::Unsupported(format!("trimmed masks need an even code length, got {len} bits")))
        }
    }
}

/// The shape `expect` asks of codes of `len` bits with `mask_len` mask values per row.
fn expected_shape(expect: ShareKind, len: usize, mask_len: usize) -> Result<Shape, IrisError> {
    let (rows, unrotated) = (expect.rows(), expect.unrotated());
    if rows == 0 || unrotated >= rows {
        return Err(IrisError::Unsupported(format!(
            "a share kind needs at least one row and the unrotated row among them, got {expect:?}"
        )));
    }
    Ok(Shape { rows, unrotated, code_len: len, mask_len })
}

/// Refuses code lengths no geometry has (before any arithmetic on them).
fn check_code_len(len: usize) -> Result<(), IrisError> {
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
fn read_header<'a>(
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
fn wire_size<R: Ring>(ring: &R, n: usize) -> Option<usize> {
    if ring.bits().is_multiple_of(8) {
        n.checked_mul(ring.byte_len())
    } else {
        Some(n.checked_mul(ring.bits() as usize)?.div_ceil(8))
    }
}

/// Reads from the front of a body whose length has been checked.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], IrisError> {
        let Some((head, rest)) = self.rest.split_at_checked(n) else {
            return Err(bad(format!("truncated in {what}")));
        };
        self.rest = rest;
        Ok(head)
    }
    /// `n` elements of `ring`, canonical.
    fn elems<R: Ring>(&mut self, ring: &R, n: usize, what: &str) -> Result<Vec<R::El>, IrisError> {
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
    fn finish(self) -> Result<(), IrisError> {
        match self.rest.len() {
            0 => Ok(()),
            n => Err(trailing(n)),
        }
    }
}

const EYES: [&str; 2] = ["left", "right"];

// ---------------------------------------------------------------- rep3 (Z_2^16, Z_2^32)

pub(crate) fn encode_rep3<R: Ring>(tag: u8, s: &TemplateShare<R>) -> Vec<u8> {
    let ring = s.left.code.ring();
    let shape = Shape {
        rows: s.rows,
        unrotated: s.unrotated,
        code_len: per_row(s.left.code.len(), s.rows),
        mask_len: per_row(s.left.mask.len(), s.rows),
    };
    let row = |x: &Rep3<R>, width: usize| x.slice(s.unrotated * width, width).unwrap_or_else(|_| x.clone());
    let mut comps = Vec::new();
    for (e, bits) in [&s.left, &s.right].into_iter().zip([s.bits.first(), s.bits.get(1)]) {
        comps.push(row(&e.code, shape.code_len));
        comps.push(row(&e.mask, shape.mask_len));
        comps.extend(bits.cloned());
    }
    let size = HEADER_LEN + comps.iter().map(|c| 2 * wire_size(ring, c.len()).unwrap_or(0)).sum::<usize>();
    let mut out = Vec::with_capacity(size);
    write_header(&mut out, tag, &shape);
    for c in &comps {
        ring.wire_encode(&c.a, &mut out);
        ring.wire_encode(&c.b, &mut out);
    }
    out
}

/// Values per eye of a share's one row on the wire: code, mask, and for a query its masked code
/// bits (as many as code values).
fn eye_values(expect: ShareKind, len: usize, mask_len: usize) -> Option<usize> {
    let bits = if matches!(expect, ShareKind::Query { .. }) { len } else { 0 };
    len.checked_add(mask_len)?.checked_add(bits)
}

pub(crate) fn decode_rep3<R: Ring>(
    ring: &R,
    tag: u8,
    bytes: &[u8],
    len: usize,
    cfg: &MatchConfig,
    expect: ShareKind,
) -> Result<TemplateShare<R>, IrisError> {
    check_code_len(len)?;
    super::check_ring(ring, len, cfg)?;
    let want = expected_shape(expect, len, mask_len_for(len, cfg.mask_mode)?)?;
    // Two eyes of two components each.
    let body_size = || wire_size(ring, eye_values(expect, len, want.mask_len)?)?.checked_mul(4);
    let body = read_header(bytes, tag, expect, &want, body_size())?;
    let mut r = Reader { rest: body };
    let mut bits = Vec::new();
    let mut eye = |name: &str| -> Result<EyeShare<R>, IrisError> {
        let mut comp = |count: usize, what: &str| -> Result<Rep3<R>, IrisError> {
            let a = r.elems(ring, count, &format!("{name} {what} shares"))?;
            let b = r.elems(ring, count, &format!("{name} {what} shares"))?;
            Rep3::from_parts(ring.clone(), a, b).map_err(|e| bad(e.to_string()))
        };
        let eye = EyeShare { code: comp(len, "code")?, mask: comp(want.mask_len, "mask")? };
        if let ShareKind::Query { .. } = expect {
            bits.push(comp(len, "code bit")?);
        }
        Ok(eye)
    };
    let (left, right) = (eye(EYES[0])?, eye(EYES[1])?);
    r.finish()?;
    let row = TemplateShare { left, right, rows: 1, unrotated: 0, bits: Vec::new() };
    Ok(match expect {
        ShareKind::Enrollment => row,
        ShareKind::Query { geometry, .. } => super::with_rotations(row, geometry, want.rows, want.unrotated, bits),
    })
}

/// `[unrotated · width, (unrotated + 1) · width)` for a share of `rows` rows of `total` values.
fn unrotated_range(total: usize, rows: usize, unrotated: usize, what: &str) -> Result<(usize, usize), IrisError> {
    if rows == 0 || unrotated >= rows {
        return Err(bad(format!("a share of {rows} rows has no unrotated row {unrotated}")));
    }
    if !total.is_multiple_of(rows) {
        return Err(bad(format!("{what} of {total} values do not split into {rows} rows")));
    }
    let width = total / rows;
    Ok((unrotated * width, width))
}

pub(crate) fn enrollment_of_rep3<R: Ring>(q: &TemplateShare<R>) -> Result<TemplateShare<R>, IrisError> {
    let row = |x: &Rep3<R>, what: &str| -> Result<Rep3<R>, IrisError> {
        let (start, width) = unrotated_range(x.len(), q.rows, q.unrotated, what)?;
        x.slice(start, width).map_err(|e| bad(e.to_string()))
    };
    let eye = |e: &EyeShare<R>| -> Result<EyeShare<R>, IrisError> {
        Ok(EyeShare { code: row(&e.code, "code shares")?, mask: row(&e.mask, "mask shares")? })
    };
    Ok(TemplateShare { left: eye(&q.left)?, right: eye(&q.right)?, rows: 1, unrotated: 0, bits: Vec::new() })
}

// ---------------------------------------------------------------- Shamir over F_65519

pub(crate) fn encode_field(s: &FieldTemplateShare) -> Vec<u8> {
    let f = F65519;
    let shape = Shape {
        rows: s.rows,
        unrotated: s.unrotated,
        code_len: per_row(s.left.code.len(), s.rows),
        mask_len: per_row(s.left.mask.len(), s.rows),
    };
    let row = |x: &Shamir<F65519>, width: usize| -> Vec<u16> {
        x.shares().get(s.unrotated * width..(s.unrotated + 1) * width).unwrap_or(x.shares()).to_vec()
    };
    let mut comps = Vec::new();
    for (e, bits) in [&s.left, &s.right].into_iter().zip([s.bits.first(), s.bits.get(1)]) {
        comps.push(row(&e.code, shape.code_len));
        comps.push(row(&e.mask, shape.mask_len));
        comps.extend(bits.map(|b| b.shares().to_vec()));
    }
    let mut out = Vec::with_capacity(HEADER_LEN + comps.iter().map(|c| 2 * c.len()).sum::<usize>());
    write_header(&mut out, TAG_MPCLIFT_F16, &shape);
    for c in &comps {
        f.wire_encode(c, &mut out);
    }
    out
}

pub(crate) fn decode_field(
    bytes: &[u8],
    len: usize,
    cfg: &MatchConfig,
    expect: ShareKind,
) -> Result<FieldTemplateShare, IrisError> {
    let f = F65519;
    check_code_len(len)?;
    super::field::lifted_ring(len, cfg)?;
    let want = expected_shape(expect, len, mask_len_for(len, cfg.mask_mode)?)?;
    let body_size = || wire_size(&f, eye_values(expect, len, want.mask_len)?)?.checked_mul(2);
    let body = read_header(bytes, TAG_MPCLIFT_F16, expect, &want, body_size())?;
    let mut r = Reader { rest: body };
    let mut bits = Vec::new();
    let mut eye = |name: &str| -> Result<FieldEyeShare, IrisError> {
        let mut comp = |count: usize, what: &str| -> Result<Shamir<F65519>, IrisError> {
            let v = r.elems(&f, count, &format!("{name} {what} shares"))?;
            Shamir::from_parts(f, Degree::One, v).map_err(|e| bad(e.to_string()))
        };
        let eye = FieldEyeShare { code: comp(len, "code")?, mask: comp(want.mask_len, "mask")? };
        if let ShareKind::Query { .. } = expect {
            bits.push(comp(len, "code bit")?);
        }
        Ok(eye)
    };
    let (left, right) = (eye(EYES[0])?, eye(EYES[1])?);
    r.finish()?;
    let row = FieldTemplateShare { left, right, rows: 1, unrotated: 0, bits: Vec::new() };
    Ok(match expect {
        ShareKind::Enrollment => row,
        ShareKind::Query { geometry, .. } => {
            super::field::with_rotations(row, geometry, want.rows, want.unrotated, bits)
        }
    })
}

pub(crate) fn enrollment_of_field(q: &FieldTemplateShare) -> Result<FieldTemplateShare, IrisError> {
    let row = |x: &Shamir<F65519>, what: &str| -> Result<Shamir<F65519>, IrisError> {
        let (start, width) = unrotated_range(x.len(), q.rows, q.unrotated, what)?;
        x.slice(start, width).map_err(|e| bad(e.to_string()))
    };
    let eye = |e: &FieldEyeShare| -> Result<FieldEyeShare, IrisError> {
        Ok(FieldEyeShare { code: row(&e.code, "code shares")?, mask: row(&e.mask, "mask shares")? })
    };
    Ok(FieldTemplateShare { left: eye(&q.left)?, right: eye(&q.right)?, rows: 1, unrotated: 0, bits: Vec::new() })
}

// ---------------------------------------------------------------- Shamir over GR(2^16, 4)

pub(crate) fn encode_gr(s: &GrTemplateShare) -> Vec<u8> {
    let ring = argus_math::Z16::new();
    let shape = Shape {
        rows: s.rows,
        unrotated: s.unrotated,
        code_len: s.entry[0].code.len(),
        mask_len: s.entry[0].mask.len(),
    };
    let comps =
        (0..2).flat_map(|e| [&s.entry[e].code, &s.entry[e].mask, &s.bits[e], &s.query[e].code, &s.query[e].mask]);
    let mut out = Vec::with_capacity(HEADER_LEN + comps.clone().map(|c| 2 * c.len()).sum::<usize>());
    write_header(&mut out, TAG_MPCLIFT_GR16, &shape);
    for c in comps {
        ring.wire_encode(c, &mut out);
    }
    out
}

pub(crate) fn decode_gr(
    bytes: &[u8],
    len: usize,
    cfg: &MatchConfig,
    expect: ShareKind,
) -> Result<GrTemplateShare, IrisError> {
    let ring = argus_math::Z16::new();
    check_code_len(len)?;
    // A query carries its masked code bits and one row in the query basis on top of the
    // monomial entry row.
    let cols = match expect {
        ShareKind::Enrollment => None,
        ShareKind::Query { geometry, .. } => Some(geometry.cols),
    };
    let query_rows = usize::from(cols.is_some());
    super::galois::check_len(len, cols, cfg)?;
    let want = expected_shape(expect, len, mask_len_for(len, cfg.mask_mode)?)?;
    let (n, m) = (query_rows.checked_mul(len), query_rows.checked_mul(want.mask_len));
    let body_size = || n?.checked_mul(2)?.checked_add(m?)?.checked_add(len + want.mask_len)?.checked_mul(4);
    let body = read_header(bytes, TAG_MPCLIFT_GR16, expect, &want, body_size())?;
    let (n, m) = (n.unwrap_or(0), m.unwrap_or(0));
    let mut r = Reader { rest: body };
    let mut eye = |name: &str| -> Result<(GrEyeShare, Vec<u16>, GrEyeShare), IrisError> {
        let mut comp = |count: usize, what: &str| r.elems(&ring, count, &format!("{name} {what} shares"));
        let entry = GrEyeShare { code: comp(len, "code")?, mask: comp(want.mask_len, "mask")? };
        let bits = comp(n, "code bit")?;
        let query = GrEyeShare { code: comp(n, "query code")?, mask: comp(m, "query mask")? };
        Ok((entry, bits, query))
    };
    let ((el, bl, ql), (er, br, qr)) = (eye(EYES[0])?, eye(EYES[1])?);
    r.finish()?;
    Ok(GrTemplateShare {
        entry: [el, er],
        query: [ql, qr],
        rows: want.rows,
        unrotated: want.unrotated,
        cols: cols.unwrap_or(0),
        bits: [bl, br],
    })
}

pub(crate) fn enrollment_of_gr(q: &GrTemplateShare) -> Result<GrTemplateShare, IrisError> {
    if q.rows == 0 || q.unrotated >= q.rows {
        return Err(bad(format!("a share of {} rows has no unrotated row {}", q.rows, q.unrotated)));
    }
    Ok(GrTemplateShare {
        entry: q.entry.clone(),
        query: Default::default(),
        rows: 1,
        unrotated: 0,
        cols: 0,
        bits: Default::default(),
    })
}

// ---------------------------------------------------------------- public masks

pub(crate) fn encode_plain_mask(s: &PlainMaskShare) -> Vec<u8> {
    let ring = argus_math::Z16::new();
    let shape = Shape {
        rows: s.rows,
        unrotated: s.unrotated,
        code_len: per_row(s.codes[0].len(), s.rows),
        mask_len: s.masks[0].first().map_or(0, BitVec::len),
    };
    let width = shape.code_len;
    let row = |x: &Rep3<argus_math::Z16>| x.slice(s.unrotated * width, width).unwrap_or_else(|_| x.clone());
    let mut out = Vec::with_capacity(HEADER_LEN + 2 * (6 * width + width.div_ceil(8)));
    write_header(&mut out, TAG_PLAIN_MASK_Z16, &shape);
    for e in 0..2 {
        let code = row(&s.codes[e]);
        ring.wire_encode(&code.a, &mut out);
        ring.wire_encode(&code.b, &mut out);
        if let Some(m) = s.masks[e].get(s.unrotated).or(s.masks[e].first()) {
            m.append_bytes(&mut out);
        }
        if let Some(b) = s.bits.get(e) {
            ring.wire_encode(&b.a, &mut out);
            ring.wire_encode(&b.b, &mut out);
        }
    }
    out
}

pub(crate) fn decode_plain_mask(
    bytes: &[u8],
    len: usize,
    cfg: &MatchConfig,
    expect: ShareKind,
) -> Result<PlainMaskShare, IrisError> {
    let ring = argus_math::Z16::new();
    check_code_len(len)?;
    super::plain_mask::check_len(len, cfg)?;
    // Public masks are stored expanded (one bit per code bit) in both mask modes.
    let want = expected_shape(expect, len, len)?;
    let code_values = if matches!(expect, ShareKind::Query { .. }) { len.checked_mul(2) } else { Some(len) };
    let body_size = || wire_size(&ring, code_values?)?.checked_mul(2)?.checked_add(len.div_ceil(8))?.checked_mul(2);
    let body = read_header(bytes, TAG_PLAIN_MASK_Z16, expect, &want, body_size())?;
    let mut r = Reader { rest: body };
    let mut bits = Vec::new();
    let mut eye = |name: &str| -> Result<(Rep3<argus_math::Z16>, Vec<BitVec>), IrisError> {
        let comp = |r: &mut Reader, what: &str| -> Result<Rep3<argus_math::Z16>, IrisError> {
            let what = format!("{name} {what} shares");
            let (a, b) = (r.elems(&ring, len, &what)?, r.elems(&ring, len, &what)?);
            Rep3::from_parts(ring, a, b).map_err(|e| bad(e.to_string()))
        };
        let code = comp(&mut r, "code")?;
        let what = format!("{name} mask");
        let mask = BitVec::from_bytes(r.take(len.div_ceil(8), &what)?, len)
            .map_err(|_| bad(format!("{what}: bits set past bit {len}")))?;
        // A trimmed mask, expanded: one value per real/imaginary pair.
        if cfg.mask_mode == MaskMode::Trimmed {
            if let Some(k) = (0..len / 2).find(|&k| mask.get(2 * k) != mask.get(2 * k + 1)) {
                return Err(bad(format!("{what}: bits {} and {} differ in a trimmed mask", 2 * k, 2 * k + 1)));
            }
        }
        if let ShareKind::Query { .. } = expect {
            bits.push(comp(&mut r, "code bit")?);
        }
        Ok((code, vec![mask]))
    };
    let ((lc, lm), (rc, rm)) = (eye(EYES[0])?, eye(EYES[1])?);
    r.finish()?;
    let row = PlainMaskShare { codes: [lc, rc], masks: [lm, rm], rows: 1, unrotated: 0, bits: Vec::new() };
    match expect {
        ShareKind::Enrollment => Ok(row),
        ShareKind::Query { geometry, .. } => {
            super::plain_mask::with_rotations(row, geometry, want.rows, want.unrotated, bits)
        }
    }
}

pub(crate) fn enrollment_of_plain_mask(q: &PlainMaskShare) -> Result<PlainMaskShare, IrisError> {
    let code = |x: &Rep3<argus_math::Z16>| -> Result<Rep3<argus_math::Z16>, IrisError> {
        let (start, width) = unrotated_range(x.len(), q.rows, q.unrotated, "code shares")?;
        x.slice(start, width).map_err(|e| bad(e.to_string()))
    };
    let mask = |m: &[BitVec]| -> Result<Vec<BitVec>, IrisError> {
        match m.get(q.unrotated) {
            Some(row) if m.len() == q.rows => Ok(vec![row.clone()]),
            _ => Err(bad(format!("a share of {} rows has {} masks", q.rows, m.len()))),
        }
    };
    Ok(PlainMaskShare {
        codes: [code(&q.codes[0])?, code(&q.codes[1])?],
        masks: [mask(&q.masks[0])?, mask(&q.masks[1])?],
        rows: 1,
        unrotated: 0,
        bits: Vec::new(),
    })
}
