//! One interface over the schemes, so a node, a benchmark or a test can run any of them.
//!
//! A client shares a *query* (every rotation of the window, both eyes — or, for GR, the unrotated
//! row from which the nodes make the rotations) and sends one share per
//! node as bytes ([`IrisScheme::encode`], format in [`codec`](super::codec)); a node parses and
//! validates them ([`IrisScheme::decode`] with the [`ShareKind`] it expects, e.g. from
//! [`query_kind`]), runs the batch check, and for a unique query that asked for enrolment keeps
//! the query's unrotated row ([`IrisScheme::enrollment_of`]): one upload serves both.

use argus_math::kernels::Correlation;
use argus_mpc::rep3::Adder;
use argus_mpc::{MpcError, Party};
use argus_net::PartyId;
use argus_prg::{Prg, Seed};
use std::time::Duration;

use super::recovery::{Auditable, Recoverable};
use super::schemes::Registered;
use super::{Checked, ChunkTimes, Tuning};
use crate::{IrisError, IrisGeometry, MatchConfig, Template};

/// What a share is expected to hold (checked by [`IrisScheme::decode`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShareKind {
    /// An enrolment: one row per eye, the unrotated code.
    Enrollment,
    /// A query: `rotations` rows per eye, the rotation-0 row at index `unrotated`, for codes of
    /// `geometry`. All follow from the rotation window and the geometry: use [`query_kind`]. A
    /// query carries its unrotated row alone (and its masked code bits); the nodes make the
    /// `rotations`.
    Query {
        /// Rows per eye (rotations of the window).
        rotations: usize,
        /// Index of the unrotated row.
        unrotated: usize,
        /// The codes' geometry (its angular columns are the unit of a rotation).
        geometry: IrisGeometry,
    },
}

impl ShareKind {
    /// Rows per eye.
    pub fn rows(self) -> usize {
        match self {
            ShareKind::Enrollment => 1,
            ShareKind::Query { rotations, .. } => rotations,
        }
    }
    /// Index of the unrotated row.
    pub fn unrotated(self) -> usize {
        match self {
            ShareKind::Enrollment => 0,
            ShareKind::Query { unrotated, .. } => unrotated,
        }
    }
}

/// The kind of the query shares a client makes under `cfg` for codes of `geometry` (what
/// [`IrisScheme::share_query`] produces): one row per rotation of `cfg.rotations` — or per column
/// when the window covers every column — and the index of rotation 0 among them. Errors if the
/// window does not contain 0.
pub fn query_kind(cfg: &MatchConfig, geometry: IrisGeometry) -> Result<ShareKind, IrisError> {
    let (window, unrotated) = super::query_window(cfg, geometry.cols)?;
    Ok(ShareKind::Query { rotations: window.len(), unrotated, geometry })
}

