//! Share recovery and the database audit, for every scheme: [`Recoverable`] shares (the part a
//! helper sends a node that lost its store, and the sum the node makes of the two parts;
//! [`argus_mpc::recovery`]) and [`Auditable`] databases ([`argus_mpc::audit`]). Parts have the
//! type (and the encoding) of an enrolment share. A helper draws its pad for the code, then the
//! mask, left eye then right, so both helpers' pads line up.

use argus_math::Ring;
use argus_mpc::recovery;
use argus_mpc::{MpcError, Party};
use argus_net::PartyId;
use argus_prg::{Prg, Seed};

use super::field::{FieldEyeShare, FieldTemplateShare};
use super::galois::{GrEyeShare, GrTemplateShare};
use super::plain_mask::PlainMaskShare;
use super::{EyeShare, TemplateShare};
use crate::IrisError;

/// An enrolment share that a party which lost it can get back from the other two.
pub trait Recoverable: Sized {
    /// Party `me`'s part of party `lost`'s share of the same entry; `pad` is a stream `me` shares
    /// with the other helper alone.
    fn recovery_part(&self, me: PartyId, lost: PartyId, pad: &mut Prg) -> Result<Self, IrisError>;
    /// The lost party's share: the sum of the two helpers' parts.
    fn recover(a: &Self, b: &Self) -> Result<Self, IrisError>;
}

/// A party's database whose shares the three parties can check for consistency.
pub trait Auditable {
    /// True on all three parties iff their shares are consistent; reveals nothing. `seed` is
    /// public and the same on all three.
    fn audit(&self, p: &mut Party, seed: &Seed) -> Result<bool, MpcError>;
}

fn bad(e: MpcError) -> IrisError {
    IrisError::BadShare(e.to_string())
}

/// Only enrolment shares (one row per eye) are kept, and so recovered.
fn enrolment(rows: usize, unrotated: usize) -> Result<(), IrisError> {
    if (rows, unrotated) != (1, 0) {
        return Err(IrisError::BadShare(format!("recovery takes enrolment shares (1 row per eye), got {rows} rows")));
    }
    Ok(())
}

fn gr_enrolment(s: &GrTemplateShare) -> Result<(), IrisError> {
    enrolment(s.rows, s.unrotated)?;
    if s.query.iter().any(|q| !q.code.is_empty() || !q.mask.is_empty()) {
        return Err(IrisError::BadShare("recovery takes enrolment shares, got a query share".into()));
    }
    Ok(())
}

impl<R: Ring> Recoverable for TemplateShare<R> {
    /// A replicated scheme's part.
    fn recovery_part(&self, me: PartyId, lost: PartyId, _pad: &mut Prg) -> Result<Self, IrisError> {
        let s = self;
        enrolment(s.rows, s.unrotated)?;
        let eye = |e: &EyeShare<R>| -> Result<EyeShare<R>, IrisError> {
            Ok(EyeShare {
                code: recovery::rep3(me, lost, &e.code).map_err(bad)?,
                mask: recovery::rep3(me, lost, &e.mask).map_err(bad)?,
            })
        };
        Ok(TemplateShare { left: eye(&s.left)?, right: eye(&s.right)?, rows: 1, unrotated: 0, bits: Vec::new() })
    }
    /// A replicated scheme's lost share from the two parts.
    fn recover(a: &Self, b: &Self) -> Result<Self, IrisError> {
        enrolment(a.rows, a.unrotated)?;
        enrolment(b.rows, b.unrotated)?;
        let eye = |x: &EyeShare<R>, y: &EyeShare<R>| -> Result<EyeShare<R>, IrisError> {
            Ok(EyeShare { code: x.code.add(&y.code).map_err(bad)?, mask: x.mask.add(&y.mask).map_err(bad)? })
        };
        Ok(TemplateShare {
            left: eye(&a.left, &b.left)?,
            right: eye(&a.right, &b.right)?,
            rows: 1,
            unrotated: 0,
            bits: Vec::new(),
        })
    }
}

