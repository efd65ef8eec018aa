//! Numeric CSV datasets, scaled to integers exactly.
//!
//! A file's decimals are read digit by digit (never through `f64`): with `scale` the largest number of
//! decimal places in the file, every value is stored as the decimal times `10^scale`, so `0.1` in a file
//! whose longest decimal is `0.125` is stored as `100`. [`Dataset::unsigned`] then maps the values into
//! the non-negative integers the MPC ring holds, and [`unscale`] prints results back in the file's units.
//!
//! Errors name the file, the 1-based line and the 1-based column (the cell's position in its row), and
//! show at most the one offending cell, shortened: a dataset's values are what the MPC keeps secret.

use std::fmt::Write as _;
use std::path::Path;

/// The most decimal places a file may have: `10^9` times a value still leaves 33 bits of an `i64`.
pub const MAX_SCALE: u32 = 9;

/// A cell shown in an error is cut to this many characters.
const CELL_SHOWN: usize = 32;

/// Why a dataset could not be read, scaled or mapped to unsigned integers.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The file could not be read or written.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// No data rows (an empty file, or only a header).
    #[error("{file}: no data rows")]
    Empty {
        /// The file.
        file: String,
    },
    /// A blank line before the last data row (blank lines are only allowed at the end).
    #[error("{file}:{line}: blank line (blank lines are only allowed at the end of the file)")]
    BlankLine {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
    },
    /// A cell that is not a decimal number (outside the header line).
    #[error("{file}:{line}:{column}: expected a number, found {cell:?}{}", non_numeric_hint(.cell))]
    NonNumeric {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column (cell index in the row).
        column: usize,
        /// The offending cell, trimmed and cut to 32 characters.
        cell: String,
    },
    /// A row with a different number of cells than the first line.
    #[error("{file}:{line}: {got} cells, expected {expected} as on line 1")]
    Ragged {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// Cells on line 1.
        expected: usize,
        /// Cells on this line.
        got: usize,
    },
    /// More than [`MAX_SCALE`] decimal places.
    #[error("{file}:{line}:{column}: more than {MAX_SCALE} decimal places")]
    TooPrecise {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// The value times `10^scale` does not fit an `i64`.
    #[error("{file}:{line}:{column}: the value times 10^scale (scale = the file's most decimal places) does not fit a 64-bit integer")]
    Overflow {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// A scaled value (after the offset for negative data) does not fit `bits` bits.
    #[error("{file}:{line}:{column}: the scaled value does not fit {bits} bits{}", if *.offset { " (with the offset 2^(bits-1) for negative data)" } else { "" })]
    TooLarge {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The requested value width.
        bits: u32,
        /// Whether the data had negative values (so the offset `2^(bits-1)` applied).
        offset: bool,
    },
    /// [`Dataset::with_scale`] was asked to drop decimals or to go beyond [`MAX_SCALE`].
    #[error("{file}: cannot rescale to {scale} decimals: must be between the data's {current} and {MAX_SCALE}")]
    InvalidScale {
        /// The file.
        file: String,
        /// The scale asked for.
        scale: u32,
        /// The data's scale.
        current: u32,
    },
    /// [`Dataset::unsigned`] was asked for a width outside `1..=64`.
    #[error("value width of {bits} bits: must be between 1 and 64")]
    InvalidBits {
        /// The requested width.
        bits: u32,
    },
}

/// A hint for cells that other tools would read as numbers.
fn non_numeric_hint(cell: &str) -> &'static str {
    let lower = cell.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if matches!(unsigned, "nan" | "inf" | "infinity") {
        " (NaN and infinities are not accepted)"
    } else if lower.contains('e') && lower.chars().all(|c| c.is_ascii_digit() || "+-.e".contains(c)) {
        " (exponents are not accepted: write the number out)"
    } else if cell.is_empty() {
        " (an empty cell)"
    } else {
        ""
    }
}

/// A numeric table, row-major, every value the file's decimal times `10^scale`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    /// Where the data came from (a path, or a generator's name): errors name it.
    pub name: String,
    /// Data rows (the header excluded).
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// `rows × cols` values, row-major, scaled.
    pub values: Vec<i64>,
    /// The values are the file's numbers times `10^scale`.
    pub scale: u32,
    /// The header line's cells, if the file had one.
    pub header: Option<Vec<String>>,
}

/// The values of a [`Dataset`] as non-negative integers for the MPC ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsigned {
    /// `rows × cols` values, row-major: the scaled value plus `offset`.
    pub values: Vec<u64>,
    /// The public offset added to every value: 0, or `2^(bits-1)` when the data has negative values.
    pub offset: u64,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
}

impl Unsigned {
    /// A value of the ring (e.g. a centroid coordinate) back as a scaled signed value: `value − offset`.
    pub fn signed(&self, value: u64) -> i128 {
        value as i128 - self.offset as i128
    }
}

