//! Running all parties of a session inside one process (tests, benchmarks, the local demos).

use std::thread;

use argus_net::{mem, tcp, NetConfig, Network};

use crate::error::{MpcError, Result};
use crate::party::Party;

/// Which transport connects the local parties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// In-memory channels between threads.
    Memory,
    /// TCP with mutual TLS over loopback, certificates generated at run time.
    Tcp,
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Memory => "memory",
            Backend::Tcp => "tcp",
        })
    }
}

/// Connects `parties` parties (at least 2) over `backend`.
pub fn connect(parties: usize, backend: Backend, cfg: NetConfig) -> Result<Vec<Network>> {
    if parties < 2 {
        return Err(MpcError::WrongPartyCount { scheme: "a session", expected: 2, got: parties });
    }
    Ok(match backend {
        Backend::Memory => mem::connect(parties, cfg),
        Backend::Tcp => tcp::connect_local(parties, cfg)?,
    })
}

/// Runs `f` as each of `parties` parties on its own thread and returns the results in party
/// order. The first error (by party index) wins.
pub fn run<T, F>(parties: usize, backend: Backend, cfg: NetConfig, f: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(&mut Party) -> Result<T> + Sync,
{
    run_on(connect(parties, backend, cfg)?, f)
}

/// [`run`] with three parties, the replicated and Sharemind schemes' count.
pub fn run3<T, F>(backend: Backend, cfg: NetConfig, f: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(&mut Party) -> Result<T> + Sync,
{
    run(3, backend, cfg, f)
}

/// Runs `f` as each party over already connected networks.
pub fn run_on<T, F>(nets: Vec<Network>, f: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(&mut Party) -> Result<T> + Sync,
{
    let f = &f;
    let results: Vec<Result<T>> = thread::scope(|s| {
        let handles: Vec<_> = nets
            .into_iter()
            .map(|net| {
                s.spawn(move || {
                    let mut p = Party::new(net)?;
                    f(&mut p)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(MpcError::InvalidParameter("a party thread panicked".into()))))
            .collect()
    });
    results.into_iter().collect()
}
