//! The kernels a scheme's batch checks run on this host, and the comparisons per chunk of its
//! comparison phase: planned by measurement ([`argus_math::kernels::plan_correlation`],
//! [`plan_compare_chunk`]) when a node starts and before `argus bench` measures, and named in
//! `argus status` and the bench's records.

use argus_math::kernels::{self, CorrelationPath, CorrelationPlan, PlanOptions, PlanSource};
use argus_mpc::rep3::Adder;
use argus_mpc::MpcError;

use super::compare::{ChunkTimes, CHUNK_CANDIDATES};
use super::scheme::IrisScheme;
use crate::{IrisGeometry, MatchConfig};

/// Plans every correlation of `scheme`'s batch checks on `geometry` for batches of `batch`
/// queries, and installs the plans for this process: the fastest path measured now, or the one
/// remembered in `options.cache`. Schemes without a middle product have nothing to plan.
pub fn plan_kernels<S: IrisScheme + ?Sized>(
    scheme: &S,
    geometry: IrisGeometry,
    cfg: &MatchConfig,
    batch: usize,
    options: &PlanOptions,
) -> Vec<CorrelationPlan> {
    scheme
        .correlations(geometry, cfg)
        .into_iter()
        .map(|shape| kernels::plan_correlation(shape, batch, options))
        .collect()
}

/// The kernels of `scheme`'s batch checks as a node's `batch.kernel` or the bench's `--kernel`
/// says: `auto` plans them ([`plan_kernels`]; the plans are returned), `unplanned` installs the
/// rule-of-thumb path, anything else is a path to install as given (nothing returned).
///
/// Errors: a malformed path, or one this CPU cannot run (or `ARGUS_ISA` excludes).
pub fn choose_kernels<S: IrisScheme + ?Sized>(
    scheme: &S,
    geometry: IrisGeometry,
    cfg: &MatchConfig,
    batch: usize,
    setting: &str,
    options: &PlanOptions,
) -> Result<Vec<CorrelationPlan>, String> {
    if setting == "auto" {
        return Ok(plan_kernels(scheme, geometry, cfg, batch, options));
    }
    let forced = setting.parse::<CorrelationPath>();
    for shape in scheme.correlations(geometry, cfg) {
        let path = match setting {
            "unplanned" => CorrelationPath::unplanned(kernels::detected(), shape, batch),
            _ => forced.clone()?,
        };
        kernels::install_correlation_path(shape, batch, path)?;
    }
    Ok(Vec::new())
}

/// The kernel `scheme`'s batch checks run now, by name: each correlation's path (as planned, or
/// unplanned), e.g. `packed-vnni-l5-b8`, joined by `+` where code and mask differ; the ring
/// matrix product at the kernel level for schemes without a middle product (`gemm-avx512vnni`).
pub fn kernel_name<S: IrisScheme + ?Sized>(
    scheme: &S,
    geometry: IrisGeometry,
    cfg: &MatchConfig,
    batch: usize,
) -> String {
    let paths: Vec<String> = scheme
        .correlations(geometry, cfg)
        .into_iter()
        .map(|shape| kernels::correlation_path(shape, batch.max(1)).to_string())
        .collect();
    if paths.is_empty() {
        format!("gemm-{}", kernels::detected())
    } else {
        paths.join("+")
    }
}

/// The outcome of [`plan_compare_chunk`].
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkPlan {
    /// Every candidate's time and the rounds per chunk, from which a session picks its chunk
    /// for its round time ([`ChunkTimes::best_for`]).
    pub times: ChunkTimes,
    /// Where they came from ([`PlanSource::Measured`] or [`PlanSource::Cache`]).
    pub source: PlanSource,
    /// The cache file could not be read or written (the plan holds for this process).
    pub cache_error: Option<String>,
}

impl ChunkPlan {
    /// The chunk for parties with no delay between them (one machine).
    pub fn local_chunk(&self) -> usize {
        self.times.best_for(std::time::Duration::ZERO).unwrap_or(super::COMPARE_CHUNK)
    }
}

/// Plans the comparisons per chunk of `scheme`'s comparison phase for codes of `geometry` under
/// `cfg` on this host, for `compare_chunk = "auto"` on one machine or a LAN (far-apart nodes
/// take larger chunks by their round time, [`super::auto_compare_chunk`]): every one of
/// [`CHUNK_CANDIDATES`] timed on random shares by three in-memory parties
/// ([`IrisScheme::time_compare_chunks`]) while `options.budget` lasts — or the times
/// remembered in `options.cache` (per build, CPU, kernel level, scheme, code length, threshold
/// and mask mode; unless `options.replan`). A chunk is the block of the comparison phase's
/// working set (~40 bytes per comparison and party), so which one is fastest depends on the
/// host's caches; smaller chunks run the phase's rounds more often, so a session picks with its
/// round time ([`ChunkTimes::best_for`], [`super::choose_compare_chunk`]). `None` with the log-depth adder (its few rounds keep its default) and for
/// schemes whose comparison is not timed.
///
/// Errors: the scheme cannot run codes of `geometry` under `cfg`.
pub fn plan_compare_chunk<S: IrisScheme + ?Sized>(
    scheme: &S,
    geometry: IrisGeometry,
    cfg: &MatchConfig,
    adder: Adder,
    options: &PlanOptions,
) -> Result<Option<ChunkPlan>, MpcError> {
    if adder != Adder::Ripple {
        return Ok(None);
    }
    let len = geometry.bits();
    let shape = format!(
        "scheme {} bits {len} threshold {} mask {:?} adder ripple candidates {:?}",
        scheme.name(),
        cfg.threshold,
        cfg.mask_mode,
        CHUNK_CANDIDATES
    );
    let key = kernels::plan_key(&kernels::host(), "compare-chunk v2", &shape);
    let parse = |line: &str| ChunkTimes::from_line(line, &CHUNK_CANDIDATES);
    let mut failed = None;
    let measure = || match scheme.time_compare_chunks(len, cfg, adder, &CHUNK_CANDIDATES, options.budget) {
        Some(Ok(m)) => m,
        Some(Err(e)) => {
            failed = Some(e);
            ChunkTimes::default()
        }
        None => ChunkTimes::default(),
    };
    let line = |t: &ChunkTimes| (!t.seconds.is_empty()).then(|| t.to_line());
    let (measured, remembered) = kernels::remembered_or_measured(&key, options, parse, measure, line);
    if let Some(e) = failed {
        return Err(e);
    }
    let times = remembered.path.unwrap_or(measured);
    if times.seconds.is_empty() {
        return Ok(None);
    }
    Ok(Some(ChunkPlan { times, source: remembered.source, cache_error: remembered.cache_error }))
}
