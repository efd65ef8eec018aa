//! Per-link I/O tasks: a writer fed by the unbounded send queue, and a reader
//! pushing complete frames into the queue that [`crate::Network::recv`] waits
//! on.
//!
//! Framing: each message is a `u32` little-endian payload length followed by
//! the payload. A header announcing more than [`crate::MAX_MESSAGE_LEN`]
//! bytes is a protocol violation ([`NetError::Frame`]) and closes the link.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::Sender;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::{Arrived, Incoming, NetError, PartyId, MAX_MESSAGE_LEN};

/// Messages up to this size are copied into a batch buffer together with
/// their header (and following small messages); larger ones are written
/// straight from the caller's buffer.
const SMALL: usize = 64 * 1024;
/// Stop batching small messages once the batch is this large.
const BATCH_LIMIT: usize = 1 << 20;

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

/// Reads frames until EOF or error. `_done` is dropped when the task ends.
///
/// After the local endpoint is dropped (the queue's receiver is gone) the
/// reader keeps reading and discarding until the peer closes, so that the
/// socket is never closed with unread data (which would reset the connection
/// and could destroy our own last messages in flight).
pub(crate) async fn reader<R: AsyncRead>(
    peer: PartyId,
    mut rd: ReadHalf<R>,
    inbox: Sender<Incoming>,
    dead: Arc<AtomicBool>,
    _done: Sender<()>,
) {
    let mut local_open = true;
    loop {
        let mut header = [0u8; 4];
        if let Err(e) = rd.read_exact(&mut header).await {
            if !is_disconnect(&e) && local_open {
                let _ = inbox.send(Err(read_error(peer, e)));
            }
            break;
        }
        let len = u32::from_le_bytes(header) as usize;
        if let Err(e) = check_frame_len(peer, len) {
            tracing::warn!(peer, len, "oversize frame, closing the link");
            let _ = inbox.send(Err(e));
            break;
        }
        let mut data = alloc_frame(len);
        let filled = async {
            while data.len() < len {
                let want = (len - data.len()) as u64;
                if (&mut rd).take(want).read_buf(&mut data).await? == 0 {
                    return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
                }
            }
            Ok(())
        };
        if let Err(e) = filled.await {
            if !is_disconnect(&e) && local_open {
                let _ = inbox.send(Err(read_error(peer, e)));
            }
            break;
        }
        if local_open && inbox.send(Ok(Arrived { data, at: Instant::now() })).is_err() {
            local_open = false;
        }
    }
    dead.store(true, Ordering::Release);
    tracing::debug!(peer, "incoming link closed");
}

/// Writes queued messages until the queue is closed (the endpoint was
/// dropped), then flushes and closes the TLS session (close_notify + FIN).
/// On a write error the link is marked dead and the task ends.
pub(crate) async fn writer<W: AsyncWrite>(
    peer: PartyId,
    mut wr: WriteHalf<W>,
    mut queue: UnboundedReceiver<Vec<u8>>,
    dead: Arc<AtomicBool>,
    _done: Sender<()>,
) {
    let result: io::Result<()> = async {
        let mut batch: Vec<u8> = Vec::with_capacity(SMALL + 4);
        while let Some(msg) = queue.recv().await {
            push(&mut wr, &mut batch, msg).await?;
            while batch.len() < BATCH_LIMIT {
                match queue.try_recv() {
                    Ok(msg) => push(&mut wr, &mut batch, msg).await?,
                    Err(_) => break,
                }
            }
            if !batch.is_empty() {
                wr.write_all(&batch).await?;
                batch.clear();
            }
            wr.flush().await?;
            if batch.capacity() > BATCH_LIMIT * 2 {
                batch = Vec::with_capacity(SMALL + 4);
            }
        }
        wr.shutdown().await
    }
    .await;
    if let Err(e) = result {
        dead.store(true, Ordering::Release);
        if is_disconnect(&e) {
            tracing::debug!(peer, "outgoing link closed by the peer");
        } else {
            tracing::warn!(peer, error = %e, "sending failed, closing the link");
        }
    }
}

async fn push<W: AsyncWrite>(wr: &mut WriteHalf<W>, batch: &mut Vec<u8>, msg: Vec<u8>) -> io::Result<()> {
    batch.extend_from_slice(&(msg.len() as u32).to_le_bytes());
    if msg.len() <= SMALL {
        batch.extend_from_slice(&msg);
    } else {
        wr.write_all(batch).await?;
        batch.clear();
        wr.write_all(&msg).await?;
    }
    Ok(())
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
}
