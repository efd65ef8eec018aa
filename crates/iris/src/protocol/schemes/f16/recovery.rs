//! Share recovery and the database audit for Shamir shares over F_65519
//! ([`crate::protocol::recovery`]).

use argus_math::F65519;
use argus_mpc::recovery;
use argus_mpc::{MpcError, Party};
use argus_net::PartyId;
use argus_prg::Prg;

use super::{FieldDb, FieldEyeShare, FieldTemplateShare};
use crate::protocol::recovery::{bad, enrolment, Auditable, Recoverable};
use crate::IrisError;

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

impl Auditable for FieldDb {
    fn audit(&self, p: &mut Party, seed: &argus_prg::Seed) -> Result<bool, MpcError> {
        let mut c = argus_mpc::audit::Combination::new(F65519, 1, seed);
        for row in &self.rows {
            c.absorb(row.shares());
        }
        argus_mpc::audit::shamir_consistent(p, &c)
    }
}
