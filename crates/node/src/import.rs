//! Share files for bulk import: how a deployment seeds its nodes from existing shares. One file
//! per node: `ARGUSSHR`, format version (u32, now 2), the node's party index (u8), scheme name
//! (u16 length + UTF-8), code bits (u64), then records `id (u64), length (u32), share bytes` (the
//! scheme's enrolment encoding), all little-endian, then an end record: id `u64::MAX` (no identity
//! has it), length 8, the number of records (u64). A file cut short, even between two records,
//! lacks it and is refused. Version 1 files lack the party index and the end record, so a node
//! could not tell another node's file from its own: they are refused (re-run `argus share`).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use argus_iris::protocol::scheme::{IrisScheme, ShareKind};
use argus_iris::MatchConfig;
use argus_store::{IdentityId, Store};

use crate::NodeError;

const MAGIC: &[u8; 8] = b"ARGUSSHR";
/// The format version written and read. 2 added the party index; 1 is refused.
const VERSION: u32 = 2;

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
    records: u64,
    done: bool,
}

/// The id of the end record.
const END: u64 = u64::MAX;

/// Longest share a record may hold (the largest scheme's open-iris enrolment share is ~0.5 MB):
/// a corrupt length is refused instead of allocated.
const MAX_SHARE_BYTES: usize = 64 << 20;

impl ShareFileWriter {
    /// Creates `path` (refusing to overwrite) for node `party`'s shares of `scheme` over codes of
    /// `bits` bits.
    pub fn create(path: &Path, party: usize, scheme: &str, bits: usize) -> Result<Self, NodeError> {
        let party = u8::try_from(party)
            .map_err(|_| NodeError::Input(format!("party index {party} does not fit a share file (at most 255)")))?;
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
        w.write_all(&[party]).map_err(io(ctx()))?;
        w.write_all(&(scheme.len() as u16).to_le_bytes()).map_err(io(ctx()))?;
        w.write_all(scheme.as_bytes()).map_err(io(ctx()))?;
        w.write_all(&(bits as u64).to_le_bytes()).map_err(io(ctx()))?;
        Ok(ShareFileWriter { w, path: path.to_path_buf(), partial, records: 0, done: false })
    }

    /// Appends identity `id`'s share.
    pub fn push(&mut self, id: IdentityId, share: &[u8]) -> Result<(), NodeError> {
        if id == END || share.len() > MAX_SHARE_BYTES {
            return Err(NodeError::Input(format!(
                "identity {id}: no share file holds this id or a share of {} bytes",
                share.len()
            )));
        }
        let ctx = || "writing a share file".to_string();
        self.w.write_all(&id.to_le_bytes()).map_err(io(ctx()))?;
        self.w.write_all(&(share.len() as u32).to_le_bytes()).map_err(io(ctx()))?;
        self.w.write_all(share).map_err(io(ctx()))?;
        self.records += 1;
        Ok(())
    }

    /// Writes the end record, flushes the file to disk and gives it its name.
    pub fn finish(mut self) -> Result<(), NodeError> {
        let ctx = || format!("writing {}", self.partial.display());
        self.w.write_all(&END.to_le_bytes()).map_err(io(ctx()))?;
        self.w.write_all(&8u32.to_le_bytes()).map_err(io(ctx()))?;
        self.w.write_all(&self.records.to_le_bytes()).map_err(io(ctx()))?;
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

/// What a share file's header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareFileHeader {
    /// The node whose shares the file holds.
    pub party: usize,
    /// The scheme's name.
    pub scheme: String,
    /// Code bits.
    pub bits: usize,
}

impl ShareFileHeader {
    /// Checks that `path` (whose header this is) is for node `party` running `scheme` over codes
    /// of `bits` bits.
    pub fn check(&self, path: &Path, party: usize, scheme: &str, bits: usize) -> Result<(), NodeError> {
        let bad = |what: String| NodeError::Input(format!("{}{what}", path.display()));
        if self.party != party {
            // Another node's shares would import without complaint and corrupt every answer.
            return Err(bad(format!(" holds node {}'s shares; this is node {party}", self.party)));
        }
        if self.scheme != scheme || self.bits != bits {
            return Err(bad(format!(
                ": shares of {} over {}-bit codes; this node runs {scheme} over {bits}",
                self.scheme, self.bits
            )));
        }
        Ok(())
    }
}

/// Opens a share file (refusing a directory).
fn open_file(path: &Path) -> Result<File, NodeError> {
    // Opening a directory succeeds on Linux; only reading it fails, which would look like a short file.
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(NodeError::Input(format!(
            "{}: is a directory, not a share file: give the node's file in it (party<i>.shares for node i)",
            path.display()
        )));
    }
    File::open(path).map_err(io(format!("opening {}", path.display())))
}

