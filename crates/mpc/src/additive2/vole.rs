//! The OT extensions a two-party session keeps for its products, and [`cross`]: shares of
//! `y ⊗ x` products in both directions at once ([`argus_ot::vole::cross`], Gilboa's product —
//! paper 004's Fig. 6 over a ring).

use argus_math::Ring;
use argus_ot::iknp;
use argus_prg::Prg;

use crate::error::Result;
use crate::party::Party;

/// OT extensions with the other party, in both directions (set up once per session).
pub struct Ots {
    sender: iknp::Sender,
    receiver: iknp::Receiver,
}

impl Ots {
    /// The base OTs and the extensions with the other party of a two-party session.
    pub fn setup(p: &mut Party) -> Result<Self> {
        p.require("two-party additive sharing", 2)?;
        let mut rng = Prg::new(&p.prg.own().fork());
        let (sender, receiver) = iknp::setup_with(p.net(), &[1 - p.id()], &mut rng)?.pop().expect("one peer");
        Ok(Ots { sender, receiver })
    }

    /// Both extensions, for random OTs in both directions.
    pub(crate) fn pair(&mut self) -> (&mut iknp::Sender, &mut iknp::Receiver) {
        (&mut self.sender, &mut self.receiver)
    }
}

/// [`argus_ot::vole::cross`] with the other party of a two-party session: this party receives
/// for `ys` (its rows) and sends for `xs` (its columns); returns its shares of the received and
/// the sent products.
#[allow(clippy::type_complexity)]
pub fn cross<R: Ring>(
    ring: &R,
    p: &mut Party,
    ots: &mut Ots,
    ys: &[(&[R::El], usize)],
    xs: &[(&[R::El], usize)],
) -> Result<(Vec<Vec<R::El>>, Vec<Vec<R::El>>)> {
    p.require("two-party additive sharing", 2)?;
    let peer = 1 - p.id();
    Ok(argus_ot::vole::cross(ring, p.net(), peer, ots.pair(), ys, xs)?)
}
