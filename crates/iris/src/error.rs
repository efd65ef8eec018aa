//! Errors of the iris layer. They name what was wrong and where, never a code or mask bit.

/// A typed error from building, comparing, encoding or parsing iris codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IrisError {
    /// A geometry with a zero dimension or more bits than [`MAX_BITS`](crate::MAX_BITS).
    #[error("invalid geometry {rows}x{cols}x{filters}x{parts}: {reason}")]
    InvalidGeometry {
        /// Radial rows.
        rows: usize,
        /// Angular columns.
        cols: usize,
        /// Filters.
        filters: usize,
        /// Parts per filter response (real, imaginary).
        parts: usize,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A bit vector whose length does not fit the geometry.
    #[error("length mismatch for {what}: expected {expected} bits, got {actual}")]
    LengthMismatch {
        /// Which vector ("code", "mask", "trimmed mask", "masked encoding", ...).
        what: &'static str,
        /// Length the geometry requires.
        expected: usize,
        /// Length given.
        actual: usize,
    },
    /// Two codes (or a code and a template) with different geometries were combined.
    #[error("geometry mismatch: {left} vs {right}")]
    GeometryMismatch {
        /// Geometry of the left operand, as `rows x cols x filters x parts`.
        left: String,
        /// Geometry of the right operand.
        right: String,
    },
    /// A threshold that is not a fraction in `[0, 1]` with a supported denominator.
    #[error("invalid threshold: {reason}")]
    InvalidThreshold {
        /// Why it was refused.
        reason: &'static str,
    },
    /// A masked-bitvector entry outside {-1, 0, 1} or a mask-vector entry outside {0, 1}.
    #[error("invalid {what} entry at index {index}")]
    InvalidEntry {
        /// Which vector.
        what: &'static str,
        /// Position of the offending entry (its value is not reported).
        index: usize,
    },
    /// Text that is not JSON at all (syntax error or truncated input).
    #[error("malformed JSON at line {line}, column {column}")]
    Json {
        /// Line of the error (1-based).
        line: usize,
        /// Column of the error (1-based).
        column: usize,
    },
    /// A JSON document that is well-formed but does not have the expected structure.
    #[error("bad {field}: {reason}")]
    BadField {
        /// JSON path of the offending field, e.g. `left.mask` or `iris_codes[1][3][200]`.
        field: String,
        /// What was expected there.
        reason: String,
    },
    /// An array whose shape does not fit the geometry.
    #[error("bad shape at {field}: expected {expected} entries, found {found}")]
    Shape {
        /// JSON path of the array.
        field: String,
        /// Entries the geometry requires.
        expected: usize,
        /// Entries found.
        found: usize,
    },
    /// A document of another format (the `format` field is not `argus-iris`).
    #[error("unknown format (expected \"argus-iris\")")]
    UnknownFormat,
    /// An Argus iris document with a version this build does not read.
    #[error("unknown version {found} (this build reads version {supported})")]
    UnknownVersion {
        /// Version found in the document.
        found: u64,
        /// Version this build reads.
        supported: u64,
    },
    /// A base64 field that does not decode.
    #[error("bad base64 in {field}")]
    Base64 {
        /// JSON path of the field.
        field: String,
    },
    /// Decoded bytes that do not hold exactly the geometry's bits (wrong byte count, or set bits
    /// past the last one).
    #[error("bad packed bits in {field}: expected {expected_bytes} bytes with no bit set past bit {bits}")]
    PackedBits {
        /// JSON path of the field.
        field: String,
        /// Bytes expected, `ceil(bits / 8)`.
        expected_bytes: usize,
        /// Number of bits.
        bits: usize,
    },
    /// Share bytes (from a client or the store) that are not a valid share of the expected
    /// scheme, kind and length: the message says what was wrong (a field element out of range
    /// is named with its index and value; valid share values are never printed).
    #[error("invalid share: {0}")]
    BadShare(String),
    /// A configuration the MPC protocol cannot run (e.g. a ring too small for Lemma 2).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A file could not be read or written.
    #[error("{doing} {path}: {reason}")]
    Io {
        /// "reading" or "writing".
        doing: &'static str,
        /// The file.
        path: String,
        /// What went wrong.
        kind: std::io::ErrorKind,
        /// The system's message.
        reason: String,
    },
    /// A document with nothing in it (an empty file, or only white space).
    #[error("empty document: no JSON in it")]
    Empty,
    /// A file's content was refused: `error` says why.
    #[error("{path}: {error}")]
    InFile {
        /// The file.
        path: String,
        /// What was wrong with its content.
        error: Box<IrisError>,
    },
}

impl IrisError {
    pub(crate) fn io(doing: &'static str, path: &std::path::Path, e: std::io::Error) -> Self {
        IrisError::Io { doing, path: path.display().to_string(), kind: e.kind(), reason: e.to_string() }
    }
    /// `self` as an error of the content of `path` (I/O errors already name their file).
    pub(crate) fn in_file(self, path: &std::path::Path) -> Self {
        match self {
            IrisError::Io { .. } | IrisError::InFile { .. } => self,
            error => IrisError::InFile { path: path.display().to_string(), error: Box::new(error) },
        }
    }
    pub(crate) fn bad(field: impl Into<String>, reason: impl Into<String>) -> Self {
        IrisError::BadField { field: field.into(), reason: reason.into() }
    }
}