/// Opens a share file and reads its header, leaving the reader at the first record.
fn open_share_file(path: &Path) -> Result<(ShareFileHeader, BufReader<File>), NodeError> {
    header_of(path, open_file(path)?)
}

/// Reads the header of `file` (opened from `path`, read from its start), leaving the reader at
/// the first record.
fn header_of(path: &Path, file: File) -> Result<(ShareFileHeader, BufReader<File>), NodeError> {
    let bad = |what: &str| NodeError::Input(format!("{}: {what}", path.display()));
    let mut r = BufReader::new(file);
    let mut exact = |buf: &mut [u8], short: &str| {
        r.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => bad(short),
            _ => NodeError::Io { context: format!("reading {}", path.display()), source: e },
        })
    };
    let mut head = [0u8; 12];
    exact(&mut head, "not an Argus share file (too short)")?;
    if &head[..8] != MAGIC {
        return Err(bad("not an Argus share file"));
    }
    let version = u32::from_le_bytes(head[8..12].try_into().unwrap());
    if version < VERSION {
        return Err(bad(&format!(
            "written by an older release (share file version {version}, which does not name its node): \
             re-run argus share with this release"
        )));
    }
    if version > VERSION {
        return Err(bad(&format!(
            "written by a newer release (share file version {version}; this release reads {VERSION}): \
             import it with that release, or re-run argus share with this one"
        )));
    }
    let mut party = [0u8; 1];
    exact(&mut party, "truncated header")?;
    let mut len = [0u8; 2];
    exact(&mut len, "truncated header")?;
    let mut name = vec![0u8; u16::from_le_bytes(len) as usize];
    exact(&mut name, "truncated header")?;
    let mut b = [0u8; 8];
    exact(&mut b, "truncated header")?;
    let header = ShareFileHeader {
        party: party[0] as usize,
        scheme: String::from_utf8_lossy(&name).to_string(),
        bits: u64::from_le_bytes(b) as usize,
    };
    Ok((header, r))
}

/// Reads a share file's header (nothing else), refusing what is not a share file of this version.
pub fn read_share_header(path: &Path) -> Result<ShareFileHeader, NodeError> {
    open_share_file(path).map(|(h, _)| h)
}

/// Reads a share file's records, checking the header against `party`, `scheme` and `bits`.
pub fn read_share_file(
    path: &Path,
    party: usize,
    scheme: &str,
    bits: usize,
) -> Result<impl Iterator<Item = Result<(IdentityId, Vec<u8>), NodeError>>, NodeError> {
    records_of(path, open_file(path)?, party, scheme, bits)
}

