//! The kernel planner: which way of running a many-lag correlation is fastest on this host.
//!
//! A correlation can run on several kernels (the row kernel of every level — on AMX the tile
//! unit — or a packed kernel), at several Karatsuba levels and block sizes, all with identical
//! results. Which is fastest depends on the CPU, its caches and the shape, so instead of
//! constants tuned on one host, [`plan_correlation`] times the candidates for the caller's shape
//! for a bounded moment and installs the fastest: [`Correlator::new`](super::Correlator::new)
//! uses it from then on. The choice is remembered per process and, given a cache file, per host
//! (CPU model, kernel level, shape, build), so a restart does not measure again.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::correlate::{packed_block_rows_or, Correlation, Packing, Plan, BLOCK_ROWS};
use super::isa::{detected, hardware, Isa};
use super::Correlator;

/// The leaf products' kernel of a [`CorrelationPath`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeafKernel {
    /// The matrix-product kernel of a level ([`super::gemm_u16`]'s) over overlapping windows of
    /// the query signals: on AMX the tile unit.
    Rows(Isa),
    /// A packed kernel.
    Packed(Packing),
}

/// How a correlation runs: its leaf kernel, Karatsuba levels (0: the direct product of every
/// rotation window) and database rows per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CorrelationPath {
    /// The leaf products' kernel.
    pub leaf: LeafKernel,
    /// Karatsuba levels (at most [`super::MAX_CORRELATION_LEVELS`]).
    pub levels: usize,
    /// Database rows transformed and multiplied at a time.
    pub block_rows: usize,
}

impl CorrelationPath {
    /// The path used when nothing was planned: the level's packed kernel where it has one (and
    /// `width` is even), else its row kernel; [`Correlation::default_levels_at`] levels; block
    /// sizes by rule of thumb.
    pub fn unplanned(isa: Isa, shape: Correlation, nq: usize) -> CorrelationPath {
        let isa = isa.min(hardware());
        let levels = shape.default_levels_at(isa);
        let leaf = match Packing::of(isa).filter(|_| shape.width.is_multiple_of(2)) {
            Some(p) => LeafKernel::Packed(p),
            None => LeafKernel::Rows(isa),
        };
        CorrelationPath { leaf, levels, block_rows: default_block_rows(leaf, shape, nq, levels) }
    }

    /// The kernel level whose instructions the path needs.
    pub fn level(&self) -> Isa {
        match self.leaf {
            LeafKernel::Rows(isa) => isa,
            LeafKernel::Packed(p) => p.isa(),
        }
    }

    /// Whether this CPU can run the path on `shape` (kernel level, even width for packing,
    /// levels and block size in range).
    pub fn runs_here(&self, shape: Correlation) -> bool {
        let kernel = match self.leaf {
            LeafKernel::Rows(isa) => isa <= hardware(),
            LeafKernel::Packed(p) => {
                cfg!(target_arch = "x86_64") && p.isa() <= hardware() && shape.width.is_multiple_of(2)
            }
        };
        kernel && self.levels <= super::MAX_CORRELATION_LEVELS && self.block_rows >= 1
    }
}

/// Block rows of the unplanned paths (see `correlate.rs`); the direct product (0 levels) has
/// no transformed taps to keep in cache, so it hands the row kernel large blocks to tile itself.
fn default_block_rows(leaf: LeafKernel, shape: Correlation, nq: usize, levels: usize) -> usize {
    match leaf {
        LeafKernel::Rows(_) if levels == 0 => DIRECT_BLOCK_ROWS,
        LeafKernel::Rows(_) => BLOCK_ROWS,
        LeafKernel::Packed(p) => packed_block_rows_or(&Plan::new(shape, nq.max(1), levels), p, BLOCK_ROWS),
    }
}

