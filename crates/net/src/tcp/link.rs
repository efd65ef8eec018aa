//! One link's connection state: the TLS session and its socket, read and
//! written directly by the party's own threads (no I/O threads in between: a
//! message costs one wake-up of the receiver, the latency of a round).
//!
//! Framing: each message is a `u32` little-endian payload length followed by
//! the payload. A header announcing more than [`crate::MAX_MESSAGE_LEN`]
//! bytes is a protocol violation ([`NetError::Frame`]) and closes the link.
//!
//! The socket is non-blocking. Writing stops where the socket is full and
//! leaves the rest of the message in [`Conn::out`] for the flusher thread
//! (see [`super`]); reading takes what the socket holds, decrypts it and
//! pushes every complete frame into the link's incoming queue.

use std::collections::VecDeque;
use std::io::{self, BufRead, IoSlice, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::Sender;

use crate::{Arrived, Incoming, NetError, PartyId, MAX_MESSAGE_LEN};

/// Ciphertext read from the socket per system call (rustls itself asks for
/// a few KiB at a time).
const READ_BUFFER: usize = 256 * 1024;
/// Asked for as the socket's send buffer: a message this large leaves in
/// one write, without waiting for the flusher (the kernel caps the request at
/// `net.core.wmem_max`).
const SEND_BUFFER: usize = 4 << 20;
/// At most this much ciphertext is encrypted ahead of the socket.
const TLS_BUFFER: usize = 256 * 1024;
/// Bodies at least this long start with a short record (see [`OutMsg::lead`]).
const LEAD_MIN_BODY: usize = 64 * 1024;
/// Where in a page the body's full records start (see [`OutMsg::lead`]).
const RECORD_PAGE_OFFSET: usize = 2048;

/// Checks a frame header's length.
pub(crate) fn check_frame_len(peer: PartyId, len: usize) -> Result<(), NetError> {
    if len > MAX_MESSAGE_LEN {
        return Err(NetError::Frame {
            peer,
            reason: format!("frame announces {len} bytes, more than the limit of {MAX_MESSAGE_LEN} bytes"),
        });
    }
    Ok(())
}

/// Whether an I/O error means the connection went away (EOF, reset).
pub(crate) fn is_disconnect(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::NotConnected
    )
}

fn read_error(peer: PartyId, e: io::Error) -> NetError {
    match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        Some(r) => NetError::Tls { peer: Some(peer), reason: format!("receiving from party {peer}: {r}") },
        None => NetError::Io { context: format!("receiving from party {peer}"), source: e },
    }
}

/// An empty buffer with capacity for exactly `len` bytes (`Vec::with_capacity`
/// guarantees the exact capacity). Large buffers are backed by transparent
/// huge pages where available: a fresh 64 MiB buffer otherwise costs 16 Ki
/// page faults, a large share of the receive cost.
fn alloc_frame(len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    #[cfg(target_os = "linux")]
    if len >= HUGE_PAGE_THRESHOLD {
        advise_huge_pages(&mut v);
    }
    v
}

#[cfg(target_os = "linux")]
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

#[cfg(target_os = "linux")]
fn advise_huge_pages(v: &mut Vec<u8>) {
    const HUGE: usize = 2 << 20;
    let start = v.as_mut_ptr() as usize;
    let end = start + v.capacity();
    let first = start.next_multiple_of(HUGE);
    let last = end & !(HUGE - 1);
    if last > first {
        // SAFETY: the range lies inside `v`'s own (not yet touched)
        // allocation; MADV_HUGEPAGE only changes how the kernel backs it,
        // not its contents or validity. Failure is harmless and ignored.
        unsafe {
            libc::madvise(first as *mut libc::c_void, last - first, libc::MADV_HUGEPAGE);
        }
    }
}

