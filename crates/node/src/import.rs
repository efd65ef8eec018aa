//! Share files for bulk import: how a deployment seeds its nodes from existing shares. One file
//! per node: `ARGUSSHR`, format version (u32), scheme name (u16 length + UTF-8), code bits (u64),
//! then records `id (u64), length (u32), share bytes` (the scheme's enrolment encoding), all
//! little-endian.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use argus_iris::protocol::scheme::{IrisScheme, ShareKind};
use argus_iris::MatchConfig;
use argus_store::{IdentityId, Store};

use crate::NodeError;

const MAGIC: &[u8; 8] = b"ARGUSSHR";
const VERSION: u32 = 1;

fn io(context: String) -> impl FnOnce(std::io::Error) -> NodeError {
    move |source| NodeError::Io { context, source }
}

/// Writes one node's share file: into `<path>.partial`, renamed to `path` by
/// [`finish`](ShareFileWriter::finish) and deleted if the writer is dropped unfinished, so that a
/// failed run leaves no file behind that looks whole or blocks the next run.
pub struct ShareFileWriter {
    w: BufWriter<File>,
    path: std::path::PathBuf,
    partial: std::path::PathBuf,
    done: bool,
}

impl ShareFileWriter {
    /// Creates `path` (refusing to overwrite) for shares of `scheme` over codes of `bits` bits.
    pub fn create(path: &Path, scheme: &str, bits: usize) -> Result<Self, NodeError> {
        if path.exists() {
            return Err(NodeError::Io {
                context: format!("creating {}", path.display()),
                source: std::io::Error::from(std::io::ErrorKind::AlreadyExists),
            });
        }
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = std::path::PathBuf::from(partial);
        let f = File::create(&partial).map_err(io(format!("creating {}", partial.display())))?;
        let mut w = BufWriter::new(f);
        let ctx = || format!("writing {}", path.display());
        w.write_all(MAGIC).map_err(io(ctx()))?;
        w.write_all(&VERSION.to_le_bytes()).map_err(io(ctx()))?;
        w.write_all(&(scheme.len() as u16).to_le_bytes()).map_err(io(ctx()))?;
        w.write_all(scheme.as_bytes()).map_err(io(ctx()))?;
        w.write_all(&(bits as u64).to_le_bytes()).map_err(io(ctx()))?;
        Ok(ShareFileWriter { w, path: path.to_path_buf(), partial, done: false })
    }

    /// Appends identity `id`'s share.
    pub fn push(&mut self, id: IdentityId, share: &[u8]) -> Result<(), NodeError> {
        let ctx = || "writing a share file".to_string();
        self.w.write_all(&id.to_le_bytes()).map_err(io(ctx()))?;
        self.w.write_all(&(share.len() as u32).to_le_bytes()).map_err(io(ctx()))?;
        self.w.write_all(share).map_err(io(ctx()))
    }

    /// Flushes the file to disk and gives it its name.
    pub fn finish(mut self) -> Result<(), NodeError> {
        let ctx = || format!("writing {}", self.partial.display());
        self.w.flush().map_err(io(ctx()))?;
        self.w.get_ref().sync_all().map_err(io(ctx()))?;
        if self.path.exists() {
            return Err(NodeError::Io {
                context: format!("naming {}", self.path.display()),
                source: std::io::Error::from(std::io::ErrorKind::AlreadyExists),
            });
        }
        std::fs::rename(&self.partial, &self.path).map_err(io(format!("naming {}", self.path.display())))?;
        self.done = true;
        Ok(())
    }
}