/// `rows-amx-l3-b24`, `packed-vnni-l5-b8`: what [`CorrelationPath::from_str`] reads back.
impl fmt::Display for CorrelationPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.leaf {
            LeafKernel::Rows(isa) => write!(f, "rows-{}", isa.name())?,
            LeafKernel::Packed(p) => write!(f, "packed-{}", p.name())?,
        }
        write!(f, "-l{}-b{}", self.levels, self.block_rows)
    }
}

impl FromStr for CorrelationPath {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("not a correlation path: {s:?} (e.g. packed-vnni-l5-b8, rows-amx-l0-b24)");
        let mut parts = s.trim().rsplitn(3, '-');
        let (b, l, kernel) =
            (parts.next().ok_or_else(bad)?, parts.next().ok_or_else(bad)?, parts.next().ok_or_else(bad)?);
        let number =
            |x: &str, prefix: char| x.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok()).ok_or_else(bad);
        let (levels, block_rows) = (number(l, 'l')?, number(b, 'b')?);
        let leaf = match kernel.split_once('-').ok_or_else(bad)? {
            ("rows", isa) => LeafKernel::Rows(Isa::from_name(isa).ok_or_else(bad)?),
            ("packed", "vnni") => LeafKernel::Packed(Packing::Vnni),
            ("packed", "avx2") => LeafKernel::Packed(Packing::Avx2),
            _ => return Err(bad()),
        };
        if levels > super::MAX_CORRELATION_LEVELS || block_rows == 0 {
            return Err(bad());
        }
        Ok(CorrelationPath { leaf, levels, block_rows })
    }
}

/// The machine the plans are for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// The CPU's model name (CPUID brand string on x86-64, else `/proc/cpuinfo`'s, else
    /// `unknown`).
    pub cpu: String,
    /// The kernel level in use ([`super::detected`]).
    pub isa: Isa,
}

/// This machine.
pub fn host() -> Host {
    static CPU: OnceLock<String> = OnceLock::new();
    Host { cpu: CPU.get_or_init(cpu_model).clone(), isa: detected() }
}

fn cpu_model() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        // SAFETY: CPUID is available on every x86-64 CPU; leaves past the maximum extended leaf
        // are not read.
        #[allow(unused_unsafe)]
        let brand = unsafe {
            if __cpuid(0x8000_0000).eax >= 0x8000_0004 {
                let mut bytes = Vec::with_capacity(48);
                for leaf in 0x8000_0002u32..=0x8000_0004 {
                    let r = __cpuid(leaf);
                    for v in [r.eax, r.ebx, r.ecx, r.edx] {
                        bytes.extend_from_slice(&v.to_le_bytes());
                    }
                }
                Some(String::from_utf8_lossy(&bytes).trim_matches(char::from(0)).trim().to_string())
            } else {
                None
            }
        };
        if let Some(b) = brand.filter(|b| !b.is_empty()) {
            return b;
        }
    }
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// What the planner may spend and where it remembers.
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// A file shared by the plans of this host, read before measuring and updated after; `None`
    /// for the process only.
    pub cache: Option<PathBuf>,
    /// Measuring stops taking new candidates past this (the fastest measured so far wins).
    pub budget: Duration,
    /// Measure even if a plan is remembered.
    pub replan: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions { cache: None, budget: Duration::from_secs(3), replan: false }
    }
}

/// Where a plan came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanSource {
    /// Measured now.
    Measured,
    /// Planned earlier in this process.
    Process,
    /// Read from the cache file.
    Cache,
}

/// The outcome of [`plan_correlation`].
#[derive(Clone, Debug)]
pub struct CorrelationPlan {
    /// The shape planned for.
    pub shape: Correlation,
    /// Queries per correlation planned for.
    pub queries: usize,
    /// The chosen path, now installed for `shape`.
    pub path: CorrelationPath,
    /// Where it came from.
    pub source: PlanSource,
    /// Every candidate measured (empty unless [`PlanSource::Measured`]): its path and its best
    /// seconds per correlation of `queries` queries against [`SAMPLE_ROWS`] rows on one thread.
    pub measured: Vec<(CorrelationPath, f64)>,
    /// The cache file could not be read or written (the plan holds for this process).
    pub cache_error: Option<String>,
}

