//! `argus kmeans`: private k-means of a CSV file (the Sharemind protocol, paper 001 section 8.4) on
//! three parties, checked against the plaintext integer reference.
//!
//! Every input problem (flags, the file, `k`, values that do not fit the ring) is found before any
//! party starts and exits with status 2, as clap does for bad flags; a failure during the run, or
//! a result that disagrees with the reference, exits with status 1.
//!
//! By default the three parties are threads of this process ([`run::run_local`]). With `--party I
//! --addrs A,B,C --pki DIR` this process is party `I` alone, connected to the other two over TCP
//! with mutual TLS: party 0 reads the data and chooses the parameters, and sends them to the
//! others in one [`Header`] message before the protocol starts.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use argus_kmeans::protocol::{self, Clustering, Iteration, Options};
use argus_kmeans::run::{self, InputError};
use argus_kmeans::{reference, unscale, Dataset, KmeansError, Unsigned, MAX_SCALE};
use argus_math::Z64;
use argus_mpc::additive3::Additive3;
use argus_mpc::local::Backend;
use argus_mpc::scheme::Scheme;
use argus_mpc::Party;
use argus_net::{tcp, NetConfig, Stats};
use clap::{Args, ValueEnum};

use crate::failure::{bad_input, failed, Failure};

/// Arguments of `argus kmeans`.
#[derive(Args, Debug)]
pub struct KmeansArgs {
    /// The points: a CSV file of decimal numbers, one point per line, optionally a first line of
    /// column names. With --party: party 0 only.
    #[arg(long, value_name = "FILE.csv")]
    data: Option<PathBuf>,
    /// Number of clusters, from 1 to the number of points. With --party: party 0 only.
    #[arg(long, allow_negative_numbers = true)]
    k: Option<usize>,
    /// Stop after N iterations (at least 1) even if points still move. Default: iterate until no
    /// point moves. With --party: party 0 only.
    #[arg(long, value_name = "N", value_parser = at_least_one, allow_negative_numbers = true)]
    iterations: Option<usize>,
    /// Keep the assignment and the cluster sizes secret: each iteration reveals only whether any
    /// point moved, and the end the final centroids. Without it (the paper's variant) each
    /// iteration reveals every point's cluster and the cluster sizes, and the end the final
    /// centroids. With --party: party 0 only.
    #[arg(long)]
    hide_assignment: bool,
    /// Write the assignment as CSV, `row,cluster` (data rows numbered from 0, the header line not
    /// counted). The paper's variant only; with --party: party 0 only. Not written if the result
    /// disagrees with the plaintext reference.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Transport between the three local parties: tcp (loopback with mutual TLS, certificates
    /// made at run time) or memory [default: tcp].
    #[arg(long, value_enum, conflicts_with = "party")]
    backend: Option<Transport>,
    /// Run party I (0, 1 or 2) alone, as this process, connected to the other two over TCP with
    /// mutual TLS (needs --addrs and --pki). Party 0 holds the data and chooses k, --iterations
    /// and the variant; it sends them (with the number of rows and columns) to the others.
    #[arg(long, value_name = "I")]
    party: Option<usize>,
    /// With --party: the listen/dial addresses of the 3 parties, in party order, comma separated.
    #[arg(long, value_delimiter = ',', num_args = 1.., requires = "party")]
    addrs: Vec<SocketAddr>,
    /// With --party: directory with `ca.pem`, `party-<i>.pem`, `party-<i>.key` (see `argus pki`).
    #[arg(long, value_name = "DIR", requires = "party")]
    pki: Option<PathBuf>,
    /// With --party: seconds to wait for a peer (to connect, or for its next message) before
    /// failing; above 0, fractions allowed [default: 120].
    #[arg(long, value_name = "SECONDS", requires = "party", value_parser = crate::party::positive_seconds, allow_negative_numbers = true)]
    timeout: Option<Duration>,
}

