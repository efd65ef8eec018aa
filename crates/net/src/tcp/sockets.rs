//! A party's links as a whole: sending on the caller's thread, the reader
//! role for receiving, and the flusher thread for what a full socket did not
//! take (see the [module documentation](super)).

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};

use super::link::{Conn, OutMsg};
use crate::{Incoming, PartyId};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Waits until one of `fds` is ready or `timeout` (`None`: no limit) has passed.
fn poll(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> io::Result<()> {
    let ms = timeout.map_or(-1, |t| t.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32);
    loop {
        // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfd structs.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if r >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd { fd, events, revents: 0 }
}

/// Who reads the sockets: at most one thread of the party at a time.
#[derive(Default)]
struct ReaderRole {
    busy: bool,
    /// Threads waiting on `turn`. Counted under this lock, and the reader checks it under the lock
    /// after queueing, so a thread between its look at its queue and its wait is never missed.
    waiters: usize,
}

/// Holds the reader role; gives it up when dropped (also if the reader panics) and wakes the
/// waiting threads, one of which takes it over.
struct ReaderGuard<'a>(&'a Shared);

impl Drop for ReaderGuard<'_> {
    fn drop(&mut self) {
        let mut role = lock(&self.0.reader);
        role.busy = false;
        if role.waiters > 0 {
            self.0.turn.notify_all();
        }
    }
}

/// The links of one party (`conns[j]` is the link to party `j`).
pub(crate) struct Shared {
    conns: Vec<Option<Mutex<Conn>>>,
    fds: Vec<Option<RawFd>>,
    reader: Mutex<ReaderRole>,
    /// Signalled when the reader queued messages or gave the role up.
    turn: Condvar,
    /// Wakes the flusher: a byte written to `kick` makes `kicked` readable.
    kick: UnixStream,
    kicked: UnixStream,
    /// Set by [`Shared::stop`]: the flusher writes what is queued until then and ends.
    stop_at: Mutex<Option<Instant>>,
    /// Checks of the sockets before the reader sleeps ([`crate::NetConfig::spin_polls`]).
    spin_polls: u32,
}

impl Shared {
    pub(crate) fn new(conns: Vec<Option<Conn>>, spin_polls: u32) -> io::Result<Self> {
        let (kick, kicked) = UnixStream::pair()?;
        kick.set_nonblocking(true)?;
        kicked.set_nonblocking(true)?;
        let fds = conns.iter().map(|c| c.as_ref().map(|c| c.sock.as_raw_fd())).collect();
        Ok(Shared {
            conns: conns.into_iter().map(|c| c.map(Mutex::new)).collect(),
            fds,
            reader: Mutex::new(ReaderRole::default()),
            turn: Condvar::new(),
            kick,
            kicked,
            stop_at: Mutex::new(None),
            spin_polls,
        })
    }

    fn conn(&self, peer: PartyId) -> &Mutex<Conn> {
        self.conns[peer].as_ref().expect("the network checks the peer before")
    }

    fn wake_flusher(&self) {
        // A full pipe already holds a wake-up: nothing is lost when this fails.
        let _ = (&self.kick).write(&[1]);
    }

    /// Writes `msg` to `to` as far as the socket takes it now and queues the
    /// rest for the flusher. `false` if the link is dead.
    pub(crate) fn send(&self, to: PartyId, msg: Vec<u8>) -> bool {
        let mut c = lock(self.conn(to));
        if c.write_failed {
            return false;
        }
        let mut msg = OutMsg::new(msg);
        if !c.out.is_empty() {
            // Behind earlier messages the flusher is still writing.
            c.out.push_back(msg);
            return true;
        }
        match c.write(&mut msg) {
            Ok(true) => true,
            Ok(false) => {
                c.out.push_back(msg);
                drop(c);
                self.wake_flusher();
                true
            }
            Err(e) => {
                c.fail_write(&e);
                false
            }
        }
    }