/// Database rows every candidate is timed on: several blocks of every block size tried.
pub const SAMPLE_ROWS: usize = 256;

/// Candidates (the fastest at their first block size) whose other block sizes are tried.
const BLOCK_TUNED: usize = 3;

/// Timed rounds per candidate after a warm-up (the best one counts).
const ROUNDS: usize = 2;

/// Every candidate path for `shape` at `nq` queries on this CPU (at [`super::detected`]), the
/// unplanned one first: row kernels (AMX's and the best vector level's) at 0 to 5 levels, the
/// packed kernel (VNNI's, else AVX2's; even widths) at 2 to 6 levels, each at its rule-of-thumb
/// block size. [`plan_correlation`] then tries other block sizes for the fastest.
pub fn correlation_candidates(shape: Correlation, nq: usize) -> Vec<CorrelationPath> {
    let top = detected();
    let unplanned = CorrelationPath::unplanned(top, shape, nq);
    let most = shape.levels_while(2);
    let mut leaves: Vec<(LeafKernel, std::ops::RangeInclusive<usize>)> = Vec::new();
    if cfg!(target_arch = "x86_64") && shape.width.is_multiple_of(2) {
        if top >= Isa::Avx512Vnni {
            leaves.push((LeafKernel::Packed(Packing::Vnni), 2..=6));
        } else if top >= Isa::Avx2 {
            leaves.push((LeafKernel::Packed(Packing::Avx2), 2..=6));
        }
    }
    if top >= Isa::Amx {
        leaves.push((LeafKernel::Rows(Isa::Amx), 0..=5));
    }
    leaves.push((LeafKernel::Rows(top.min(Isa::Avx512Vnni)), 0..=5));
    let mut out = vec![unplanned];
    for (leaf, levels) in leaves {
        for levels in levels.filter(|&l| l <= most) {
            let path = CorrelationPath { leaf, levels, block_rows: default_block_rows(leaf, shape, nq, levels) };
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// Block rows of the direct product on a row kernel (as many as the timing sample has).
const DIRECT_BLOCK_ROWS: usize = SAMPLE_ROWS;

/// The block sizes [`plan_correlation`] tries for a path's kernel.
fn block_candidates(leaf: LeafKernel) -> &'static [usize] {
    match leaf {
        LeafKernel::Packed(_) => &[8, 16, 32, 64, 128],
        LeafKernel::Rows(_) => &[12, 24, 48, 96, DIRECT_BLOCK_ROWS],
    }
}

/// Plans installed in this process: by shape and kernel level, the queries planned for and the
/// path.
type Installed = Mutex<HashMap<(Correlation, Isa), (usize, CorrelationPath)>>;

/// The plans installed in this process.
fn installed() -> &'static Installed {
    static PLANS: OnceLock<Installed> = OnceLock::new();
    PLANS.get_or_init(Default::default)
}

/// Installs `path` for `shape` (planned for `nq` queries) without measuring: an operator's or a
/// benchmark's forced choice.
///
/// Errors: the CPU cannot run `path` on `shape` ([`CorrelationPath::runs_here`]).
pub fn install_correlation_path(shape: Correlation, nq: usize, path: CorrelationPath) -> Result<(), String> {
    if !path.runs_here(shape) || path.level() > detected() {
        let capped = if path.level() > detected() && path.runs_here(shape) {
            format!(", capped by {}", super::ISA_ENV)
        } else {
            String::new()
        };
        return Err(format!("kernel path {path} cannot run here (CPU {}, level {}{capped})", host().cpu, detected()));
    }
    installed().lock().unwrap_or_else(|e| e.into_inner()).insert((shape, detected()), (nq.max(1), path));
    Ok(())
}

/// The path [`Correlator::new`](super::Correlator::new) takes for `shape` at `nq` queries: the
/// installed plan, else [`CorrelationPath::unplanned`].
pub fn correlation_path(shape: Correlation, nq: usize) -> CorrelationPath {
    let key = (shape, detected());
    match installed().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        Some(&(_, path)) => path,
        None => CorrelationPath::unplanned(detected(), shape, nq),
    }
}

