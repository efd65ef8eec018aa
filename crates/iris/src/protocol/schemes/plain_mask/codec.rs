//! The byte form of a public-mask share: the body
//! (after the header of [`codec`](crate::protocol::codec)), per eye, left then right:
//! code `a` (`n` × 2 B), code `b` (`n` × 2 B), the mask in `ceil(n / 8)` bytes
//! (bit `k` of the row is bit `k % 8` of byte `k / 8`, padding bits zero), then for a query β
//! `a` and `b` (`n` × 2 B each).

use argus_math::{BitVec, Ring};
use argus_mpc::rep3::Rep3;

use super::PlainMaskShare;
use crate::protocol::codec::{
    bad, check_code_len, expected_shape, per_row, read_header, unrotated_range, wire_size, write_header, Reader, Shape,
    EYES, HEADER_LEN,
};
use crate::protocol::scheme::ShareKind;
use crate::protocol::Scheme;
use crate::{IrisError, MaskMode, MatchConfig};

/// The tag of this format ([`Scheme::tag`]).
const TAG: u8 = Scheme::PlainMaskZ16.tag();

pub(crate) fn encode(s: &PlainMaskShare) -> Vec<u8> {
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
    write_header(&mut out, TAG, &shape);
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

pub(crate) fn decode(
    bytes: &[u8],
    len: usize,
    cfg: &MatchConfig,
    expect: ShareKind,
) -> Result<PlainMaskShare, IrisError> {
    let ring = argus_math::Z16::new();
    check_code_len(len)?;
    super::check_len(len, cfg)?;
    // Public masks are stored expanded (one bit per code bit) in both mask modes.
    let want = expected_shape(expect, len, len)?;
    let code_values = if matches!(expect, ShareKind::Query { .. }) { len.checked_mul(2) } else { Some(len) };
    let body_size = || wire_size(&ring, code_values?)?.checked_mul(2)?.checked_add(len.div_ceil(8))?.checked_mul(2);
    let body = read_header(bytes, TAG, expect, &want, body_size())?;
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
        ShareKind::Query { geometry, .. } => super::with_rotations(row, geometry, want.rows, want.unrotated, bits),
    }
}

pub(crate) fn enrollment_of(q: &PlainMaskShare) -> Result<PlainMaskShare, IrisError> {
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