/// `--backend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Transport {
    /// Loopback TCP with mutual TLS, certificates made at run time.
    Tcp,
    /// In-memory channels between threads.
    Memory,
}

/// The parties of `argus kmeans`.
const PARTIES: usize = 3;

/// How long a party of `--party` waits for a peer unless `--timeout` says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Parses `--iterations`: a whole number, at least 1.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1 (leave --iterations out to iterate until no point moves)".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number of iterations")),
    }
}

/// Runs `argus kmeans`; prints `error: ...` on stderr and returns the exit status.
pub fn run(a: KmeansArgs) -> ExitCode {
    crate::failure::exit(execute(a))
}

fn execute(a: KmeansArgs) -> Result<(), Failure> {
    match a.party {
        None => {
            let plan = Plan::new(&a)?;
            let backend = match a.backend.unwrap_or(Transport::Tcp) {
                Transport::Tcp => Backend::Tcp,
                Transport::Memory => Backend::Memory,
            };
            local(&plan, backend)
        }
        Some(id) => one_party(&a, id),
    }
}

/// What party 0 (or the local run) clusters, checked: the data in the ring and the options.
struct Plan {
    data: Dataset,
    points: Unsigned,
    opts: Options,
    out: Option<PathBuf>,
}

impl Plan {
    /// Checks the flags, reads the file and brings it into the ring: every input problem, before
    /// any party starts.
    fn new(a: &KmeansArgs) -> Result<Plan, Failure> {
        let Some(path) = &a.data else {
            return Err(bad_input("--data FILE.csv is required: the points to cluster"));
        };
        let Some(k) = a.k else {
            return Err(bad_input("--k is required: the number of clusters"));
        };
        if let Some(out) = &a.out {
            if a.hide_assignment {
                return Err(bad_input(
                    "--out writes the assignment, which --hide-assignment keeps secret: give one of them, not both",
                ));
            }
            check_out(out)?;
        }
        let data = Dataset::read_csv(path).map_err(bad_input)?;
        let points = run::prepare(&data, k).map_err(|e| bad_input(explain(e, &data)))?;
        let opts = Options { k, max_iterations: a.iterations, hide_assignment: a.hide_assignment };
        Ok(Plan { data, points, opts, out: a.out.clone() })
    }

    /// The parameters party 0 sends the others.
    fn header(&self) -> Header {
        Header { rows: self.data.rows, cols: self.data.cols, scale: self.data.scale, opts: self.opts }
    }
}

/// `--out` must be a file that can be created: not a directory, in a directory that exists.
fn check_out(out: &Path) -> Result<(), Failure> {
    if out.is_dir() {
        return Err(bad_input(format!("--out {}: is a directory; give a file name", out.display())));
    }
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(bad_input(format!("--out {}: the directory {} does not exist", out.display(), parent.display())));
    }
    Ok(())
}

/// An error of [`run::prepare`] with its context: the flag for `k`, the file and the place of the
/// largest value for values that do not fit the ring (never the value itself).
fn explain(e: InputError, data: &Dataset) -> String {
    match e {
        InputError::Data(e) => e.to_string(),
        InputError::Kmeans(e @ KmeansError::NoClusters) => format!("--k: {e}"),
        InputError::Kmeans(e @ KmeansError::TooManyClusters { .. }) => format!("--k: {e} of {}", data.name),
        InputError::Kmeans(e @ (KmeansError::DistanceTooLarge { .. } | KmeansError::SumTooLarge { .. })) => {
            match data.values.iter().max().and_then(|m| data.values.iter().position(|v| v == m)) {
                Some(i) => format!(
                    "{}: {e} (the largest value is on line {}, column {})",
                    data.name,
                    data.line_of(i / data.cols),
                    i % data.cols + 1
                ),
                None => format!("{}: {e}", data.name),
            }
        }
        InputError::Kmeans(e) => format!("{}: {e}", data.name),
    }
}