/// Chooses the fastest path for correlations of `shape` with `nq` queries on this host and
/// installs it (see the module's documentation): the plan remembered in this process or in the
/// cache file if there is one (unless `options.replan`), else every [`correlation_candidates`]
/// timed on random data on the calling thread — a warm-up call, then two interleaved
/// rounds, until `options.budget` is spent (the unplanned path is always timed) — then the
/// fastest three's kernels and levels at other block sizes; the fastest time of all wins.
///
/// One plan at a time per process: parties of one process wait for the first one's.
pub fn plan_correlation(shape: Correlation, nq: usize, options: &PlanOptions) -> CorrelationPlan {
    static PLANNING: Mutex<()> = Mutex::new(());
    let _one_at_a_time = PLANNING.lock().unwrap_or_else(|e| e.into_inner());
    let nq = nq.max(1);
    let host = host();
    let plan = |path, source, measured, cache_error| CorrelationPlan {
        shape,
        queries: nq,
        path,
        source,
        measured,
        cache_error,
    };
    let install = |path: CorrelationPath| {
        installed().lock().unwrap_or_else(|e| e.into_inner()).insert((shape, host.isa), (nq, path));
    };
    if !options.replan {
        let remembered = installed().lock().unwrap_or_else(|e| e.into_inner()).get(&(shape, host.isa)).copied();
        if let Some((_, path)) = remembered.filter(|(q, _)| *q == nq) {
            return plan(path, PlanSource::Process, Vec::new(), None);
        }
    }
    let key = cache_key(&host, shape, nq);
    let parse = |line: &str| line.parse::<CorrelationPath>().ok().filter(|p| p.runs_here(shape));
    let (measured, remembered) = remembered_or_measured(
        &key,
        options,
        parse,
        || measure(shape, nq, options.budget),
        |m| Some(best(m).to_string()),
    );
    let (path, source, measured) = match remembered.path {
        Some(path) => (path, remembered.source, Vec::new()),
        None => (best(&measured), PlanSource::Measured, measured),
    };
    install(path);
    plan(path, source, measured, remembered.cache_error)
}

/// The fastest of [`measure`]'s timings.
fn best(measured: &[(CorrelationPath, f64)]) -> CorrelationPath {
    measured.iter().min_by(|x, y| x.1.total_cmp(&y.1)).map(|m| m.0).expect("the unplanned path is timed")
}

/// What [`remembered_or_measured`] found in the cache.
#[derive(Clone, Debug)]
pub struct Remembered<T> {
    /// The plan read from the cache (`None`: measured now).
    pub path: Option<T>,
    /// [`PlanSource::Cache`] or [`PlanSource::Measured`].
    pub source: PlanSource,
    /// The cache file could not be read or written (the plan holds for this process).
    pub cache_error: Option<String>,
}

/// The cache side of a plan, for [`plan_correlation`] and any other plan of this host (the iris
/// comparison's chunk): under the cache's lock (processes sharing the cache, such as the three
/// nodes of a local deployment, plan one at a time, each on a quiet machine, the later ones
/// finding the first one's choice), `key`'s line read back by `parse` (unless
/// `options.replan`; a line `parse` refuses is measured over), else `measure` run and its
/// result's `line` written under `key` (where it has one). Returns the measurement
/// (`M::default()` where the cache answered) and what the cache gave.
pub fn remembered_or_measured<T, M: Default>(
    key: &str,
    options: &PlanOptions,
    parse: impl Fn(&str) -> Option<T>,
    measure: impl FnOnce() -> M,
    line: impl Fn(&M) -> Option<String>,
) -> (M, Remembered<T>) {
    let mut cache_error = None;
    let _lock = options.cache.as_deref().map(|f| CacheLock::take(f, options.budget));
    if let (Some(file), false) = (&options.cache, options.replan) {
        match read_cache(file) {
            Ok(lines) => {
                if let Some(path) = lines.get(key).and_then(|l| parse(l)) {
                    return (M::default(), Remembered { path: Some(path), source: PlanSource::Cache, cache_error });
                }
            }
            Err(e) => cache_error = Some(e),
        }
    }
    let measured = measure();
    if let (Some(file), Some(line)) = (&options.cache, line(&measured)) {
        if let Err(e) = write_cache(file, key, &line) {
            cache_error = Some(e);
        }
    }
    (measured, Remembered { path: None, source: PlanSource::Measured, cache_error })
}