/// [`read_share_file`] from `file`, already open (read from its start).
fn records_of(
    path: &Path,
    file: File,
    party: usize,
    scheme: &str,
    bits: usize,
) -> Result<impl Iterator<Item = Result<(IdentityId, Vec<u8>), NodeError>>, NodeError> {
    let (header, mut r) = header_of(path, file)?;
    header.check(path, party, scheme, bits)?;
    let path = path.display().to_string();
    let (mut records, mut ended) = (0u64, false);
    Ok(std::iter::from_fn(move || {
        if ended {
            return None;
        }
        let cut = |what: &str| NodeError::Input(format!("{path}: {what} (the file was cut short, e.g. in a copy)"));
        let mut id = [0u8; 8];
        match r.read_exact(&mut id) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                ended = true;
                return Some(Err(cut(&format!("ends after {records} complete records without its end record"))));
            }
            Err(e) => return Some(Err(NodeError::Io { context: format!("reading {path}"), source: e })),
        }
        let mut len = [0u8; 4];
        if r.read_exact(&mut len).is_err() {
            ended = true;
            return Some(Err(cut("truncated record")));
        }
        let len = u32::from_le_bytes(len) as usize;
        if len > MAX_SHARE_BYTES {
            ended = true;
            return Some(Err(NodeError::Input(format!("{path}: a record of {len} bytes: the file is corrupt"))));
        }
        let mut share = vec![0u8; len];
        if r.read_exact(&mut share).is_err() {
            ended = true;
            return Some(Err(cut("truncated record")));
        }
        if u64::from_le_bytes(id) == END {
            ended = true;
            let count = share.try_into().map(u64::from_le_bytes).ok();
            let trailing = r.read(&mut [0u8; 1]).map_or(true, |n| n > 0);
            if count != Some(records) || trailing {
                return Some(Err(NodeError::Input(format!(
                    "{path}: the end record does not close the file after its {records} records: the file is corrupt"
                ))));
            }
            return None;
        }
        records += 1;
        Some(Ok((u64::from_le_bytes(id), share)))
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
/// (so an interrupted import can be run again). `party` is the importing node's index. `progress`
/// is told the step and the records done in it, every [`PROGRESS_EVERY`] records and at each
/// step's end. [`check_share_file`] then [`CheckedShareFile::import_into`] does the same in two
/// steps, for a caller that opens the store only for a valid file.
pub fn import_share_file<S: IrisScheme>(
    store: &mut dyn Store,
    path: &Path,
    party: usize,
    scheme: &S,
    bits: usize,
    cfg: &MatchConfig,
    progress: &mut dyn FnMut(ImportStep, u64),
) -> Result<Imported, NodeError> {
    check_share_file(path, party, scheme, bits, cfg, progress)?.import_into(store, progress)
}

/// A share file whose every record [`check_share_file`] found valid for the node. It keeps the
/// file open, so the import writes what was checked even if the path is replaced meanwhile.
#[derive(Debug)]
pub struct CheckedShareFile {
    file: File,
    path: std::path::PathBuf,
    party: usize,
    scheme: String,
    bits: usize,
    records: u64,
}

/// Validates a share file for node `party` (header, then every record: a valid enrolment share of
/// `scheme` over `bits`-bit codes, ids ascending) without touching any store. `progress` is told
/// [`ImportStep::Checking`] and the records checked.
pub fn check_share_file<S: IrisScheme>(
    path: &Path,
    party: usize,
    scheme: &S,
    bits: usize,
    cfg: &MatchConfig,
    progress: &mut dyn FnMut(ImportStep, u64),
) -> Result<CheckedShareFile, NodeError> {
    let mut n = 0u64;
    let mut last = None;
    let file = open_file(path)?;
    let kept = file.try_clone().map_err(io(format!("opening {}", path.display())))?;
    for rec in records_of(path, file, party, scheme.name(), bits)? {
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
    let (path, scheme) = (path.to_path_buf(), scheme.name().to_string());
    Ok(CheckedShareFile { file: kept, path, party, scheme, bits, records: n })
}

impl CheckedShareFile {
    /// Records in the file.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Writes the checked records to `store`, skipping those it already holds with the same
    /// share. `progress` is told [`ImportStep::Writing`] and the records written.
    pub fn import_into(
        self,
        store: &mut dyn Store,
        progress: &mut dyn FnMut(ImportStep, u64),
    ) -> Result<Imported, NodeError> {
        let mut err = None;
        let mut sent = 0u64;
        let mut file = self.file;
        std::io::Seek::rewind(&mut file).map_err(io(format!("reading {}", self.path.display())))?;
        let mut records = records_of(&self.path, file, self.party, &self.scheme, self.bits)?
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
        progress(ImportStep::Writing, self.records);
        Ok(Imported { written, already: self.records.saturating_sub(written) })
    }
}

/// How often [`import_share_file`] reports progress, in records.
pub const PROGRESS_EVERY: u64 = 1000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{IrisSettings, Layout};
    use argus_iris::protocol::schemes::MpcLiftGr16;
    use argus_iris::Generator;

    fn settings() -> IrisSettings {
        IrisSettings { layout: Layout::Custom { rows: 4, cols: 32, filters: 2, parts: 2 }, ..Default::default() }
    }

    /// Writes `argus share`'s three files for `n` random people into `dir`.
    fn write_three(dir: &Path, n: u64) -> [std::path::PathBuf; 3] {
        let iris = settings();
        let g = iris.layout.geometry().unwrap();
        let cfg = iris.match_config().unwrap();
        let s = MpcLiftGr16;
        let paths: [_; 3] = std::array::from_fn(|i| dir.join(format!("party{i}.shares")));
        let mut w: Vec<_> =
            paths.iter().enumerate().map(|(i, p)| ShareFileWriter::create(p, i, s.name(), g.bits()).unwrap()).collect();
        let mut gen = Generator::new(g, 5).unwrap();
        for id in 0..n {
            let sh = s.share_enrollment(&gen.random_template(), &cfg).unwrap();
            for (f, x) in w.iter_mut().zip(&sh) {
                f.push(id, &s.encode(x)).unwrap();
            }
        }
        w.into_iter().for_each(|f| f.finish().unwrap());
        paths
    }

    /// A share file names its node; another node's file is refused, naming both, and its store
    /// stays empty; the node's own file imports.
    #[test]
    fn a_share_file_is_imported_only_by_its_node() {
        let dir = tempfile::tempdir().unwrap();
        let paths = write_three(dir.path(), 3);
        for (i, p) in paths.iter().enumerate() {
            assert_eq!(read_share_header(p).unwrap().party, i);
        }
        let iris = settings();
        let (bits, cfg) = (iris.layout.geometry().unwrap().bits(), iris.match_config().unwrap());
        let mut store = argus_store::open(&format!("sqlite:{}", dir.path().join("node0.db").display())).unwrap();
        let e = import_share_file(store.as_mut(), &paths[1], 0, &MpcLiftGr16, bits, &cfg, &mut |_, _| {})
            .unwrap_err()
            .to_string();
        assert!(e.contains("party1.shares holds node 1's shares; this is node 0"), "{e}");
        assert_eq!(store.summary().unwrap().count, 0, "nothing written");
        let done = import_share_file(store.as_mut(), &paths[0], 0, &MpcLiftGr16, bits, &cfg, &mut |_, _| {}).unwrap();
        assert_eq!(done, Imported { written: 3, already: 0 });
    }

    /// A version 1 file (no party index) is refused as an older release's; a newer version, a
    /// directory, a short file and another format are each named for what they are.
    #[test]
    fn files_that_are_not_this_releases_share_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let mut v1 = MAGIC.to_vec();
        v1.extend(1u32.to_le_bytes());
        v1.extend(4u16.to_le_bytes());
        v1.extend(b"name");
        v1.extend(128u64.to_le_bytes());
        let e = read_share_header(&write("v1.shares", &v1)).unwrap_err().to_string();
        assert!(e.contains("v1.shares: written by an older release") && e.contains("re-run argus share"), "{e}");
        let mut v3 = MAGIC.to_vec();
        v3.extend(3u32.to_le_bytes());
        let e = read_share_header(&write("v3.shares", &v3)).unwrap_err().to_string();
        assert!(e.contains("written by a newer release (share file version 3"), "{e}");
        let e = read_share_header(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is a directory, not a share file"), "{e}");
        let e = read_share_header(&write("short", b"ARGUS")).unwrap_err().to_string();
        assert!(e.contains("not an Argus share file (too short)"), "{e}");
        let e = read_share_header(&write("other", b"PK\x03\x04 and more bytes")).unwrap_err().to_string();
        assert!(e.ends_with("other: not an Argus share file"), "{e}");
        let mut cut = MAGIC.to_vec();
        cut.extend(VERSION.to_le_bytes());
        cut.extend([0u8, 9, 0]);
        let e = read_share_header(&write("cut", &cut)).unwrap_err().to_string();
        assert!(e.contains("cut: truncated header"), "{e}");
    }

    /// A file cut short anywhere past its header (between two records too), one with bytes
    /// after its end record, and one with an absurd record length are refused before any store
    /// is written; the whole file imports.
    #[test]
    fn a_cut_or_corrupt_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let whole = std::fs::read(&write_three(dir.path(), 3)[0]).unwrap();
        let iris = settings();
        let (bits, cfg) = (iris.layout.geometry().unwrap().bits(), iris.match_config().unwrap());
        let header = 8 + 4 + 1 + 2 + MpcLiftGr16.name().len() + 8;
        let record = (whole.len() - header - 20) / 3; // 20: the end record
        let check = |name: &str, bytes: &[u8]| {
            let p = dir.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            check_share_file(&p, 0, &MpcLiftGr16, bits, &cfg, &mut |_, _| {}).map(|_| ()).map_err(|e| e.to_string())
        };
        check("whole", &whole).unwrap();
        let e = check("between", &whole[..header + 2 * record]).unwrap_err();
        assert!(e.contains("ends after 2 complete records without its end record"), "{e}");
        let e = check("inside", &whole[..header + record + 20]).unwrap_err();
        assert!(e.contains("truncated record"), "{e}");
        let e = check("no-end", &whole[..whole.len() - 3]).unwrap_err();
        assert!(e.contains("truncated record"), "{e}");
        let e = check("trailing", &[&whole[..], b"x"].concat()).unwrap_err();
        assert!(e.contains("the end record does not close the file"), "{e}");
        let mut huge = whole.clone();
        huge[header + 8..header + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = check("huge", &huge).unwrap_err();
        assert!(e.contains("the file is corrupt"), "{e}");
    }

    /// The import writes the file that was checked: replaced by another node's file between the
    /// check and the import, the path's new content is not read.
    #[test]
    fn the_checked_file_is_the_one_imported() {
        let dir = tempfile::tempdir().unwrap();
        let paths = write_three(dir.path(), 2);
        let iris = settings();
        let (bits, cfg) = (iris.layout.geometry().unwrap().bits(), iris.match_config().unwrap());
        let checked = check_share_file(&paths[0], 0, &MpcLiftGr16, bits, &cfg, &mut |_, _| {}).unwrap();
        std::fs::rename(&paths[1], &paths[0]).unwrap();
        let mut store = argus_store::open(&format!("sqlite:{}", dir.path().join("node0.db").display())).unwrap();
        assert_eq!(checked.import_into(store.as_mut(), &mut |_, _| {}).unwrap(), Imported { written: 2, already: 0 });
        // Read anew, the path would have been refused: it now holds node 1's shares.
        let e = check_share_file(&paths[0], 0, &MpcLiftGr16, bits, &cfg, &mut |_, _| {}).unwrap_err().to_string();
        assert!(e.contains("holds node 1's shares"), "{e}");
    }
}