/// The three parties as threads of this process.
fn local(plan: &Plan, backend: Backend) -> Result<(), Failure> {
    let how = match backend {
        Backend::Tcp => "3, threads of this process, over tcp (loopback, mutual TLS)",
        Backend::Memory => "3, threads of this process, over memory channels",
    };
    print_parameters(plan, how);
    let started = Instant::now();
    let progress = |it: &Iteration| eprintln!("{}", progress_line(it, started));
    let r = run::run_local(&plan.points, plan.opts, backend, &progress)
        .map_err(|e| failed(format!("the parties failed: {e}")))?;
    let traffic: Vec<(usize, u64, u64)> = (0..PARTIES).map(|i| (i, r.bytes[i], r.rounds[i])).collect();
    report(plan, &r.clustering, r.seconds, &traffic)
}

/// One party as its own process (`--party`).
fn one_party(a: &KmeansArgs, id: usize) -> Result<(), Failure> {
    if id >= PARTIES {
        return Err(bad_input(format!("--party {id} is out of range: the parties are 0, 1 and 2")));
    }
    let Some(pki) = a.pki.as_deref().filter(|_| !a.addrs.is_empty()) else {
        return Err(bad_input(
            "--party runs one of three party processes: it needs --addrs (the 3 parties' addresses, in \
             party order, comma separated) and --pki (the directory `argus pki` wrote)",
        ));
    };
    if a.addrs.len() != PARTIES {
        return Err(bad_input(format!(
            "--addrs has {} address(es); give the {PARTIES} parties' addresses, in party order, comma separated",
            a.addrs.len()
        )));
    }
    let plan = if id == 0 {
        let plan = Plan::new(a)?;
        // The checks the others make on receipt (e.g. the number of values), made here first.
        Header::decode(&plan.header().encode()).map_err(|e| bad_input(format!("{}: {e}", plan.data.name)))?;
        Some(plan)
    } else {
        let given = [
            ("--data", a.data.is_some()),
            ("--k", a.k.is_some()),
            ("--iterations", a.iterations.is_some()),
            ("--hide-assignment", a.hide_assignment),
            ("--out", a.out.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, set)| *set) {
            return Err(bad_input(format!(
                "{flag} is for party 0: it holds the data and sends k, the iterations and the variant to \
                 parties 1 and 2"
            )));
        }
        None
    };
    let identity = tcp::TlsIdentity::from_pem_dir(pki, id).map_err(bad_input)?;
    let timeout = a.timeout.unwrap_or(DEFAULT_TIMEOUT);
    if let Some(plan) = &plan {
        let addrs: Vec<String> = a.addrs.iter().map(ToString::to_string).collect();
        print_parameters(plan, &format!("party 0 of 3 processes over TCP with mutual TLS ({})", addrs.join(", ")));
    }
    eprintln!("party {id}: connecting to the other parties");
    // Its errors name this party already.
    let net = tcp::connect(id, &a.addrs, &identity, NetConfig::with_timeout(timeout)).map_err(failed)?;
    let mut party = Party::new(net).map_err(|e| failed(format!("party {id}: {e}")))?;
    let header = match &plan {
        Some(plan) => {
            let header = plan.header();
            for q in 1..PARTIES {
                party.net().send(q, header.encode()).map_err(|e| failed(format!("party 0: {e}")))?;
            }
            header
        }
        None => {
            let bytes = party.net().recv(0).map_err(|e| failed(format!("party {id}: {e}")))?;
            Header::decode(&bytes).map_err(|e| failed(format!("party {id}: party 0 sent unusable parameters: {e}")))?
        }
    };
    eprintln!("party {id}: connected");
    let started = Instant::now();
    let before = party.stats();
    let (clustering, used) = (|| {
        let mut s = Additive3::new(&mut party, Z64::new())?;
        let values = plan.as_ref().map(|p| &p.points.values[..]);
        let x = s.input(0, values, header.rows * header.cols)?;
        let mut progress = |it: &Iteration| eprintln!("party {id}: {}", progress_line(it, started));
        let clustering = protocol::kmeans(&mut s, &x, header.rows, header.cols, header.opts, &mut progress)?;
        Ok::<(Clustering, Stats), argus_mpc::MpcError>((clustering, s.party().stats() - before))
    })()
    .map_err(|e| failed(format!("party {id}: {e}")))?;
    let seconds = started.elapsed().as_secs_f64();
    match &plan {
        Some(plan) => report(plan, &clustering, seconds, &[(id, used.bytes_sent, used.rounds)]),
        None => {
            println!(
                "party {id}: k-means of {} × {} points into {} clusters ({}): {}; {seconds:.3} s; sent {} in {} rounds",
                header.rows,
                header.cols,
                header.opts.k,
                variant_name(&header.opts),
                iterations_line(&clustering, &header.opts),
                bytes(used.bytes_sent),
                used.rounds
            );
            Ok(())
        }
    }
}

