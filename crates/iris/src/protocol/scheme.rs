//! One interface over the schemes, so a node, a benchmark or a test can run any of them.

use argus_math::{Z16, Z32};
use argus_mpc::{MpcError, Party};
use rand::rngs::OsRng;

use super::{field, plain_mask, SharedDb, TemplateShare};
use crate::{IrisError, MatchConfig, Template};

/// A way of running the uniqueness check: how a client shares templates, what a party keeps, and
/// the batch check (revealing, per query, whether it is unique).
pub trait IrisScheme: Sync {
    /// One party's share of a template.
    type Share: Clone + Send + Sync;
    /// One party's database.
    type Db: Send;
    /// Short name, e.g. `mpclift-F16-shamir`.
    fn name(&self) -> &'static str;
    /// Bits of the sharing ring or field.
    fn bits(&self) -> u32;
    /// A client shares a template for enrolment (OS randomness).
    fn share_enrollment(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError>;
    /// A client shares a query (all rotations of the window).
    fn share_query(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError>;
    /// An empty database for codes of `len` bits.
    fn new_db(&self, len: usize) -> Self::Db;
    /// Appends an enrolled share.
    fn push(&self, db: &mut Self::Db, s: &Self::Share) -> Result<(), MpcError>;
    /// Checks a batch: `true` for each query that is unique.
    fn check(&self, p: &mut Party, q: &[Self::Share], db: &Self::Db, cfg: &MatchConfig) -> Result<Vec<bool>, MpcError>;
}

/// Secret masks over replicated Z_2^16 (MPCLift-Z).
pub struct MpcLiftZ16;
/// Secret masks over replicated Z_2^32 (NoLift-Z).
pub struct NoLiftZ32;
/// Secret masks over Shamir F_65519 (MPCLift-F): 2 bytes of share per code bit.
pub struct MpcLiftF16;
/// Public masks, secret codes over replicated Z_2^16 (Alg. 2).
pub struct PlainMaskZ16;

macro_rules! rep3_scheme {
    ($t:ty, $ring:expr, $name:literal, $bits:literal) => {
        impl IrisScheme for $t {
            type Share = TemplateShare<<$t as RingOf>::R>;
            type Db = SharedDb<<$t as RingOf>::R>;
            fn name(&self) -> &'static str {
                $name
            }
            fn bits(&self) -> u32 {
                $bits
            }
            fn share_enrollment(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
                super::share_enrollment(&$ring, t, cfg, &mut OsRng)
            }
            fn share_query(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
                super::share_query(&$ring, t, cfg, &mut OsRng)
            }
            fn new_db(&self, len: usize) -> Self::Db {
                SharedDb::new($ring, len)
            }
            fn push(&self, db: &mut Self::Db, s: &Self::Share) -> Result<(), MpcError> {
                db.push(s)
            }
            fn check(
                &self,
                p: &mut Party,
                q: &[Self::Share],
                db: &Self::Db,
                cfg: &MatchConfig,
            ) -> Result<Vec<bool>, MpcError> {
                super::check_batch(p, q, db, cfg)
            }
        }
    };
}

/// The ring of a replicated scheme.
pub trait RingOf {
    /// The ring.
    type R: argus_math::Ring;
}
impl RingOf for MpcLiftZ16 {
    type R = Z16;
}
impl RingOf for NoLiftZ32 {
    type R = Z32;
}
rep3_scheme!(MpcLiftZ16, Z16::new(), "mpclift-Z16-rep3", 16);
rep3_scheme!(NoLiftZ32, Z32::new(), "nolift-Z32-rep3", 32);

impl IrisScheme for MpcLiftF16 {
    type Share = field::FieldTemplateShare;
    type Db = field::FieldDb;
    fn name(&self) -> &'static str {
        "mpclift-F16-shamir"
    }
    fn bits(&self) -> u32 {
        16
    }
    fn share_enrollment(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
        field::share_enrollment(t, cfg, &mut OsRng)
    }
    fn share_query(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
        field::share_query(t, cfg, &mut OsRng)
    }
    fn new_db(&self, len: usize) -> Self::Db {
        field::FieldDb::new(len)
    }
    fn push(&self, db: &mut Self::Db, s: &Self::Share) -> Result<(), MpcError> {
        db.push(s)
    }
    fn check(&self, p: &mut Party, q: &[Self::Share], db: &Self::Db, cfg: &MatchConfig) -> Result<Vec<bool>, MpcError> {
        field::check_batch(p, q, db, cfg)
    }
}

impl IrisScheme for PlainMaskZ16 {
    type Share = plain_mask::PlainMaskShare;
    type Db = plain_mask::PlainMaskDb;
    fn name(&self) -> &'static str {
        "plain-mask-Z16-rep3"
    }
    fn bits(&self) -> u32 {
        16
    }
    fn share_enrollment(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
        plain_mask::share_enrollment(t, cfg, &mut OsRng)
    }
    fn share_query(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError> {
        plain_mask::share_query(t, cfg, &mut OsRng)
    }
    fn new_db(&self, len: usize) -> Self::Db {
        plain_mask::PlainMaskDb::new(len)
    }
    fn push(&self, db: &mut Self::Db, s: &Self::Share) -> Result<(), MpcError> {
        db.push(s)
    }
    fn check(&self, p: &mut Party, q: &[Self::Share], db: &Self::Db, cfg: &MatchConfig) -> Result<Vec<bool>, MpcError> {
        plain_mask::check_batch(p, q, db, cfg)
    }
}