/// A way of running the uniqueness check: how a client shares templates, what a party keeps, and
/// the batch check (revealing, per query, whether it is unique).
pub trait IrisScheme: Sync + Registered {
    /// One party's share of a template.
    type Share: Clone + Send + Sync + Recoverable;
    /// One party's database.
    type Db: Database<Share = Self::Share>;
    /// The scheme's name in the registry ([`Scheme::name`](super::Scheme::name)), e.g.
    /// `mpclift-F16-shamir`.
    fn name(&self) -> &'static str {
        Self::SCHEME.name()
    }
    /// Bits of the sharing ring or field.
    fn bits(&self) -> u32;
    /// A client shares a template for enrolment (OS randomness).
    fn share_enrollment(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError>;
    /// A client shares a query (all rotations of the window).
    fn share_query(&self, t: &Template, cfg: &MatchConfig) -> Result<[Self::Share; 3], IrisError>;
    /// An empty database for codes of `len` bits.
    fn new_db(&self, len: usize) -> Self::Db;
    /// Appends an enrolled share.
    fn push(&self, db: &mut Self::Db, s: &Self::Share) -> Result<(), MpcError> {
        db.push(s)
    }
    /// Checks a batch: `true` for each query that is unique (and, with `cfg.reveal_matches`, what
    /// it matched: [`Checked`]). With `dedup` a query that matches an
    /// earlier query of the batch is not unique either (enrolments: two captures of one person in
    /// one batch are not both enrolled); without, only the database counts (check-only requests).
    fn check(
        &self,
        p: &mut Party,
        q: &[Self::Share],
        db: &Self::Db,
        cfg: &MatchConfig,
        tuning: &Tuning,
        dedup: bool,
    ) -> Result<Checked, MpcError>;
    /// Per query, whether its shares are not those of a valid template of `len`-bit codes (values
    /// outside their range, rows that disagree, parties' shares that are not of one template):
    /// decided in MPC with a challenge drawn after the shares are fixed, one bit revealed per
    /// query, wrong with probability at most 2^-40 ([`super::validity`]). Such a query is
    /// refused, never checked.
    fn invalid(&self, p: &mut Party, q: &[Self::Share], len: usize) -> Result<Vec<bool>, MpcError>;
    /// The shares of each query's mirror image ([`Template::mirrored`]: each eye mirrored, the
    /// eyes swapped; [`super::mirror`]), for codes of `geometry`, to be checked against the
    /// database alone (mirror attacks).
    fn mirrored(&self, p: &mut Party, q: &[Self::Share], geometry: IrisGeometry) -> Result<Vec<Self::Share>, MpcError>;
    /// Per query, whether an eye's mask leaves fewer than [`MatchConfig::min_valid_bits`] valid
    /// bits of its `len`-bit code: decided in MPC, one bit revealed per query (public masks are
    /// counted in the clear). Such a query is refused, never checked.
    fn short_masks(
        &self,
        p: &mut Party,
        q: &[Self::Share],
        len: usize,
        cfg: &MatchConfig,
        tuning: &Tuning,
    ) -> Result<Vec<bool>, MpcError>;
    /// Serialises a share (query or enrolment) for the wire and the store: a small versioned
    /// header (format version, scheme tag, rows, unrotated row, code and mask values per row),
    /// then the share values packed little-endian at the ring's width (public masks as packed
    /// bits). The layout is in [`codec`](super::codec).
    fn encode(&self, s: &Self::Share) -> Vec<u8>;
    /// Parses and validates bytes from an untrusted client or the store: the scheme tag is this
    /// scheme's, rows and unrotated row are those of `expect`, every length is exactly what codes
    /// of `len` bits with `cfg.mask_mode` need, every field element is canonical (`< p`), nothing
    /// trails. Errors ([`IrisError::BadShare`]) say what was wrong, e.g. "share has 12800 code
    /// values per row, expected 16384"; a `len` or `cfg` the scheme cannot run is
    /// [`IrisError::Unsupported`]. Never panics.
    fn decode(&self, bytes: &[u8], len: usize, cfg: &MatchConfig, expect: ShareKind) -> Result<Self::Share, IrisError>;
    /// The enrolment share contained in a query share: the unrotated row of each eye (code and
    /// mask), as [`share_enrollment`](Self::share_enrollment) would give for the same template
    /// (rows = 1, unrotated = 0; same plaintext, the query's randomness). Local slicing, no
    /// communication: one query share serves both the check and the enrolment.
    fn enrollment_of(&self, q: &Self::Share) -> Result<Self::Share, IrisError>;
    /// Removes entry `index` of the database in place, keeping the order of the others (the row
    /// order is canonical — ascending identity id — on every node, so no swap-remove).
    fn remove(&self, db: &mut Self::Db, index: usize) -> Result<(), MpcError> {
        db.remove(index)
    }
    /// Entries in the database.
    fn db_len(&self, db: &Self::Db) -> usize {
        db.len()
    }
    /// Bytes of share data the database holds in memory (codes and masks, both eyes).
    fn db_bytes(&self, db: &Self::Db) -> usize {
        db.share_bytes()
    }
    /// Bytes of one party's database share per code bit, codes only (masks come on top): 2.0 for
    /// Shamir F_65519, two components × the element width for replicated sharing (4.0 for Z_2^16).
    fn share_bytes_per_code_bit(&self) -> f64;
    /// Share recovery, a helper's side ([`argus_mpc::recovery`]): party `me`'s part of party
    /// `lost`'s enrolment share, from `me`'s enrolment share `s` of the same identity. `pad` is a
    /// stream `me` shares with the other helper alone (used in the same order by both); a part
    /// is encoded and decoded like an enrolment share, and alone it reveals nothing.
    fn recovery_part(
        &self,
        me: PartyId,
        lost: PartyId,
        s: &Self::Share,
        pad: &mut Prg,
    ) -> Result<Self::Share, IrisError> {
        s.recovery_part(me, lost, pad)
    }
    /// Share recovery, the lost party's side: its enrolment share, the sum of the two parts.
    fn recover(&self, a: &Self::Share, b: &Self::Share) -> Result<Self::Share, IrisError> {
        Self::Share::recover(a, b)
    }
    /// The many-lag correlations a batch check runs on this geometry (none where it has no
    /// middle product): what a node asks the kernel planner to plan ([`super::plan_kernels`]).
    fn correlations(&self, geometry: IrisGeometry, cfg: &MatchConfig) -> Vec<Correlation> {
        let _ = (geometry, cfg);
        Vec::new()
    }
    /// Times this scheme's comparison phase for `len`-bit codes under `cfg` with `adder` on random
    /// shares, at each of `chunks` comparisons per chunk (each one's best seconds for
    /// [`CHUNK_SAMPLE`](super::compare::CHUNK_SAMPLE) comparisons and the rounds per chunk,
    /// `budget` bounding the repetitions): what [`super::plan_compare_chunk`] measures. `None` where the scheme's comparison is not
    /// timed; it then keeps the adder's default chunk.
    fn time_compare_chunks(
        &self,
        len: usize,
        cfg: &MatchConfig,
        adder: Adder,
        chunks: &[usize],
        budget: Duration,
    ) -> Option<Result<ChunkTimes, MpcError>> {
        let _ = (len, cfg, adder, chunks, budget);
        None
    }
    /// Whether the three parties' databases hold consistent shares of the same entries (a
    /// corrupted or wrongly recovered share would otherwise silently change results): true on all
    /// three or false on all three, revealing nothing ([`argus_mpc::audit`]). `seed` is public
    /// and the same on all three.
    fn audit(&self, p: &mut Party, db: &Self::Db, seed: &Seed) -> Result<bool, MpcError> {
        db.audit(p, seed)
    }
}

/// One party's database of a scheme: its enrolled shares, in the layout its batch check's kernels
/// want, row after row in ascending identity id (the same order on every node). What
/// [`IrisScheme`]'s `push`, `remove`, `db_len`, `db_bytes` and `audit` do to it.
pub trait Database: Send + Auditable {
    /// The share an entry is made from (an enrolment share: one row per eye).
    type Share;
    /// Appends an enrolled share.
    fn push(&mut self, s: &Self::Share) -> Result<(), MpcError>;
    /// Removes entry `index` in place, keeping the order of the others (no swap-remove).
    fn remove(&mut self, index: usize) -> Result<(), MpcError>;
    /// Enrolled entries.
    fn len(&self) -> usize;
    /// Whether nothing is enrolled.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes of share data held in memory (codes and masks, both eyes).
    fn share_bytes(&self) -> usize;
}