fn set_send_buffer(sock: &TcpStream, bytes: usize) {
    use std::os::fd::AsRawFd;
    let size = bytes.min(i32::MAX as usize) as libc::c_int;
    // SAFETY: a valid socket and a pointer to a c_int of the length given.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 {
        tracing::debug!(error = %io::Error::last_os_error(), "could not enlarge the send buffer");
    }
}

/// A message on its way out: its frame header and payload, and how much of
/// both rustls has taken.
pub(crate) struct OutMsg {
    header: [u8; 4],
    body: Vec<u8>,
    taken: usize,
    /// Body bytes that go out with the header, in a record of their own.
    lead: usize,
}

impl OutMsg {
    pub(crate) fn new(body: Vec<u8>) -> Self {
        let lead = Self::lead(&body);
        OutMsg { header: (body.len() as u32).to_le_bytes(), body, taken: 0, lead }
    }

    /// How much of a large body to send with the header before the full records: so many that
    /// the rest starts [`RECORD_PAGE_OFFSET`] into a page.
    ///
    /// rustls copies each record's plaintext to 5 bytes into a fresh buffer, which the allocator
    /// places at a page start for full records, and glibc copies these sizes with `rep movsb`.
    /// On AMD Zen that runs ~6× slower (3.4 against 20 GB/s here) when the destination lies a
    /// few bytes past the source modulo a page (5 and 9 bytes measured slow, 0 and 69 not), as
    /// it did for every full record of a page-aligned body. Mid-page sources move the copies off
    /// that case; where buffers lie elsewhere, the cost is one small record per large message.
    fn lead(body: &[u8]) -> usize {
        if body.len() < LEAD_MIN_BODY {
            return body.len();
        }
        (RECORD_PAGE_OFFSET + 4096 - body.as_ptr() as usize % 4096) % 4096
    }

    fn rest(&self) -> [IoSlice<'_>; 2] {
        let h = self.taken.min(4);
        let b = self.taken.saturating_sub(4);
        let end = if b < self.lead { self.lead } else { self.body.len() };
        [IoSlice::new(&self.header[h..]), IoSlice::new(&self.body[b..end])]
    }

    fn done(&self) -> bool {
        self.taken == 4 + self.body.len()
    }
}

/// The frame being received: its header, then its payload.
#[derive(Default)]
struct Frame {
    header: [u8; 4],
    header_len: usize,
    body: Option<(Vec<u8>, usize)>,
}

/// One link's TLS session and socket, behind the link's lock.
pub(crate) struct Conn {
    peer: PartyId,
    tls: rustls::Connection,
    pub(crate) sock: TcpStream,
    /// Ciphertext read from the socket, `rbuf[rpos..rlen]` not yet given to rustls.
    rbuf: Box<[u8]>,
    rpos: usize,
    rlen: usize,
    /// Decrypted bytes waiting in rustls.
    plaintext: usize,
    frame: Frame,
    /// The link's incoming queue; `None` once the link is closed for reading.
    inbox: Option<Sender<Incoming>>,
    dead: Arc<AtomicBool>,
    /// Messages the socket has not taken yet, oldest first (the first may be
    /// partly written); the flusher thread writes them.
    pub(crate) out: VecDeque<OutMsg>,
    /// Set after a write error: nothing more is written.
    pub(crate) write_failed: bool,
}

impl Conn {
    /// Takes over an established session. `leftover` is ciphertext already
    /// read from the socket (during the set-up) but not yet given to rustls.
    pub(crate) fn new(
        peer: PartyId,
        mut tls: rustls::Connection,
        sock: TcpStream,
        leftover: &[u8],
        inbox: Sender<Incoming>,
        dead: Arc<AtomicBool>,
    ) -> io::Result<Self> {
        sock.set_nonblocking(true)?;
        sock.set_nodelay(true)?;
        set_send_buffer(&sock, SEND_BUFFER);
        tls.set_buffer_limit(Some(TLS_BUFFER));
        // The set-up may have read (and rustls decrypted) the first messages already.
        let plaintext = tls.process_new_packets().map_err(io::Error::other)?.plaintext_bytes_to_read();
        let mut rbuf = vec![0u8; READ_BUFFER.max(leftover.len())].into_boxed_slice();
        rbuf[..leftover.len()].copy_from_slice(leftover);
        Ok(Conn {
            peer,
            tls,
            sock,
            rbuf,
            rpos: 0,
            rlen: leftover.len(),
            plaintext,
            frame: Frame::default(),
            inbox: Some(inbox),
            dead,
            out: VecDeque::new(),
            write_failed: false,
        })
    }

