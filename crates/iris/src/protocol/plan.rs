//! The kernels a scheme's batch checks run on this host: planned by measurement
//! ([`argus_math::kernels::plan_correlation`]) when a node starts and before `argus bench`
//! measures, and named in `argus status` and the bench's records.

use argus_math::kernels::{self, CorrelationPath, CorrelationPlan, PlanOptions};

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
