//! File formats: Argus JSON templates and the `open-iris` layout.
//!
//! # Argus JSON (`argus-iris`, version 1)
//!
//! One UTF-8 JSON object holding both eyes:
//!
//! ```json
//! {"format": "argus-iris", "version": 1,
//!  "geometry": {"rows": 16, "cols": 200, "filters": 2, "parts": 2},
//!  "left":  {"code": "<base64>", "mask": "<base64>"},
//!  "right": {"code": "<base64>", "mask": "<base64>"}}
//! ```
//!
//! * `format` must be exactly `"argus-iris"` and `version` exactly `1`; no other keys are allowed
//!   at any level. The geometry's dimensions are positive integers (see [`crate::geometry`]).
//! * `code` and `mask` are standard base64 (RFC 4648 alphabet `A–Z a–z 0–9 + /`, with `=`
//!   padding) of the packed bits: `bits = rows·cols·filters·parts` bits in the flat layout of
//!   [`crate::geometry`], packed LSB-first, i.e. flat bit `i` is bit `i % 8` (value `1 << (i % 8)`)
//!   of byte `i / 8`. There are exactly `ceil(bits / 8)` bytes and any bits past the last one in
//!   the final byte must be 0. In a mask, 1 means valid. In Python, with `bits` a flat `0/1` numpy
//!   array in our layout: `base64.b64encode(np.packbits(bits, bitorder="little").tobytes())`.
//!
//! # open-iris
//!
//! The Python `open-iris` package's `IrisTemplate` holds, for each filter `f`, a boolean array of
//! shape `(rows, cols, parts)` = `(16, 256, 2)` in `iris_codes[f]` and in `mask_codes[f]`. One
//! eye is the JSON object
//!
//! ```python
//! json.dump({"iris_codes": [c.tolist() for c in t.iris_codes],
//!            "mask_codes": [m.tolist() for m in t.mask_codes]}, f)
//! ```
//!
//! i.e. `iris_codes[f][row][col][part]` is a JSON `true`/`false` (numbers are refused). It maps to
//! flat index `((row·cols + col)·filters + f)·parts + part`; the default geometry is
//! [`IrisGeometry::OPEN_IRIS`]. Other top-level keys are ignored; a pair of such files (left,
//! right) makes a [`Template`].
//!
//! open-iris 1.x's own `IrisTemplate.serialize()` is read too — what its users store and exchange:
//!
//! ```python
//! json.dump(t.serialize(), f)  # {"iris_codes": "<base64>", "mask_codes": "<base64>", "iris_code_version": "v2.1"}
//! ```
//!
//! where each string is `base64(np.packbits(np.stack(codes).transpose(1, 2, 0, 3)))`: the array of
//! shape `(rows, cols, filters, parts)` flattened in C order — exactly the flat index above — and
//! packed most significant bit first (numpy's default `bitorder="big"`): flat bit `i` is bit
//! `7 − i % 8` of byte `i / 8`, `ceil(bits / 8)` bytes, any padding bits 0. `iris_code_version`,
//! if present, must be a string (it names open-iris's code generation, not a layout).
//!
//! Errors name the offending field by its JSON path (e.g. `left.mask`, `iris_codes[1][3][200]`)
//! and never include a code or mask value.

use std::path::Path;

use argus_math::BitVec;
use base64::{engine::general_purpose::STANDARD, Engine};
use serde_json::{Map, Value};

use crate::{IrisCode, IrisError, IrisGeometry, Template};

/// The `format` value of Argus iris documents.
pub const FORMAT: &str = "argus-iris";
/// The Argus iris document version this build reads and writes.
pub const VERSION: u64 = 1;

