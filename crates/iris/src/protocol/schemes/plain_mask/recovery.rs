//! Share recovery and the database audit for public-mask shares ([`crate::protocol::recovery`]).

use argus_mpc::recovery;
use argus_mpc::{MpcError, Party};
use argus_net::PartyId;
use argus_prg::Prg;

use super::{PlainMaskDb, PlainMaskShare};
use crate::protocol::recovery::{absorb_pre, bad, enrolment, Auditable, Recoverable};
use crate::IrisError;

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

impl Auditable for PlainMaskDb {
    // Code shares' copies and the public masks compared by digest.
    fn audit(&self, p: &mut Party, _seed: &argus_prg::Seed) -> Result<bool, MpcError> {
        use argus_mpc::audit::{self, Digest};
        let (mut a, mut b) = (Digest::default(), Digest::default());
        for row in &self.codes {
            absorb_pre(&mut a, &mut b, row);
        }
        let mut masks = Digest::default();
        for m in self.masks.iter().flatten() {
            masks.absorb(&argus_math::Z64::new(), m.words());
        }
        let codes = audit::rep3_consistent(p, &a, &b)?;
        Ok(audit::public_equal(p, &masks)? && codes)
    }
}