    /// The next item of `inbox` (the queue of the link from `from`), reading
    /// the sockets while this thread holds the reader role.
    pub(crate) fn recv_timeout(
        &self,
        from: PartyId,
        inbox: &Receiver<Incoming>,
        timeout: Duration,
    ) -> Result<Incoming, RecvTimeoutError> {
        let deadline = Instant::now() + timeout;
        loop {
            match inbox.try_recv() {
                Ok(item) => return Ok(item),
                Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
                Err(TryRecvError::Empty) => {}
            }
            let mut role = lock(&self.reader);
            if !role.busy {
                role.busy = true;
                drop(role);
                let _reading = ReaderGuard(self);
                self.read_until(from, inbox, deadline);
            } else {
                // Another thread reads; it wakes us when it queued something or leaves.
                role.waiters += 1;
                let queued = !inbox.is_empty();
                let now = Instant::now();
                if !queued && now < deadline {
                    role = self.turn.wait_timeout(role, deadline - now).unwrap_or_else(|p| p.into_inner()).0;
                }
                role.waiters -= 1;
                drop(role);
            }
            if Instant::now() >= deadline && inbox.is_empty() {
                return match inbox.try_recv() {
                    Ok(item) => Ok(item),
                    Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
                    Err(TryRecvError::Empty) => Err(RecvTimeoutError::Timeout),
                };
            }
        }
    }

