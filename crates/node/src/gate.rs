//! What clients hold at a node's client port, against its [`Limits`]: open connections and
//! requests waiting for their answer, per client and all together. Each hold is a permit that
//! gives itself back when dropped, so a connection or request that ends in any way (answered,
//! failed, the client gone) frees its place.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::config::Limits;

/// The client port's counts, shared by its connections.
#[derive(Debug)]
pub(crate) struct Gate {
    limits: Limits,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    connections: usize,
    in_flight: usize,
    /// Per client name: (open connections, requests in flight).
    clients: HashMap<String, (usize, usize)>,
}

/// What a permit holds, given back on drop.
#[derive(Debug)]
enum Hold {
    Connection,
    ClientConnection(String),
    Request(String),
}

/// A place held at the gate until dropped.
#[derive(Debug)]
pub(crate) struct Permit {
    gate: Arc<Gate>,
    hold: Hold,
}

impl Gate {
    pub(crate) fn new(limits: Limits) -> Arc<Gate> {
        Arc::new(Gate { limits, held: Mutex::new(Held::default()) })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new connection, before its handshake (`limits.connections`).
    pub(crate) fn connection(self: &Arc<Self>) -> Result<Permit, String> {
        let mut h = self.held();
        if h.connections >= self.limits.connections {
            return Err(format!("{} client connections are open (limits.connections)", h.connections));
        }
        h.connections += 1;
        Ok(Permit { gate: self.clone(), hold: Hold::Connection })
    }

    /// A connection identified as client `who` (`limits.connections_per_client`).
    pub(crate) fn client_connection(self: &Arc<Self>, who: &str) -> Result<Permit, String> {
        let mut h = self.held();
        let open = h.clients.get(who).map_or(0, |c| c.0);
        if open >= self.limits.connections_per_client {
            return Err(format!(
                "client {who:?} has {open} connections open at this node (limits.connections_per_client); \
                 close one or retry later"
            ));
        }
        h.clients.entry(who.to_string()).or_default().0 += 1;
        Ok(Permit { gate: self.clone(), hold: Hold::ClientConnection(who.to_string()) })
    }

    /// A request of client `who` waiting for its answer (`limits.in_flight_per_client` and
    /// `limits.in_flight`).
    pub(crate) fn request(self: &Arc<Self>, who: &str) -> Result<Permit, String> {
        let mut h = self.held();
        let mine = h.clients.get(who).map_or(0, |c| c.1);
        if mine >= self.limits.in_flight_per_client {
            return Err(format!(
                "client {who:?} has {mine} requests waiting at this node (limits.in_flight_per_client); retry later"
            ));
        }
        if h.in_flight >= self.limits.in_flight {
            return Err(format!("{} requests are waiting at this node (limits.in_flight); retry later", h.in_flight));
        }
        h.in_flight += 1;
        h.clients.entry(who.to_string()).or_default().1 += 1;
        Ok(Permit { gate: self.clone(), hold: Hold::Request(who.to_string()) })
    }

    /// (open connections, requests in flight), all clients together.
    #[cfg(test)]
    fn totals(&self) -> (usize, usize) {
        let h = self.held();
        (h.connections, h.in_flight)
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut h = self.gate.held();
        let forget = match &self.hold {
            Hold::Connection => {
                h.connections -= 1;
                None
            }
            Hold::ClientConnection(who) | Hold::Request(who) => {
                let request = matches!(self.hold, Hold::Request(_));
                if request {
                    h.in_flight -= 1;
                }
                let c = h.clients.get_mut(who).expect("a held client is counted");
                if request {
                    c.1 -= 1;
                } else {
                    c.0 -= 1;
                }
                (*c == (0, 0)).then(|| who.clone())
            }
        };
        // A client with nothing held is forgotten: the map stays as small as the clients present.
        if let Some(who) = forget {
            h.clients.remove(&who);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each limit refuses the hold past it, naming the key, and a dropped permit frees its place;
    /// one client at its limit leaves the others theirs.
    #[test]
    fn permits_count_per_client_and_in_all_and_free_their_place() {
        let gate = Gate::new(Limits {
            connections: 3,
            connections_per_client: 2,
            in_flight: 5,
            in_flight_per_client: 3,
            pending_shares: 1,
        });
        let c: Vec<Permit> = (0..3).map(|_| gate.connection().unwrap()).collect();
        assert!(gate.connection().unwrap_err().contains("limits.connections"));
        drop(c);
        assert_eq!(gate.totals(), (0, 0));

        let a: Vec<Permit> = (0..2).map(|_| gate.client_connection("a").unwrap()).collect();
        let e = gate.client_connection("a").unwrap_err();
        assert!(e.contains("\"a\" has 2 connections") && e.contains("limits.connections_per_client"), "{e}");
        let _b = gate.client_connection("b").unwrap();
        drop(a);
        let _a = gate.client_connection("a").unwrap();

        let flood: Vec<Permit> = (0..3).map(|_| gate.request("a").unwrap()).collect();
        let e = gate.request("a").unwrap_err();
        assert!(e.contains("\"a\" has 3 requests") && e.contains("limits.in_flight_per_client"), "{e}");
        let b: Vec<Permit> = (0..2).map(|_| gate.request("b").unwrap()).collect();
        assert!(gate.request("c").unwrap_err().contains("(limits.in_flight)"), "five in all");
        drop(flood);
        assert_eq!(gate.totals(), (0, 2));
        let _c = gate.request("c").unwrap();
        drop(b);
        assert_eq!(gate.totals(), (0, 1));
    }

    /// A client whose permits are all back is forgotten.
    #[test]
    fn a_client_with_nothing_held_is_forgotten() {
        let gate = Gate::new(Limits::default());
        let p = gate.request("x").unwrap();
        let q = gate.client_connection("x").unwrap();
        drop(p);
        assert_eq!(gate.held().clients.len(), 1);
        drop(q);
        assert!(gate.held().clients.is_empty());
    }
}