fn parse(text: &str) -> Result<Value, IrisError> {
    if text.trim().is_empty() {
        return Err(IrisError::Empty);
    }
    serde_json::from_str(text).map_err(|e| IrisError::Json { line: e.line(), column: e.column() })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn object<'a>(v: &'a Value, field: &str, allowed: Option<&[&str]>) -> Result<&'a Map<String, Value>, IrisError> {
    let m = v.as_object().ok_or_else(|| IrisError::bad(field, format!("expected an object, found {}", kind(v))))?;
    if let Some(allowed) = allowed {
        if let Some(k) = m.keys().find(|k| !allowed.contains(&k.as_str())) {
            let path = if field.is_empty() { k.clone() } else { format!("{field}.{k}") };
            return Err(IrisError::bad(path, "unknown field"));
        }
    }
    Ok(m)
}

fn get<'a>(m: &'a Map<String, Value>, parent: &str, key: &str) -> Result<(&'a Value, String), IrisError> {
    let path = if parent.is_empty() { key.to_string() } else { format!("{parent}.{key}") };
    match m.get(key) {
        Some(v) => Ok((v, path)),
        None => Err(IrisError::bad(path, "missing")),
    }
}

fn dimension(m: &Map<String, Value>, key: &str) -> Result<usize, IrisError> {
    let (v, path) = get(m, "geometry", key)?;
    v.as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| IrisError::bad(path, format!("expected a non-negative integer, found {}", kind(v))))
}

fn bits_from_b64(v: &Value, field: String, bits: usize) -> Result<BitVec, IrisError> {
    let s = v.as_str().ok_or_else(|| IrisError::bad(&field, format!("expected a string, found {}", kind(v))))?;
    let bytes = STANDARD.decode(s).map_err(|_| IrisError::Base64 { field: field.clone() })?;
    BitVec::from_bytes(&bytes, bits).map_err(|_| IrisError::PackedBits {
        field,
        expected_bytes: bits.div_ceil(8),
        bits,
    })
}

fn eye_from_value(v: &Value, field: &str, g: IrisGeometry) -> Result<IrisCode, IrisError> {
    let m = object(v, field, Some(&["code", "mask"]))?;
    let (c, cpath) = get(m, field, "code")?;
    let (k, kpath) = get(m, field, "mask")?;
    let code = bits_from_b64(c, cpath, g.bits())?;
    let mask = bits_from_b64(k, kpath, g.bits())?;
    IrisCode::new(g, code, mask)
}

fn eye_to_value(c: &IrisCode) -> Value {
    serde_json::json!({
        "code": STANDARD.encode(c.code().to_bytes()),
        "mask": STANDARD.encode(c.mask().to_bytes()),
    })
}

fn read_text(path: &Path) -> Result<String, IrisError> {
    std::fs::read_to_string(path).map_err(|e| IrisError::io("reading", path, e))
}

/// Writes `text` to `path` whole or not at all: into a temporary file beside it, renamed over
/// `path` once complete (a full disk leaves no truncated document behind).
fn write_text(path: &Path, text: &str) -> Result<(), IrisError> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        IrisError::io("writing", path, e)
    })
}

impl Template {
    /// The Argus JSON document of this template. Errors if the eyes' geometries differ.
    pub fn to_json(&self) -> Result<String, IrisError> {
        let g = self.geometry()?;
        let doc = serde_json::json!({
            "format": FORMAT,
            "version": VERSION,
            "geometry": {"rows": g.rows, "cols": g.cols, "filters": g.filters, "parts": g.parts},
            "left": eye_to_value(&self.left),
            "right": eye_to_value(&self.right),
        });
        Ok(serde_json::to_string_pretty(&doc).unwrap_or_default())
    }