/// The parameters party 0 sends parties 1 and 2 before the protocol: six little-endian `u64`s,
/// `rows, cols, scale, k, max_iterations (0: until no point moves), hide_assignment (0 or 1)`.
/// Parties 1 and 2 need the shape to take their shares of the input, and every party must run
/// the same `k`, iterations and variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Header {
    rows: usize,
    cols: usize,
    scale: u32,
    opts: Options,
}

/// At most this many values (`rows × cols`): parties 1 and 2 allocate their shares from the
/// header, so a broken one must not make them allocate without bound (2^28 values: 2 GiB each).
const MAX_VALUES: u64 = 1 << 28;

/// Why a [`Header`] was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
enum HeaderError {
    /// Not [`Header::BYTES`] bytes.
    Length(usize),
    /// No rows, no columns, or more than [`MAX_VALUES`] values.
    Shape { rows: u64, cols: u64 },
    /// More decimals than [`MAX_SCALE`].
    Scale(u64),
    /// `k` not between 1 and the rows.
    Clusters { k: u64, rows: u64 },
    /// A variant other than 0 (the paper's) or 1 (hidden assignment).
    Variant(u64),
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Length(n) => write!(f, "{n} bytes, expected {}", Header::BYTES),
            HeaderError::Shape { rows, cols } => write!(
                f,
                "{rows} rows × {cols} columns: there must be at least one of each, and at most {MAX_VALUES} values"
            ),
            HeaderError::Scale(s) => write!(f, "scale {s}: at most {MAX_SCALE} decimals"),
            HeaderError::Clusters { k, rows } => write!(f, "k = {k}: must be between 1 and the {rows} rows"),
            HeaderError::Variant(v) => write!(f, "variant {v}: must be 0 (paper's) or 1 (hidden assignment)"),
        }
    }
}

impl std::error::Error for HeaderError {}

impl Header {
    /// Size of the message.
    const BYTES: usize = 6 * 8;

    fn encode(&self) -> Vec<u8> {
        let fields = [
            self.rows as u64,
            self.cols as u64,
            u64::from(self.scale),
            self.opts.k as u64,
            self.opts.max_iterations.map_or(0, |m| m as u64),
            u64::from(self.opts.hide_assignment),
        ];
        fields.iter().flat_map(|f| f.to_le_bytes()).collect()
    }

