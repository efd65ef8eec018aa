//! Share recovery and the database audit, which every scheme implements in its folder's
//! `recovery.rs`: [`Recoverable`] shares (the part a helper sends a node that lost its store, and
//! the sum the node makes of the two parts; [`argus_mpc::recovery`]) and [`Auditable`] databases
//! ([`argus_mpc::audit`]). Parts have the type (and the encoding) of an enrolment share. A helper
//! draws its pad for the code, then the mask, left eye then right, so both helpers' pads line up.

use argus_math::Ring;
use argus_mpc::audit;
use argus_mpc::rep3::Rep3Pre;
use argus_mpc::{MpcError, Party};
use argus_net::PartyId;
use argus_prg::{Prg, Seed};

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

/// A share error from the arithmetic's.
pub(crate) fn bad(e: MpcError) -> IrisError {
    IrisError::BadShare(e.to_string())
}

/// Only enrolment shares (one row per eye) are kept, and so recovered.
pub(crate) fn enrolment(rows: usize, unrotated: usize) -> Result<(), IrisError> {
    if (rows, unrotated) != (1, 0) {
        return Err(IrisError::BadShare(format!("recovery takes enrolment shares (1 row per eye), got {rows} rows")));
    }
    Ok(())
}

/// Folds a pre-processed replicated vector `(x_i + x_{i-1}, x_{i-1})` into the audit's
/// digests of `x_i` (`a`) and `x_{i-1}` (`b`).
pub(crate) fn absorb_pre<R: Ring>(a: &mut audit::Digest, b: &mut audit::Digest, x: &Rep3Pre<R>) {
    const CHUNK: usize = 4096;
    let r = x.ring();
    let mut own = Vec::with_capacity(CHUNK);
    for (sum, prev) in x.sum.chunks(CHUNK).zip(x.b.chunks(CHUNK)) {
        own.clear();
        own.extend(sum.iter().zip(prev).map(|(&s, &p)| r.sub(s, p)));
        a.absorb(r, &own);
        b.absorb(r, prev);
    }
}