impl Drop for ShareFileWriter {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// Reads a share file's records, checking the header against `scheme` and `bits`.
pub fn read_share_file(
    path: &Path,
    scheme: &str,
    bits: usize,
) -> Result<impl Iterator<Item = Result<(IdentityId, Vec<u8>), NodeError>>, NodeError> {
    let mut r = BufReader::new(File::open(path).map_err(io(format!("opening {}", path.display())))?);
    let bad = |what: &str| NodeError::Input(format!("{}: {what}", path.display()));
    let mut head = [0u8; 14];
    r.read_exact(&mut head).map_err(|_| bad("not an Argus share file (too short)"))?;
    if &head[..8] != MAGIC {
        return Err(bad("not an Argus share file"));
    }
    let version = u32::from_le_bytes(head[8..12].try_into().unwrap());
    if version != VERSION {
        return Err(bad(&format!("share file version {version}, this build reads {VERSION}")));
    }
    let mut name = vec![0u8; u16::from_le_bytes(head[12..14].try_into().unwrap()) as usize];
    r.read_exact(&mut name).map_err(|_| bad("truncated header"))?;
    let mut b = [0u8; 8];
    r.read_exact(&mut b).map_err(|_| bad("truncated header"))?;
    let (name, file_bits) = (String::from_utf8_lossy(&name).to_string(), u64::from_le_bytes(b) as usize);
    if name != scheme || file_bits != bits {
        return Err(bad(&format!("shares of {name} over {file_bits}-bit codes; this node runs {scheme} over {bits}")));
    }
    let path = path.display().to_string();
    Ok(std::iter::from_fn(move || {
        let mut id = [0u8; 8];
        match r.read_exact(&mut id) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return None,
            Err(e) => return Some(Err(NodeError::Io { context: format!("reading {path}"), source: e })),
        }
        let mut len = [0u8; 4];
        let mut share = Vec::new();
        let rec = r
            .read_exact(&mut len)
            .and_then(|_| {
                share.resize(u32::from_le_bytes(len) as usize, 0);
                r.read_exact(&mut share)
            })
            .map_err(|_| NodeError::Input(format!("{path}: truncated record")));
        Some(rec.map(|_| (u64::from_le_bytes(id), share)))
    }))
}

/// What [`import_share_file`] is doing, for a progress display.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportStep {
    /// Reading and validating every record (nothing written yet).
    Checking,
    /// Writing the records to the store.
    Writing,
}

/// What [`import_share_file`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Imported {
    /// Records written.
    pub written: u64,
    /// Records the store already held with the same share (an import run again), skipped.
    pub already: u64,
}

/// Imports a share file into `store`: every record is validated first (so a bad file imports
/// nothing), then all are written, skipping those the store already holds with the same share
/// (so an interrupted import can be run again). `progress` is told the step and the records done
/// in it, every [`PROGRESS_EVERY`] records and at each step's end.
pub fn import_share_file<S: IrisScheme>(
    store: &mut dyn Store,
    path: &Path,
    scheme: &S,
    bits: usize,
    cfg: &MatchConfig,
    progress: &mut dyn FnMut(ImportStep, u64),
) -> Result<Imported, NodeError> {
    let mut n = 0u64;
    let mut last = None;
    for rec in read_share_file(path, scheme.name(), bits)? {
        let (id, share) = rec?;
        scheme
            .decode(&share, bits, cfg, ShareKind::Enrollment)
            .map_err(|e| NodeError::Input(format!("{}: identity {id}: {e}", path.display())))?;
        if last.is_some_and(|l| l >= id) {
            return Err(NodeError::Input(format!("{}: ids must ascend (identity {id})", path.display())));
        }
        last = Some(id);
        n += 1;
        if n.is_multiple_of(PROGRESS_EVERY) {
            progress(ImportStep::Checking, n);
        }
    }
    progress(ImportStep::Checking, n);
    let mut err = None;
    let mut sent = 0u64;
    let mut records = read_share_file(path, scheme.name(), bits)?
        .map_while(|r| match r {
            Ok(v) => Some(v),
            Err(e) => {
                err = Some(e);
                None
            }
        })
        .inspect(|_| {
            sent += 1;
            if sent.is_multiple_of(PROGRESS_EVERY) {
                progress(ImportStep::Writing, sent);
            }
        });
    let written = store.bulk_import(&mut records)?;
    drop(records);
    if let Some(e) = err {
        return Err(e);
    }
    progress(ImportStep::Writing, n);
    Ok(Imported { written, already: n - written })
}

/// How often [`import_share_file`] reports progress, in records.
pub const PROGRESS_EVERY: u64 = 1000;