    fn decode(bytes: &[u8]) -> Result<Header, HeaderError> {
        if bytes.len() != Self::BYTES {
            return Err(HeaderError::Length(bytes.len()));
        }
        let field = |i: usize| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let (rows, cols, scale, k, iterations, variant) = (field(0), field(1), field(2), field(3), field(4), field(5));
        if rows == 0 || cols == 0 || rows.checked_mul(cols).is_none_or(|n| n > MAX_VALUES) {
            return Err(HeaderError::Shape { rows, cols });
        }
        if scale > u64::from(MAX_SCALE) {
            return Err(HeaderError::Scale(scale));
        }
        if k == 0 || k > rows {
            return Err(HeaderError::Clusters { k, rows });
        }
        let hide_assignment = match variant {
            0 => false,
            1 => true,
            v => return Err(HeaderError::Variant(v)),
        };
        // Values up to MAX_VALUES fit a usize; the iterations saturate (a run that long never ends).
        let max_iterations = (iterations > 0).then(|| usize::try_from(iterations).unwrap_or(usize::MAX));
        Ok(Header {
            rows: rows as usize,
            cols: cols as usize,
            scale: scale as u32,
            opts: Options { k: k as usize, max_iterations, hide_assignment },
        })
    }
}

fn variant_name(opts: &Options) -> &'static str {
    if opts.hide_assignment {
        "hidden assignment"
    } else {
        "paper's variant"
    }
}

/// One progress line: the iteration, and what it revealed.
fn progress_line(it: &Iteration, started: Instant) -> String {
    let t = started.elapsed().as_secs_f64();
    match (&it.moved, &it.sizes) {
        (Some(moved), Some(sizes)) => {
            let sizes: Vec<String> = sizes.iter().map(u64::to_string).collect();
            let moved = match moved {
                1 => "1 point moved".to_string(),
                n => format!("{n} points moved"),
            };
            format!("iteration {}: {moved}; sizes {} [{t:.2} s]", it.iteration, sizes.join(", "))
        }
        _ => {
            let moved = if it.any_moved { "points moved" } else { "no point moved" };
            format!("iteration {}: {moved} [{t:.2} s]", it.iteration)
        }
    }
}

fn iterations_line(c: &Clustering, opts: &Options) -> String {
    let n = c.iterations;
    let word = if n == 1 { "iteration" } else { "iterations" };
    match (c.converged, opts.max_iterations) {
        (true, _) => format!("{n} {word}, converged (the last moved no point)"),
        (false, Some(m)) => format!("{n} {word}, not converged (stopped at --iterations {m}; points still moved)"),
        (false, None) => format!("{n} {word}, not converged"),
    }
}

/// `1234567` as `1234567 bytes (1.23 MB)`.
fn bytes(n: u64) -> String {
    if n < 1_000_000 {
        format!("{n} bytes ({:.1} kB)", n as f64 / 1e3)
    } else {
        format!("{n} bytes ({:.2} MB)", n as f64 / 1e6)
    }
}

fn print_parameters(plan: &Plan, parties: &str) {
    let (data, opts) = (&plan.data, &plan.opts);
    println!(
        "data:        {}: {} rows × {} columns, scale {} (computed on as integers: the file's values × 10^{})",
        data.name, data.rows, data.cols, data.scale, data.scale
    );
    let stop = match opts.max_iterations {
        Some(m) => format!("at most {m} iteration{}", if m == 1 { "" } else { "s" }),
        None => "iterate until no point moves".to_string(),
    };
    println!("k:           {}, {stop}", opts.k);
    if opts.hide_assignment {
        println!(
            "variant:     hidden assignment: each iteration reveals only whether any point moved; the end, the centroids"
        );
    } else {
        println!(
            "variant:     paper's: each iteration reveals every point's cluster and the cluster sizes; the end, the centroids"
        );
    }
    println!("parties:     {parties}");
}