    /// The reader role: polls every open link and queues what arrives, until
    /// `inbox` (from `from`) has an item, that link closed, or `deadline`.
    fn read_until(&self, from: PartyId, inbox: &Receiver<Incoming>, deadline: Instant) {
        let mut fds = Vec::with_capacity(self.fds.len());
        let mut peers = Vec::with_capacity(self.fds.len());
        loop {
            self.open_links(&mut fds, &mut peers);
            if !inbox.is_empty() || !peers.contains(&from) {
                return;
            }
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            if let Err(e) = self.wait_readable(&mut fds, deadline - now) {
                tracing::warn!(error = %e, "polling the links failed");
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            self.read_ready(&fds, &peers);
        }
    }

    /// The links still open for reading: their sockets to poll in `fds`, the peers in `peers`.
    fn open_links(&self, fds: &mut Vec<libc::pollfd>, peers: &mut Vec<PartyId>) {
        fds.clear();
        peers.clear();
        for (peer, c) in self.conns.iter().enumerate() {
            let (Some(c), Some(fd)) = (c, self.fds[peer]) else { continue };
            if lock(c).readable() {
                fds.push(pollfd(fd, libc::POLLIN));
                peers.push(peer);
            }
        }
    }

    /// Reads the links that poll(2) found ready, and wakes the waiting threads if that queued a
    /// message.
    fn read_ready(&self, fds: &[libc::pollfd], peers: &[PartyId]) {
        let mut queued = false;
        for (pfd, &peer) in fds.iter().zip(peers) {
            if pfd.revents != 0 {
                queued |= lock(self.conn(peer)).read_available();
            }
        }
        if queued && lock(&self.reader).waiters > 0 {
            self.turn.notify_all();
        }
    }

    /// Reads the sockets until `until` while this thread holds a message back (the link
    /// simulator's delay), so that what arrives meanwhile, from any peer, is stamped when it
    /// arrives and not when the hold ends. Sleeps in poll(2) without spinning (a spin would burn
    /// the CPU the other parties need); while another thread has the reader role, that thread
    /// stamps, and this one waits for the role.
    pub(crate) fn read_while_holding(&self, until: Instant) {
        let mut fds = Vec::with_capacity(self.fds.len());
        let mut peers = Vec::with_capacity(self.fds.len());
        loop {
            let now = Instant::now();
            if now >= until {
                return;
            }
            let mut role = lock(&self.reader);
            if role.busy {
                role.waiters += 1;
                role = self.turn.wait_timeout(role, until - now).unwrap_or_else(|p| p.into_inner()).0;
                role.waiters -= 1;
                continue;
            }
            role.busy = true;
            drop(role);
            let _reading = ReaderGuard(self);
            loop {
                let now = Instant::now();
                if now >= until {
                    return;
                }
                self.open_links(&mut fds, &mut peers);
                if fds.is_empty() {
                    std::thread::sleep(until - now);
                    return;
                }
                if let Err(e) = poll(&mut fds, Some(until - now)) {
                    tracing::warn!(error = %e, "polling the links failed");
                    std::thread::sleep(Duration::from_millis(1).min(until - now));
                    continue;
                }
                self.read_ready(&fds, &peers);
            }
        }
    }

    /// Waits until one of `fds` is readable: first `spin_polls` checks with a yield of the CPU
    /// between them, then asleep in poll(2) for at most `timeout`.
    fn wait_readable(&self, fds: &mut [libc::pollfd], timeout: Duration) -> io::Result<()> {
        for _ in 0..self.spin_polls {
            poll(fds, Some(Duration::ZERO))?;
            if fds.iter().any(|f| f.revents != 0) {
                return Ok(());
            }
            std::thread::yield_now();
        }
        poll(fds, Some(timeout))
    }

    /// The flusher thread: writes queued messages as their sockets drain.
    pub(crate) fn flusher(&self) {
        let mut fds = Vec::with_capacity(self.fds.len() + 1);
        let mut sink = [0u8; 64];
        loop {
            while matches!((&self.kicked).read(&mut sink), Ok(n) if n > 0) {}
            fds.clear();
            fds.push(pollfd(self.kicked.as_raw_fd(), libc::POLLIN));
            for (c, fd) in self.conns.iter().zip(&self.fds) {
                let (Some(c), Some(fd)) = (c, fd) else { continue };
                let mut c = lock(c);
                match c.flush_queue() {
                    Ok(true) => {}
                    Ok(false) => fds.push(pollfd(*fd, libc::POLLOUT)),
                    Err(e) => c.fail_write(&e),
                }
            }
            let stop_at = *lock(&self.stop_at);
            let wait = match stop_at {
                Some(at) if fds.len() == 1 || Instant::now() >= at => return,
                Some(at) => Some(at - Instant::now()),
                None => None,
            };
            if let Err(e) = poll(&mut fds, wait) {
                tracing::warn!(error = %e, "polling the links failed");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Tells the flusher to write what is queued (at most until `deadline`) and end.
    pub(crate) fn stop(&self, deadline: Instant) {
        *lock(&self.stop_at) = Some(deadline);
        self.wake_flusher();
    }

    /// Closes every TLS session for writing (close_notify, then FIN).
    pub(crate) fn close_write(&self, deadline: Instant) {
        let mut open: Vec<PartyId> = (0..self.conns.len()).filter(|&p| self.conns[p].is_some()).collect();
        let mut fds = Vec::new();
        while !open.is_empty() && Instant::now() < deadline {
            open.retain(|&p| !lock(self.conn(p)).close_write());
            fds.clear();
            fds.extend(open.iter().filter_map(|&p| self.fds[p]).map(|fd| pollfd(fd, libc::POLLOUT)));
            if !fds.is_empty() && poll(&mut fds, Some(deadline.saturating_duration_since(Instant::now()))).is_err() {
                return;
            }
        }
    }

    /// Reads and discards until every peer has closed, or `deadline`.
    pub(crate) fn drain(&self, deadline: Instant) {
        let mut open: Vec<PartyId> = (0..self.conns.len()).filter(|&p| self.conns[p].is_some()).collect();
        let mut fds = Vec::new();
        loop {
            open.retain(|&p| !lock(self.conn(p)).discard());
            let now = Instant::now();
            if open.is_empty() || now >= deadline {
                return;
            }
            fds.clear();
            fds.extend(open.iter().filter_map(|&p| self.fds[p]).map(|fd| pollfd(fd, libc::POLLIN)));
            if poll(&mut fds, Some(deadline - now)).is_err() {
                return;
            }
        }
    }
}