    /// Parses an Argus JSON document (see the [module documentation](crate::io)).
    pub fn from_json(text: &str) -> Result<Template, IrisError> {
        let doc = parse(text)?;
        let top = object(&doc, "document", None)?;
        if top.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(IrisError::UnknownFormat);
        }
        let (v, path) = get(top, "", "version")?;
        let version =
            v.as_u64().ok_or_else(|| IrisError::bad(path, format!("expected an integer, found {}", kind(v))))?;
        if version != VERSION {
            return Err(IrisError::UnknownVersion { found: version, supported: VERSION });
        }
        object(&doc, "", Some(&["format", "version", "geometry", "left", "right"]))?;
        let (gv, _) = get(top, "", "geometry")?;
        let gm = object(gv, "geometry", Some(&["rows", "cols", "filters", "parts"]))?;
        let g = IrisGeometry::new(
            dimension(gm, "rows")?,
            dimension(gm, "cols")?,
            dimension(gm, "filters")?,
            dimension(gm, "parts")?,
        )?;
        let left = eye_from_value(get(top, "", "left")?.0, "left", g)?;
        let right = eye_from_value(get(top, "", "right")?.0, "right", g)?;
        Template::new(left, right)
    }

    /// Writes the Argus JSON document to `path`.
    pub fn write_file(&self, path: impl AsRef<Path>) -> Result<(), IrisError> {
        write_text(path.as_ref(), &self.to_json()?)
    }

    /// Reads an Argus JSON document from `path`.
    /// Errors name the file.
    pub fn read_file(path: impl AsRef<Path>) -> Result<Template, IrisError> {
        let path = path.as_ref();
        Template::from_json(&read_text(path)?).map_err(|e| e.in_file(path))
    }

    /// A template from two open-iris documents (left eye, right eye) in [`IrisGeometry::OPEN_IRIS`].
    pub fn from_open_iris_json(left: &str, right: &str) -> Result<Template, IrisError> {
        Template::new(IrisCode::from_open_iris_json(left)?, IrisCode::from_open_iris_json(right)?)
    }

    /// Reads a template from two open-iris files (left eye, right eye). Errors name the file.
    pub fn read_open_iris_files(left: impl AsRef<Path>, right: impl AsRef<Path>) -> Result<Template, IrisError> {
        let eye =
            |path: &Path| IrisCode::from_open_iris_json(&read_text(path)?).map_err(|e: IrisError| e.in_file(path));
        Template::new(eye(left.as_ref())?, eye(right.as_ref())?)
    }

    /// Writes the two eyes as open-iris files.
    pub fn write_open_iris_files(&self, left: impl AsRef<Path>, right: impl AsRef<Path>) -> Result<(), IrisError> {
        write_text(left.as_ref(), &self.left.to_open_iris_json())?;
        write_text(right.as_ref(), &self.right.to_open_iris_json())
    }
}

fn array<'a>(v: &'a Value, field: &str, expected: usize) -> Result<&'a Vec<Value>, IrisError> {
    let a = v.as_array().ok_or_else(|| IrisError::bad(field, format!("expected an array, found {}", kind(v))))?;
    if a.len() != expected {
        return Err(IrisError::Shape { field: field.to_string(), expected, found: a.len() });
    }
    Ok(a)
}