/// The timing of [`plan_correlation`]: every candidate's best seconds.
fn measure(shape: Correlation, nq: usize, budget: Duration) -> Vec<(CorrelationPath, f64)> {
    let start = Instant::now();
    let mut rng = super::measure::XorShift(0x9E37_79B9_7F4A_7C15);
    let mut random = |n: usize| -> Vec<u16> { (0..n).map(|_| rng.next() as u16).collect() };
    let signals = random(nq * shape.signal_len());
    let taps = random(SAMPLE_ROWS * shape.row_len());
    let mut out = vec![0u16; shape.lags * nq * SAMPLE_ROWS];
    let mut timed = |paths: Vec<CorrelationPath>, measured: &mut Vec<(CorrelationPath, f64)>| {
        let mut runs: Vec<(CorrelationPath, Correlator, f64)> = Vec::new();
        for path in paths {
            // The first candidate is always timed; others only while the budget lasts.
            if !runs.is_empty() && start.elapsed() > budget {
                break;
            }
            let Ok(c) = Correlator::with_path(path, shape, &signals) else { continue };
            c.correlate_one_thread(&taps, &mut out); // warm-up
            runs.push((path, c, f64::INFINITY));
        }
        for round in 0..ROUNDS {
            if round > 0 && start.elapsed() > budget {
                break;
            }
            for (_, c, best) in runs.iter_mut() {
                let t = Instant::now();
                c.correlate_one_thread(&taps, &mut out);
                *best = best.min(t.elapsed().as_secs_f64());
            }
        }
        measured.extend(runs.into_iter().map(|(p, _, t)| (p, t)));
    };
    let mut measured = Vec::new();
    timed(correlation_candidates(shape, nq), &mut measured);
    // Block sizes for the fastest few (a kernel and level slower at the rule-of-thumb block size
    // may be the fastest at another), each raced against its own first time in the same rounds.
    let mut best: Vec<(CorrelationPath, f64)> = measured.clone();
    best.sort_by(|x, y| x.1.total_cmp(&y.1));
    let mut others = Vec::new();
    for &(path, _) in best.iter().take(BLOCK_TUNED) {
        others.push(path);
        for &block_rows in block_candidates(path.leaf) {
            let p = CorrelationPath { block_rows, ..path };
            if !measured.iter().any(|(q, _)| *q == p) && !others.contains(&p) {
                others.push(p);
            }
        }
    }
    if start.elapsed() < budget {
        let mut again = Vec::new();
        timed(others, &mut again);
        for (p, t) in again {
            match measured.iter_mut().find(|(q, _)| *q == p) {
                Some(m) => m.1 = m.1.min(t),
                None => measured.push((p, t)),
            }
        }
    }
    measured
}

/// An advisory lock on a file beside the cache (`<cache>.lock`), held while planning; released
/// when dropped, or by the system when its process dies (so a node killed while planning leaves
/// nothing that stops the next one).
struct CacheLock {
    /// The locked file (`None`: planning unlocked).
    held: Option<std::fs::File>,
}

