//! Share recovery and the database audit for replicated shares ([`crate::protocol::recovery`]).

use argus_math::Ring;
use argus_mpc::recovery;
use argus_mpc::{audit, MpcError, Party};
use argus_net::PartyId;
use argus_prg::{Prg, Seed};

use super::{EyeShare, SharedDb, TemplateShare};
use crate::protocol::recovery::{absorb_pre, bad, enrolment, Auditable, Recoverable};
use crate::IrisError;

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

impl<R: Ring> Auditable for SharedDb<R> {
    /// Replicated copies are compared by digest: exact, no seed needed.
    fn audit(&self, p: &mut Party, _seed: &Seed) -> Result<bool, MpcError> {
        let (mut a, mut b) = (audit::Digest::default(), audit::Digest::default());
        for row in &self.rows {
            absorb_pre(&mut a, &mut b, row);
        }
        audit::rep3_consistent(p, &a, &b)
    }
}
