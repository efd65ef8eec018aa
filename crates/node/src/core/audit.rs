//! The audit of the three databases before serving (`argus node --audit`, and after a recovery).

use std::time::Instant;

use argus_iris::protocol::scheme::IrisScheme;
use argus_mpc::Party;
use argus_store::Summary;

use super::{Core, End};
use crate::NodeError;

impl<S: IrisScheme> Core<S> {
    /// The audit of the three databases ([`IrisScheme::audit`]), before serving: a share that is
    /// not consistent with its peers' (a corrupted store, a wrong recovery) would silently change
    /// results, so the nodes refuse to serve. Reveals nothing; the Shamir schemes' weights come
    /// from a seed the three nodes draw together now (`audit::joint_seed`), after the shares are
    /// fixed: a corrupted share escapes with probability at most 2^-40.
    pub(super) fn audit(&mut self, p: &mut Party, agreed: &Summary) -> Result<(), End> {
        let (me, t) = (self.cfg.id, Instant::now());
        let seed = argus_mpc::audit::joint_seed(p).map_err(|e| End::Peer(e.into()))?;
        let ok = self.engine.audit(p, &seed).map_err(|e| End::Peer(e.into()))?;
        if !ok {
            return Err(End::Fatal(NodeError::Inconsistent(
                "the audit found the three nodes' shares inconsistent: some identity's share differs from what its \
                 peers' shares imply (a corrupted store, or a wrong recovery); not serving"
                    .into(),
            )));
        }
        tracing::info!(node = me, count = agreed.count, secs = t.elapsed().as_secs_f64(), "audit: shares consistent");
        Ok(())
    }
}