/// Prints the result, compares it with the plaintext reference and writes `--out`; any
/// disagreement is an error.
fn report(plan: &Plan, got: &Clustering, seconds: f64, traffic: &[(usize, u64, u64)]) -> Result<(), Failure> {
    let (data, points, opts) = (&plan.data, &plan.points, &plan.opts);
    let (k, cols) = (opts.k, data.cols);
    println!();
    print_centroids(plan, got);
    println!();
    println!("result:      {}", iterations_line(got, opts));
    println!("wall time:   {seconds:.3} s (input sharing and clustering)");
    for (n, &(id, sent, rounds)) in traffic.iter().enumerate() {
        let label = if n == 0 { "traffic:" } else { "" };
        println!("{label:<12} party {id} sent {} in {rounds} rounds", bytes(sent));
    }

    let want = reference::kmeans(&points.values, points.rows, cols, k, opts.max_iterations)
        .map_err(|e| failed(format!("the plaintext reference failed: {e}")))?;
    let mut diff = Vec::new();
    if got.centroids.len() != want.centroids.len() {
        diff.push(format!("{} centroid values, expected {}", got.centroids.len(), want.centroids.len()));
    } else {
        let clusters: Vec<String> = (0..k)
            .filter(|&j| got.centroids[j * cols..(j + 1) * cols] != want.centroids[j * cols..(j + 1) * cols])
            .map(|j| j.to_string())
            .collect();
        if !clusters.is_empty() {
            diff.push(format!("the centroids of cluster(s) {}", clusters.join(", ")));
        }
    }
    if got.iterations != want.iterations || got.converged != want.converged {
        diff.push(format!(
            "{} iterations (converged: {}), the reference {} (converged: {})",
            got.iterations, got.converged, want.iterations, want.converged
        ));
    }
    if opts.hide_assignment {
        if got.assignment.is_some() || got.sizes.is_some() {
            diff.push("an assignment was revealed with --hide-assignment".into());
        }
    } else {
        match &got.assignment {
            Some(a) if a.len() == want.assignment.len() => {
                let wrong: Vec<usize> = (0..a.len()).filter(|&i| a[i] != want.assignment[i]).collect();
                if let Some(&first) = wrong.first() {
                    diff.push(format!(
                        "the assignment of {} point(s) (the first on line {})",
                        wrong.len(),
                        data.line_of(first)
                    ));
                }
            }
            Some(a) => diff.push(format!("an assignment of {} points, expected {}", a.len(), want.assignment.len())),
            None => diff.push("no assignment".into()),
        }
        if got.sizes.as_ref() != Some(&want.sizes) {
            diff.push("the cluster sizes".into());
        }
    }
    if !diff.is_empty() {
        println!("check:       DISAGREES with the plaintext reference: {}", diff.join("; "));
        let unwritten = if plan.out.is_some() { " (--out not written)" } else { "" };
        return Err(failed(format!("the MPC result disagrees with the plaintext reference{unwritten}")));
    }
    let what =
        if opts.hide_assignment { "centroids and iterations" } else { "centroids, iterations, assignment and sizes" };
    println!("check:       agrees with the plaintext reference ({what})");
    if let (Some(out), Some(assignment)) = (&plan.out, &got.assignment) {
        let mut csv = String::from("row,cluster\n");
        for (i, j) in assignment.iter().enumerate() {
            csv += &format!("{i},{j}\n");
        }
        std::fs::write(out, csv).map_err(|e| failed(format!("--out {}: {e}", out.display())))?;
        println!("assignment:  written to {} (row,cluster)", out.display());
    }
    Ok(())
}

