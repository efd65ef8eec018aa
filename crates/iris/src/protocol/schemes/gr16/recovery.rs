//! Share recovery and the database audit for Shamir shares over GR(2^16, 4)
//! ([`crate::protocol::recovery`]).

use argus_math::Z16;
use argus_mpc::recovery;
use argus_mpc::{MpcError, Party};
use argus_net::PartyId;
use argus_prg::Prg;

use super::{GrDb, GrEyeShare, GrTemplateShare};
use crate::protocol::recovery::{bad, enrolment, Auditable, Recoverable};
use crate::IrisError;

fn gr_enrolment(s: &GrTemplateShare) -> Result<(), IrisError> {
    enrolment(s.rows, s.unrotated)?;
    if s.query.iter().any(|q| !q.code.is_empty() || !q.mask.is_empty()) {
        return Err(IrisError::BadShare("recovery takes enrolment shares, got a query share".into()));
    }
    Ok(())
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

impl Auditable for GrDb {
    fn audit(&self, p: &mut Party, seed: &argus_prg::Seed) -> Result<bool, MpcError> {
        let mut c = argus_mpc::audit::Combination::new(Z16::new(), 4, seed);
        for row in &self.rows {
            c.absorb(row);
        }
        argus_mpc::audit::galois_consistent(p, &c)
    }
}