    /// Whether the link is still open for reading.
    pub(crate) fn readable(&self) -> bool {
        self.inbox.is_some()
    }

    /// Writes as much of `msg` as the socket takes now; `Ok(true)` once all
    /// of it (and everything rustls holds) has been handed to the socket.
    pub(crate) fn write(&mut self, msg: &mut OutMsg) -> io::Result<bool> {
        loop {
            while self.tls.wants_write() {
                match self.tls.write_tls(&mut self.sock) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            if msg.done() {
                return Ok(true);
            }
            let n = self.tls.writer().write_vectored(&msg.rest())?;
            if n == 0 {
                // Nothing buffered and still nothing taken: the session is not writable.
                return Err(io::Error::new(io::ErrorKind::BrokenPipe, "the TLS session takes no more data"));
            }
            msg.taken += n;
        }
    }

    /// Writes the queued messages until the socket is full; `Ok(true)` when
    /// the queue is empty.
    pub(crate) fn flush_queue(&mut self) -> io::Result<bool> {
        while let Some(mut msg) = self.out.pop_front() {
            let done = self.write(&mut msg);
            if !matches!(done, Ok(true)) {
                self.out.push_front(msg);
                return done;
            }
        }
        Ok(true)
    }

    /// Marks the link dead after a write error; queued messages are dropped.
    pub(crate) fn fail_write(&mut self, e: &io::Error) {
        self.write_failed = true;
        self.out.clear();
        self.dead.store(true, Ordering::Release);
        if is_disconnect(e) {
            tracing::debug!(peer = self.peer, "outgoing link closed by the peer");
        } else {
            tracing::warn!(peer = self.peer, error = %e, "sending failed, closing the link");
        }
    }

    /// Reads what the socket holds and queues every complete frame. Returns
    /// whether anything was queued (or the link closed).
    pub(crate) fn read_available(&mut self) -> bool {
        if self.inbox.is_none() {
            return false;
        }
        match self.read_frames() {
            Ok(queued) => queued,
            Err(e) => {
                if let Some(e) = e {
                    self.push(Err(e));
                }
                self.close_read();
                true
            }
        }
    }

    /// The read loop: `Err(None)` for a quiet close (EOF), `Err(Some(e))` for
    /// a fatal error to report.
    fn read_frames(&mut self) -> Result<bool, Option<NetError>> {
        let peer = self.peer;
        let mut queued = false;
        loop {
            queued |= self.take_plaintext()?;
            if self.rpos < self.rlen {
                let n =
                    self.tls.read_tls(&mut &self.rbuf[self.rpos..self.rlen]).map_err(|e| Some(read_error(peer, e)))?;
                self.rpos += n;
                self.process()?;
                continue;
            }
            match self.sock.read(&mut self.rbuf) {
                Ok(0) => {
                    // EOF: a close_notify before it was a clean close, either way the
                    // link is done (a partial frame is lost with the peer).
                    return Err(None);
                }
                Ok(n) => (self.rpos, self.rlen) = (0, n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(queued),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_disconnect(&e) => return Err(None),
                Err(e) => return Err(Some(read_error(peer, e))),
            }
        }
    }

    fn process(&mut self) -> Result<(), Option<NetError>> {
        let state = self.tls.process_new_packets().map_err(|e| {
            Some(NetError::Tls { peer: Some(self.peer), reason: format!("receiving from party {}: {e}", self.peer) })
        })?;
        self.plaintext = state.plaintext_bytes_to_read();
        if self.plaintext == 0 && state.peer_has_closed() {
            return Err(None);
        }
        Ok(())
    }

    /// Moves decrypted bytes into the current frame; queues complete frames.
    fn take_plaintext(&mut self) -> Result<bool, Option<NetError>> {
        let mut queued = false;
        while self.plaintext > 0 {
            let f = &mut self.frame;
            let n = match &mut f.body {
                None => {
                    let n = self
                        .tls
                        .reader()
                        .read(&mut f.header[f.header_len..])
                        .map_err(|e| Some(read_error(self.peer, e)))?;
                    f.header_len += n;
                    if f.header_len == 4 {
                        let len = u32::from_le_bytes(f.header) as usize;
                        if let Err(e) = check_frame_len(self.peer, len) {
                            tracing::warn!(peer = self.peer, len, "oversize frame, closing the link");
                            return Err(Some(e));
                        }
                        f.body = Some((alloc_frame(len), len));
                    }
                    n
                }
                Some((data, len)) => {
                    // Copied from rustls's buffer straight into the frame's spare capacity (a
                    // `read` would need the capacity zeroed first).
                    let mut reader = self.tls.reader();
                    let chunk = reader.fill_buf().map_err(|e| Some(read_error(self.peer, e)))?;
                    let n = (*len - data.len()).min(chunk.len());
                    data.extend_from_slice(&chunk[..n]);
                    reader.consume(n);
                    n
                }
            };
            if n == 0 {
                break;
            }
            self.plaintext -= n;
            if let Some((data, len)) = &self.frame.body {
                if data.len() == *len {
                    let (data, _) = self.frame.body.take().expect("checked above");
                    self.frame.header_len = 0;
                    self.push(Ok(Arrived { data, at: Instant::now() }));
                    queued = true;
                }
            }
        }
        Ok(queued)
    }

    fn push(&mut self, item: Incoming) {
        // After the local endpoint is gone the frames are dropped (the socket is
        // still drained, so that it is not reset with unread data).
        if let Some(inbox) = &self.inbox {
            let _ = inbox.send(item);
        }
    }

    fn close_read(&mut self) {
        self.inbox = None;
        self.dead.store(true, Ordering::Release);
        tracing::debug!(peer = self.peer, "incoming link closed");
    }

    /// Stops sending: queues the TLS close_notify alert and writes what the
    /// socket takes now, then half-closes the socket (FIN) if all went out.
    pub(crate) fn close_write(&mut self) -> bool {
        if self.write_failed {
            return true;
        }
        self.tls.send_close_notify();
        let mut nothing = OutMsg::new(Vec::new());
        nothing.taken = 4;
        match self.write(&mut nothing) {
            Ok(true) => {
                let _ = self.sock.shutdown(std::net::Shutdown::Write);
                true
            }
            Ok(false) => false,
            Err(_) => true,
        }
    }

    /// Reads and discards until EOF; `true` once the peer has closed.
    pub(crate) fn discard(&mut self) -> bool {
        self.inbox = None;
        loop {
            match self.sock.read(&mut self.rbuf) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
                Err(_) => return true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_limit() {
        assert!(check_frame_len(1, 0).is_ok());
        assert!(check_frame_len(1, MAX_MESSAGE_LEN).is_ok());
        match check_frame_len(1, MAX_MESSAGE_LEN + 1) {
            Err(NetError::Frame { peer: 1, reason }) => {
                assert!(reason.contains("more than the limit"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn frame_buffers_have_exact_capacity() {
        for len in [0, 1, 4095, 5 << 20, (8 << 20) + 3] {
            let v = alloc_frame(len);
            assert_eq!(v.capacity(), len);
            assert!(v.is_empty());
        }
    }

    /// Moves what `from` has to send into `to` and lets `to` process it.
    fn shuttle(from: &mut rustls::Connection, to: &mut rustls::Connection) {
        let mut wire = Vec::new();
        while from.wants_write() {
            from.write_tls(&mut wire).unwrap();
        }
        let mut rd = &wire[..];
        while !rd.is_empty() {
            to.read_tls(&mut rd).unwrap();
            to.process_new_packets().unwrap();
        }
    }

    fn framed(payload: &[u8]) -> Vec<u8> {
        [&(payload.len() as u32).to_le_bytes()[..], payload].concat()
    }

    #[test]
    fn frames_that_arrived_during_the_set_up_are_kept() {
        // The set-up's last read may bring the peer's first messages along: already decrypted
        // inside rustls, and maybe more still ciphertext in the set-up's read buffer.
        for with_leftover in [false, true] {
            let pki = crate::tcp::Pki::generate(2);
            let (server_cfg, _) = crate::tcp::tls_configs(&pki.identity(0)).unwrap();
            let (_, client_cfg) = crate::tcp::tls_configs(&pki.identity(1)).unwrap();
            let name = rustls::pki_types::ServerName::try_from("party-0").unwrap();
            let mut client: rustls::Connection = rustls::ClientConnection::new(client_cfg, name).unwrap().into();
            let mut server: rustls::Connection = rustls::ServerConnection::new(server_cfg).unwrap().into();
            while client.is_handshaking() || server.is_handshaking() {
                shuttle(&mut client, &mut server);
                shuttle(&mut server, &mut client);
            }
            server.writer().write_all(&framed(b"early")).unwrap();
            shuttle(&mut server, &mut client);
            let mut leftover = Vec::new();
            if with_leftover {
                server.writer().write_all(&framed(b"later")).unwrap();
                while server.wants_write() {
                    server.write_tls(&mut leftover).unwrap();
                }
            }
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let sock = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let _other_end = listener.accept().unwrap();
            let (tx, rx) = crossbeam_channel::unbounded();
            let mut conn = Conn::new(0, client, sock, &leftover, tx, Arc::new(AtomicBool::new(false))).unwrap();
            assert!(conn.read_available());
            let got: Vec<Vec<u8>> = rx.try_iter().map(|m| m.unwrap().data).collect();
            let want: &[&[u8]] = if with_leftover { &[b"early", b"later"] } else { &[b"early"] };
            assert_eq!(got, want);
        }
    }

    #[test]
    fn out_msg_slices_follow_progress() {
        let mut m = OutMsg::new(vec![9; 10]);
        assert_eq!(m.rest().iter().map(|s| s.len()).sum::<usize>(), 14);
        m.taken = 2;
        assert_eq!((m.rest()[0].len(), m.rest()[1].len()), (2, 10));
        m.taken = 7;
        assert_eq!((m.rest()[0].len(), m.rest()[1].len()), (0, 7));
        m.taken = 14;
        assert!(m.done());
    }

    /// A large body goes out as the header and its lead, then the rest from a fixed page offset;
    /// a small one in one piece.
    #[test]
    fn large_bodies_start_full_records_mid_page() {
        for len in [LEAD_MIN_BODY, 3 * LEAD_MIN_BODY + 17] {
            let mut m = OutMsg::new(vec![1; len]);
            let lead = m.rest()[1].len();
            assert!(lead < 4096 && m.rest()[0].len() == 4);
            m.taken = 4 + lead;
            let rest = m.rest()[1];
            assert_eq!((rest.len(), rest.as_ptr() as usize % 4096), (len - lead, RECORD_PAGE_OFFSET));
            m.taken = 2;
            assert_eq!((m.rest()[0].len(), m.rest()[1].len()), (2, lead));
        }
        let m = OutMsg::new(vec![1; LEAD_MIN_BODY - 1]);
        assert_eq!(m.rest()[1].len(), LEAD_MIN_BODY - 1);
    }
}