/// One parsed cell: the digits without the decimal point, and how many of them were decimals.
struct Decimal {
    mantissa: i64,
    places: u32,
}

enum CellError {
    NotNumber,
    TooPrecise,
    Overflow,
}

/// Parses `[+-]? digits* (. digits*)?` with at least one digit, exactly.
fn parse_decimal(cell: &str) -> Result<Decimal, CellError> {
    let bytes = cell.as_bytes();
    let (negative, body) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        Some(b'+') => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    let (int, frac) = match body.iter().position(|&b| b == b'.') {
        Some(dot) => (&body[..dot], &body[dot + 1..]),
        None => (body, &body[..0]),
    };
    if int.len() + frac.len() == 0 || !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return Err(CellError::NotNumber);
    }
    if frac.len() > MAX_SCALE as usize {
        return Err(CellError::TooPrecise);
    }
    // The magnitude may reach 2^63 for a negative value (i64::MIN).
    let limit = if negative { 1u64 << 63 } else { i64::MAX as u64 };
    let mut magnitude = 0u64;
    for &d in int.iter().chain(frac) {
        magnitude = magnitude
            .checked_mul(10)
            .and_then(|m| m.checked_add(u64::from(d - b'0')))
            .filter(|&m| m <= limit)
            .ok_or(CellError::Overflow)?;
    }
    let mantissa = if negative { (magnitude as i64).wrapping_neg() } else { magnitude as i64 };
    Ok(Decimal { mantissa, places: frac.len() as u32 })
}

fn shorten(cell: &str) -> String {
    match cell.char_indices().nth(CELL_SHOWN) {
        Some((cut, _)) => format!("{}…", &cell[..cut]),
        None => cell.to_string(),
    }
}