/// The centroids in the file's units, one row per cluster, with the header's column names (or
/// `col1`, `col2`, ...) and, in the paper's variant, the cluster sizes.
fn print_centroids(plan: &Plan, got: &Clustering) {
    let (data, points) = (&plan.data, &plan.points);
    let names: Vec<String> = match &data.header {
        Some(h) if h.len() == data.cols => h.clone(),
        _ => (1..=data.cols).map(|c| format!("col{c}")).collect(),
    };
    let mut table: Vec<Vec<String>> = Vec::new();
    let sized = got.sizes.as_ref().filter(|s| s.len() == plan.opts.k);
    let mut head = vec!["cluster".to_string()];
    if sized.is_some() {
        head.push("size".into());
    }
    head.extend(names);
    table.push(head);
    for (j, c) in got.centroids.chunks_exact(data.cols).enumerate() {
        let mut row = vec![j.to_string()];
        if let Some(s) = sized {
            row.push(s.get(j).map_or(String::new(), u64::to_string));
        }
        row.extend(c.iter().map(|&v| unscale(points.signed(v), data.scale)));
        table.push(row);
    }
    let widths: Vec<usize> =
        (0..table[0].len()).map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    println!("centroids, in the file's units:");
    for row in &table {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(cell, &w)| format!("{cell:>w$}")).collect();
        println!("  {}", cells.join("  "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(rows: usize, cols: usize, k: usize, max_iterations: Option<usize>, hide_assignment: bool) -> Header {
        Header { rows, cols, scale: 2, opts: Options { k, max_iterations, hide_assignment } }
    }

    #[test]
    fn a_header_round_trips() {
        for h in [header(150, 4, 3, None, false), header(1, 1, 1, Some(7), true)] {
            let bytes = h.encode();
            assert_eq!(bytes.len(), Header::BYTES);
            assert_eq!(Header::decode(&bytes), Ok(h));
        }
    }

    #[test]
    fn a_broken_header_is_refused_with_its_reason() {
        let good = header(10, 2, 3, None, false).encode();
        assert_eq!(Header::decode(&good[..47]), Err(HeaderError::Length(47)));
        let with = |i: usize, v: u64| {
            let mut b = good.clone();
            b[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
            Header::decode(&b)
        };
        assert_eq!(with(0, 0), Err(HeaderError::Shape { rows: 0, cols: 2 }));
        assert_eq!(with(1, 0), Err(HeaderError::Shape { rows: 10, cols: 0 }));
        assert_eq!(with(0, u64::MAX), Err(HeaderError::Shape { rows: u64::MAX, cols: 2 }));
        assert_eq!(with(0, MAX_VALUES), Err(HeaderError::Shape { rows: MAX_VALUES, cols: 2 }));
        assert_eq!(with(2, 10), Err(HeaderError::Scale(10)));
        assert_eq!(with(3, 0), Err(HeaderError::Clusters { k: 0, rows: 10 }));
        assert_eq!(with(3, 11), Err(HeaderError::Clusters { k: 11, rows: 10 }));
        assert_eq!(with(5, 2), Err(HeaderError::Variant(2)));
        assert!(with(0, MAX_VALUES / 2).is_ok());
        assert!(with(4, 5).unwrap().opts.max_iterations == Some(5));
        let msg = with(3, 11).unwrap_err().to_string();
        assert!(msg.contains("k = 11") && msg.contains("10 rows"), "{msg}");
    }

    #[test]
    fn a_timeout_must_be_finite_positive_and_fit_a_duration() {
        assert_eq!(crate::party::positive_seconds("0.5").unwrap(), Duration::from_millis(500));
        for bad in ["-1", "0", "NaN", "inf", "1e30", "soon"] {
            assert!(crate::party::positive_seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn iterations_are_a_whole_number_above_0() {
        assert_eq!(at_least_one("3"), Ok(3));
        assert!(at_least_one("0").unwrap_err().contains("at least 1"));
        assert!(at_least_one("-1").unwrap_err().contains("not a whole number"));
        assert!(at_least_one("2.5").unwrap_err().contains("not a whole number"));
    }

    #[test]
    fn progress_shows_only_what_was_revealed() {
        let t = Instant::now();
        let paper = Iteration { iteration: 2, moved: Some(5), any_moved: true, sizes: Some(vec![3, 4]) };
        let line = progress_line(&paper, t);
        assert!(line.starts_with("iteration 2: 5 points moved; sizes 3, 4"), "{line}");
        let hidden = Iteration { iteration: 3, moved: None, any_moved: false, sizes: None };
        assert!(progress_line(&hidden, t).starts_with("iteration 3: no point moved"));
    }
}