impl CacheLock {
    /// Waits for the lock while another process holds it: at most as long as a plan takes
    /// (`budget` twice, and some seconds), after which, or where the file cannot be locked, it
    /// plans unlocked.
    fn take(cache: &Path, budget: Duration) -> CacheLock {
        let lock = cache.with_extension("lock");
        if let Some(dir) = lock.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        let Ok(file) = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock) else {
            return CacheLock { held: None };
        };
        let give_up = Instant::now() + 2 * budget + Duration::from_secs(5);
        loop {
            match file.try_lock() {
                Ok(()) => return CacheLock { held: Some(file) },
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < give_up => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(_) => return CacheLock { held: None },
            }
        }
    }
}

impl Drop for CacheLock {
    fn drop(&mut self) {
        if let Some(file) = &self.held {
            let _ = file.unlock(); // closing the file would release it too
        }
    }
}

/// The cache line's key: what makes a plan valid (the planner's own version, the build, the CPU,
/// the kernel level, the shape, the queries).
fn cache_key(host: &Host, shape: Correlation, nq: usize) -> String {
    plan_key(host, "correlation v1", &format!("shape {}x{}x{} queries {nq}", shape.positions, shape.width, shape.lags))
}

/// A cache key for a plan of `what` (its name and version) for `shape` on `host`: with the build
/// (this executable's modification time), the CPU and the kernel level, so another build or CPU
/// plans again.
pub fn plan_key(host: &Host, what: &str, shape: &str) -> String {
    let build = std::env::current_exe()
        .and_then(|p| p.metadata())
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let clean = |s: &str| -> String { s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect() };
    format!("{what} build {build} cpu {} isa {} {}", clean(&host.cpu), host.isa, clean(shape))
}

/// The cache file's lines `key \t path`; a missing file is an empty cache.
fn read_cache(file: &Path) -> Result<HashMap<String, String>, String> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(text
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HashMap::new()),
        Err(e) => Err(format!("kernel plan cache {}: {e}", file.display())),
    }
}

/// Sets `key`'s line in the cache file (written whole to a temporary file, then renamed).
fn write_cache(file: &Path, key: &str, value: &str) -> Result<(), String> {
    let err = |e: std::io::Error| format!("kernel plan cache {}: {e}", file.display());
    let mut lines = read_cache(file)?;
    lines.insert(key.to_string(), value.to_string());
    let mut lines: Vec<_> = lines.into_iter().collect();
    lines.sort();
    let text: String = lines.iter().map(|(k, v)| format!("{k}\t{v}\n")).collect();
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::rename(&tmp, file).map_err(err)
}