impl Recoverable for FieldTemplateShare {
    /// The Shamir F_65519 scheme's part.
    fn recovery_part(&self, me: PartyId, lost: PartyId, pad: &mut Prg) -> Result<Self, IrisError> {
        let s = self;
        enrolment(s.rows, s.unrotated)?;
        let mut eye = |e: &FieldEyeShare| -> Result<FieldEyeShare, IrisError> {
            Ok(FieldEyeShare {
                code: recovery::shamir(me, lost, &e.code, pad).map_err(bad)?,
                mask: recovery::shamir(me, lost, &e.mask, pad).map_err(bad)?,
            })
        };
        Ok(FieldTemplateShare { left: eye(&s.left)?, right: eye(&s.right)?, rows: 1, unrotated: 0, bits: Vec::new() })
    }
    /// The Shamir F_65519 scheme's lost share from the two parts.
    fn recover(a: &Self, b: &Self) -> Result<Self, IrisError> {
        enrolment(a.rows, a.unrotated)?;
        enrolment(b.rows, b.unrotated)?;
        let eye = |x: &FieldEyeShare, y: &FieldEyeShare| -> Result<FieldEyeShare, IrisError> {
            Ok(FieldEyeShare { code: x.code.add(&y.code).map_err(bad)?, mask: x.mask.add(&y.mask).map_err(bad)? })
        };
        Ok(FieldTemplateShare {
            left: eye(&a.left, &b.left)?,
            right: eye(&a.right, &b.right)?,
            rows: 1,
            unrotated: 0,
            bits: Vec::new(),
        })
    }
}

impl Recoverable for PlainMaskShare {
    /// The public-mask scheme's part: the code's, and the masks as they are (every node holds them).
    fn recovery_part(&self, me: PartyId, lost: PartyId, _pad: &mut Prg) -> Result<Self, IrisError> {
        let s = self;
        enrolment(s.rows, s.unrotated)?;
        let [l, r] = &s.codes;
        Ok(PlainMaskShare {
            codes: [recovery::rep3(me, lost, l).map_err(bad)?, recovery::rep3(me, lost, r).map_err(bad)?],
            masks: s.masks.clone(),
            rows: 1,
            unrotated: 0,
            bits: Vec::new(),
        })
    }
    /// The public-mask scheme's lost share from the two parts, whose masks must agree.
    fn recover(a: &Self, b: &Self) -> Result<Self, IrisError> {
        enrolment(a.rows, a.unrotated)?;
        enrolment(b.rows, b.unrotated)?;
        if a.masks != b.masks {
            return Err(IrisError::BadShare("the two parts carry different public masks".into()));
        }
        Ok(PlainMaskShare {
            codes: [a.codes[0].add(&b.codes[0]).map_err(bad)?, a.codes[1].add(&b.codes[1]).map_err(bad)?],
            masks: a.masks.clone(),
            rows: 1,
            unrotated: 0,
            bits: Vec::new(),
        })
    }
}

impl Recoverable for GrTemplateShare {
    /// The Shamir GR(2^16, 4) scheme's part (the monomial entry rows).
    fn recovery_part(&self, me: PartyId, lost: PartyId, pad: &mut Prg) -> Result<Self, IrisError> {
        let s = self;
        gr_enrolment(s)?;
        let mut eye = |e: &GrEyeShare| -> Result<GrEyeShare, IrisError> {
            Ok(GrEyeShare {
                code: recovery::galois(me, lost, &e.code, pad).map_err(bad)?,
                mask: recovery::galois(me, lost, &e.mask, pad).map_err(bad)?,
            })
        };
        let entry = [eye(&s.entry[0])?, eye(&s.entry[1])?];
        Ok(GrTemplateShare {
            entry,
            query: Default::default(),
            rows: 1,
            unrotated: 0,
            cols: s.cols,
            bits: Default::default(),
        })
    }
    /// The Shamir GR(2^16, 4) scheme's lost share from the two parts.
    fn recover(a: &Self, b: &Self) -> Result<Self, IrisError> {
        gr_enrolment(a)?;
        gr_enrolment(b)?;
        let eye = |x: &GrEyeShare, y: &GrEyeShare| -> Result<GrEyeShare, IrisError> {
            Ok(GrEyeShare {
                code: recovery::add_u16(&x.code, &y.code).map_err(bad)?,
                mask: recovery::add_u16(&x.mask, &y.mask).map_err(bad)?,
            })
        };
        let entry = [eye(&a.entry[0], &b.entry[0])?, eye(&a.entry[1], &b.entry[1])?];
        Ok(GrTemplateShare {
            entry,
            query: Default::default(),
            rows: 1,
            unrotated: 0,
            cols: a.cols,
            bits: Default::default(),
        })
    }
}