/// Reads `name[f][row][col][part]` into `out` in the flat layout.
fn read_open_iris_field(doc: &Map<String, Value>, name: &str, g: IrisGeometry) -> Result<BitVec, IrisError> {
    let (v, _) = get(doc, "", name)?;
    if let Some(text) = v.as_str() {
        return read_serialized(text, name, g);
    }
    let mut out = BitVec::zeros(g.bits());
    for (f, fv) in array(v, name, g.filters)?.iter().enumerate() {
        let fp = format!("{name}[{f}]");
        for (row, rv) in array(fv, &fp, g.rows)?.iter().enumerate() {
            let rp = format!("{fp}[{row}]");
            for (col, cv) in array(rv, &rp, g.cols)?.iter().enumerate() {
                let cp = format!("{rp}[{col}]");
                for (part, pv) in array(cv, &cp, g.parts)?.iter().enumerate() {
                    let b = pv.as_bool().ok_or_else(|| {
                        IrisError::bad(format!("{cp}[{part}]"), format!("expected a boolean, found {}", kind(pv)))
                    })?;
                    if b {
                        out.set(((row * g.cols + col) * g.filters + f) * g.parts + part, true);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// One field of open-iris's `serialize()`: base64 of the `(rows, cols, filters, parts)` array
/// packed most significant bit first (see the module documentation).
fn read_serialized(text: &str, name: &str, g: IrisGeometry) -> Result<BitVec, IrisError> {
    let bytes = STANDARD.decode(text).map_err(|e| IrisError::bad(name, format!("not standard base64: {e}")))?;
    let bits = g.bits();
    if bytes.len() != bits.div_ceil(8) {
        return Err(IrisError::bad(
            name,
            format!(
                "{} bytes of packed bits, expected {} for a ({}, {}, {}, {}) array",
                bytes.len(),
                bits.div_ceil(8),
                g.rows,
                g.cols,
                g.filters,
                g.parts
            ),
        ));
    }
    let mut out = BitVec::zeros(bits);
    for (i, &byte) in bytes.iter().enumerate() {
        for j in 0..8 {
            if byte >> (7 - j) & 1 == 1 {
                let k = 8 * i + j;
                if k >= bits {
                    return Err(IrisError::bad(name, "padding bits after the last one must be 0"));
                }
                out.set(k, true);
            }
        }
    }
    Ok(out)
}

/// `bits` as open-iris's `serialize()` writes a field (base64, most significant bit first).
fn write_serialized(bits: &BitVec) -> String {
    let mut bytes = vec![0u8; bits.len().div_ceil(8)];
    for k in (0..bits.len()).filter(|&k| bits.get(k)) {
        bytes[k / 8] |= 0x80 >> (k % 8);
    }
    STANDARD.encode(bytes)
}

fn write_open_iris_field(bits: &BitVec, g: IrisGeometry) -> Value {
    let filters = (0..g.filters)
        .map(|f| {
            let rows = (0..g.rows)
                .map(|row| {
                    let cols = (0..g.cols)
                        .map(|col| {
                            let parts = (0..g.parts)
                                .map(|p| Value::Bool(bits.get(((row * g.cols + col) * g.filters + f) * g.parts + p)))
                                .collect();
                            Value::Array(parts)
                        })
                        .collect();
                    Value::Array(cols)
                })
                .collect();
            Value::Array(rows)
        })
        .collect();
    Value::Array(filters)
}

impl IrisCode {
    /// Parses one eye in the open-iris layout with [`IrisGeometry::OPEN_IRIS`].
    pub fn from_open_iris_json(text: &str) -> Result<IrisCode, IrisError> {
        IrisCode::from_open_iris_json_with(text, IrisGeometry::OPEN_IRIS)
    }

    /// Parses one eye in the open-iris layout, requiring the arrays to have shape
    /// `filters × (rows, cols, parts)` of `geometry`.
    pub fn from_open_iris_json_with(text: &str, geometry: IrisGeometry) -> Result<IrisCode, IrisError> {
        geometry.validate()?;
        let doc = parse(text)?;
        let top = object(&doc, "document", None)?;
        if let Some(v) = top.get("iris_code_version") {
            if !v.is_string() {
                return Err(IrisError::bad("iris_code_version", format!("expected a string, found {}", kind(v))));
            }
        }
        let code = read_open_iris_field(top, "iris_codes", geometry)?;
        let mask = read_open_iris_field(top, "mask_codes", geometry)?;
        IrisCode::new(geometry, code, mask)
    }

    /// This eye as open-iris 1.x's `IrisTemplate.serialize()` writes it (packed base64 fields
    /// and `iris_code_version`, here `"v2.1"`).
    pub fn to_open_iris_serialized(&self) -> String {
        let mut doc = Map::new();
        doc.insert("iris_codes".into(), Value::String(write_serialized(self.code())));
        doc.insert("mask_codes".into(), Value::String(write_serialized(self.mask())));
        doc.insert("iris_code_version".into(), Value::String("v2.1".into()));
        Value::Object(doc).to_string()
    }

    /// This eye in the open-iris layout (any geometry: `filters` arrays of shape
    /// `(rows, cols, parts)`).
    pub fn to_open_iris_json(&self) -> String {
        let g = self.geometry();
        let mut doc = Map::new();
        doc.insert("iris_codes".into(), write_open_iris_field(self.code(), g));
        doc.insert("mask_codes".into(), write_open_iris_field(self.mask(), g));
        Value::Object(doc).to_string()
    }
}