/// Forgets the plan installed for `shape` in this process (tests).
#[cfg(test)]
fn forget(shape: Correlation) {
    installed().lock().unwrap_or_else(|e| e.into_inner()).retain(|(s, _), _| *s != shape);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The planner installs the fastest path it measured, which the unplanned one is among;
    /// a second call finds it in the process, and with a cache file a fresh process (here: the
    /// plan forgotten) reads it back instead of measuring.
    #[test]
    fn the_plan_is_the_fastest_candidate_measured_and_is_remembered() {
        let shape = Correlation { positions: 24, width: 8, lags: 7 };
        let nq = 5;
        let file = std::env::temp_dir().join(format!("argus-plan-test-{}", std::process::id())).join("plans");
        let options = PlanOptions { cache: Some(file.clone()), budget: Duration::from_secs(5), replan: true };
        let plan = plan_correlation(shape, nq, &options);
        assert_eq!(plan.source, PlanSource::Measured);
        assert!(plan.cache_error.is_none(), "{:?}", plan.cache_error);
        let fastest = plan.measured.iter().min_by(|x, y| x.1.total_cmp(&y.1)).unwrap();
        assert_eq!(plan.path, fastest.0);
        assert!(plan.measured.iter().any(|(p, _)| *p == CorrelationPath::unplanned(detected(), shape, nq)));
        let candidates = correlation_candidates(shape, nq);
        assert!(candidates.iter().all(|c| plan.measured.iter().any(|(p, _)| p == c)), "every candidate timed");
        assert_eq!(correlation_path(shape, nq), plan.path);
        assert_eq!(Correlator::new(shape, None, &vec![0; nq * shape.signal_len()]).unwrap().path(), plan.path);

        let again = plan_correlation(shape, nq, &PlanOptions { replan: false, ..options.clone() });
        assert_eq!((again.source, again.path), (PlanSource::Process, plan.path));
        forget(shape);
        let cached = plan_correlation(shape, nq, &PlanOptions { replan: false, ..options.clone() });
        assert_eq!((cached.source, cached.path), (PlanSource::Cache, plan.path));
        assert!(cached.measured.is_empty());

        // Another shape's line is added next to it; a line this CPU cannot run is measured over.
        let other = Correlation { positions: 20, width: 8, lags: 7 };
        forget(other);
        let key = cache_key(&host(), other, nq);
        let foreign = CorrelationPath { leaf: LeafKernel::Rows(Isa::Amx), levels: 1, block_rows: 24 };
        write_cache(&file, &key, if hardware() < Isa::Amx { "rows-amx-l1-b24" } else { "nonsense" }).unwrap();
        let p = plan_correlation(other, nq, &PlanOptions { replan: false, ..options });
        assert_eq!(p.source, PlanSource::Measured);
        assert_ne!(p.path, foreign);
        let lines = read_cache(&file).unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[&key], p.path.to_string());
        std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
    }

    /// A plan waits for another process's lock on the cache and then finds that process's
    /// choice instead of measuring; a holder that never lets go stops nobody for long.
    #[test]
    fn plans_wait_for_the_cache_lock() {
        let shape = Correlation { positions: 22, width: 6, lags: 5 };
        let dir = std::env::temp_dir().join(format!("argus-plan-lock-{}", std::process::id()));
        let file = dir.join("plans");
        let options = PlanOptions { cache: Some(file.clone()), budget: Duration::from_millis(200), replan: false };
        forget(shape);
        // "The other process": its own open file, so its lock excludes ours.
        let lock = CacheLock::take(&file, options.budget);
        assert!(lock.held.is_some());
        let theirs = CorrelationPath::unplanned(detected(), shape, 2);
        let waiter = std::thread::spawn({
            let options = options.clone();
            move || plan_correlation(shape, 2, &options)
        });
        std::thread::sleep(Duration::from_millis(100));
        write_cache(&file, &cache_key(&host(), shape, 2), &theirs.to_string()).unwrap();
        drop(lock);
        let plan = waiter.join().unwrap();
        assert_eq!((plan.source, plan.path), (PlanSource::Cache, theirs));
        // A holder that never lets go: waited for a while, then planned without it.
        forget(shape);
        let held = CacheLock::take(&file, options.budget);
        let t = Instant::now();
        let plan = plan_correlation(shape, 2, &options);
        assert_eq!(plan.source, PlanSource::Cache);
        assert!(t.elapsed() >= 2 * options.budget, "waited {:?}", t.elapsed());
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// With no budget only the unplanned path is timed, and it is chosen.
    #[test]
    fn no_budget_keeps_the_unplanned_path() {
        let shape = Correlation { positions: 18, width: 4, lags: 5 };
        let options = PlanOptions { cache: None, budget: Duration::ZERO, replan: true };
        let plan = plan_correlation(shape, 3, &options);
        assert_eq!(plan.measured.len(), 1);
        assert_eq!(plan.path, CorrelationPath::unplanned(detected(), shape, 3));
    }

    #[test]
    fn paths_print_and_parse() {
        for s in ["rows-amx-l0-b24", "packed-vnni-l5-b8", "rows-portable-l3-b12", "packed-avx2-l6-b128"] {
            let p: CorrelationPath = s.parse().unwrap();
            assert_eq!(p.to_string(), s);
        }
        for bad in ["", "rows-l3-b2", "packed-sse-l1-b8", "rows-amx-l9-b24", "rows-amx-l1-b0", "rows-amx-3-24"] {
            assert!(bad.parse::<CorrelationPath>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_host_is_named() {
        let h = host();
        assert!(!h.cpu.is_empty());
        assert_eq!(h.isa, detected());
    }
}