impl Dataset {
    /// Reads a CSV file (see [`Dataset::parse_csv`]); the dataset's name is the path.
    pub fn read_csv(path: &Path) -> Result<Dataset, DataError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| DataError::Io { file: file.clone(), source })?;
        Dataset::parse_csv(&file, &text)
    }

    /// Parses CSV text: comma separated, cells trimmed, `\r\n` or `\n`, blank lines allowed only at the
    /// end. Line 1 is a header iff at least one of its cells is not a number. `name` is used in errors.
    pub fn parse_csv(name: &str, text: &str) -> Result<Dataset, DataError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        let file = || name.to_string();
        let Some(first) = lines.first() else { return Err(DataError::Empty { file: file() }) };
        if first.trim().is_empty() {
            return Err(DataError::BlankLine { file: file(), line: 1 });
        }
        let first_cells: Vec<&str> = first.split(',').map(str::trim).collect();
        let cols = first_cells.len();
        let header = first_cells
            .iter()
            .any(|c| matches!(parse_decimal(c), Err(CellError::NotNumber)))
            .then(|| first_cells.iter().map(|c| c.to_string()).collect::<Vec<_>>());
        let skip = usize::from(header.is_some());
        let rows = lines.len() - skip;
        if rows == 0 {
            return Err(DataError::Empty { file: file() });
        }

        // Pass 1: every cell's digits and decimal places; the scale is known only at the end.
        let mut mantissas = Vec::with_capacity(rows * cols);
        let mut places = Vec::with_capacity(rows * cols);
        for (index, text_line) in lines.iter().enumerate().skip(skip) {
            let line = index + 1;
            if text_line.trim().is_empty() {
                return Err(DataError::BlankLine { file: file(), line });
            }
            let before = mantissas.len();
            for (c, cell) in text_line.split(',').enumerate() {
                let column = c + 1;
                if column > cols {
                    let got = text_line.split(',').count();
                    return Err(DataError::Ragged { file: file(), line, expected: cols, got });
                }
                let cell = cell.trim();
                match parse_decimal(cell) {
                    Ok(d) => {
                        mantissas.push(d.mantissa);
                        places.push(d.places as u8);
                    }
                    Err(CellError::NotNumber) => {
                        return Err(DataError::NonNumeric { file: file(), line, column, cell: shorten(cell) })
                    }
                    Err(CellError::TooPrecise) => return Err(DataError::TooPrecise { file: file(), line, column }),
                    Err(CellError::Overflow) => return Err(DataError::Overflow { file: file(), line, column }),
                }
            }
            let got = mantissas.len() - before;
            if got != cols {
                return Err(DataError::Ragged { file: file(), line, expected: cols, got });
            }
        }

        // Pass 2: bring every value to the common scale.
        let scale = places.iter().copied().max().unwrap_or(0) as u32;
        let mut values = mantissas;
        for (i, (value, &p)) in values.iter_mut().zip(&places).enumerate() {
            *value = value.checked_mul(10i64.pow(scale - u32::from(p))).ok_or_else(|| DataError::Overflow {
                file: file(),
                line: i / cols + 1 + skip,
                column: i % cols + 1,
            })?;
        }
        Ok(Dataset { name: name.to_string(), rows, cols, values, scale, header })
    }

    /// Row `row` (0-based), scaled.
    pub fn row(&self, row: usize) -> &[i64] {
        &self.values[row * self.cols..(row + 1) * self.cols]
    }

    /// The 1-based file line of data row `row` (0-based): after the header, if any.
    pub fn line_of(&self, row: usize) -> usize {
        row + 1 + usize::from(self.header.is_some())
    }

    /// The sum of each column, scaled (exact).
    pub fn column_sums(&self) -> Vec<i128> {
        let mut sums = vec![0i128; self.cols];
        for row in self.values.chunks_exact(self.cols.max(1)) {
            for (s, &v) in sums.iter_mut().zip(row) {
                *s += i128::from(v);
            }
        }
        sums
    }

    /// The same data with `scale` decimals (at least the current scale, at most [`MAX_SCALE`]): every
    /// value times `10^(scale − self.scale)`. Integer k-means rounds centroids down to the scale's last
    /// decimal, so more decimals make it closer to real-valued k-means (0/1 data at scale 0 puts every
    /// centroid of a mixed cluster at 0).
    pub fn with_scale(&self, scale: u32) -> Result<Dataset, DataError> {
        if scale < self.scale || scale > MAX_SCALE {
            return Err(DataError::InvalidScale { file: self.name.clone(), scale, current: self.scale });
        }
        let factor = 10i64.pow(scale - self.scale);
        let values = self
            .values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                v.checked_mul(factor).ok_or_else(|| DataError::Overflow {
                    file: self.name.clone(),
                    line: self.line_of(i / self.cols),
                    column: i % self.cols + 1,
                })
            })
            .collect::<Result<Vec<i64>, DataError>>()?;
        Ok(Dataset { values, scale, ..self.clone() })
    }

    /// The values as non-negative integers below `2^value_bits`: unchanged (offset 0) if none is
    /// negative, otherwise each plus the public offset `2^(value_bits−1)`.
    pub fn unsigned(&self, value_bits: u32) -> Result<Unsigned, DataError> {
        if !(1..=64).contains(&value_bits) {
            return Err(DataError::InvalidBits { bits: value_bits });
        }
        let negative = self.values.iter().any(|&v| v < 0);
        let offset: i128 = if negative { 1 << (value_bits - 1) } else { 0 };
        let bound: i128 = 1 << value_bits;
        let values = self
            .values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let shifted = i128::from(v) + offset;
                if (0..bound).contains(&shifted) {
                    Ok(shifted as u64)
                } else {
                    Err(DataError::TooLarge {
                        file: self.name.clone(),
                        line: self.line_of(i / self.cols),
                        column: i % self.cols + 1,
                        bits: value_bits,
                        offset: negative,
                    })
                }
            })
            .collect::<Result<Vec<u64>, DataError>>()?;
        Ok(Unsigned { values, offset: offset as u64, rows: self.rows, cols: self.cols })
    }

    /// The CSV text: the header if any, then the values with `scale` decimals.
    pub fn to_csv_string(&self) -> String {
        let mut out = String::with_capacity(self.values.len() * (self.scale as usize + 4));
        if let Some(header) = &self.header {
            out.push_str(&header.join(","));
            out.push('\n');
        }
        for row in self.values.chunks_exact(self.cols.max(1)) {
            for (c, &v) in row.iter().enumerate() {
                if c > 0 {
                    out.push(',');
                }
                push_unscaled(&mut out, i128::from(v), self.scale);
            }
            out.push('\n');
        }
        out
    }

    /// Writes [`Dataset::to_csv_string`] to `path`.
    pub fn write_csv(&self, path: &Path) -> Result<(), DataError> {
        std::fs::write(path, self.to_csv_string())
            .map_err(|source| DataError::Io { file: path.display().to_string(), source })
    }

    /// The rows in the file's units as `f64` (for plotting and comparisons, not for the protocol).
    pub fn to_f64_rows(&self) -> Vec<Vec<f64>> {
        let unit = 10f64.powi(self.scale as i32);
        self.values.chunks_exact(self.cols.max(1)).map(|r| r.iter().map(|&v| v as f64 / unit).collect()).collect()
    }
}

/// `value / 10^scale` as an exact decimal with `scale` places: `unscale(-5, 2)` is `"-0.05"`,
/// `unscale(100, 3)` is `"0.100"`, `unscale(7, 0)` is `"7"`.
pub fn unscale(value: i128, scale: u32) -> String {
    let mut out = String::new();
    push_unscaled(&mut out, value, scale);
    out
}

fn push_unscaled(out: &mut String, value: i128, scale: u32) {
    if value < 0 {
        out.push('-');
    }
    let digits = value.unsigned_abs().to_string();
    let scale = scale as usize;
    if scale == 0 {
        out.push_str(&digits);
        return;
    }
    // Left-pad so at least one digit stands before the point.
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    let _ = write!(out, "{int}.{frac}");
}
