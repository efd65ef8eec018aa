//! `argus iris ...`: tools around the plaintext iris model.

use std::path::PathBuf;

use argus_iris::{Generator, IrisGeometry, MatchConfig, Template};
use clap::{Args, Subcommand, ValueEnum};

/// `argus iris` subcommands.
#[derive(Subcommand, Debug)]
pub enum IrisCmd {
    /// Write synthetic iris templates (both eyes): new identities, genuine re-captures of some of
    /// them (rotated, 10-25 % of bits flipped, masks perturbed) and impostors.
    Gen(GenArgs),
    /// Compare two template files with the plaintext reference matcher (Alg. 1, 31 rotations).
    Match {
        /// The query template (Argus JSON).
        query: PathBuf,
        /// The enrolled template (Argus JSON).
        enrolled: PathBuf,
    },
}

/// Code layout.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Layout {
    /// 16 x 200 x 2 x 2 = 12800 bits, as the deployed system uses.
    Deployed,
    /// 16 x 256 x 2 x 2 = 16384 bits, as the open-iris package emits.
    OpenIris,
}

/// Arguments of `argus iris gen`.
#[derive(Args, Debug)]
pub struct GenArgs {
    /// Directory to write into (created if missing; existing files are never overwritten).
    #[arg(long)]
    out: PathBuf,
    /// Number of distinct identities (`identity-NNNNN.json`).
    #[arg(long, default_value_t = 10)]
    count: usize,
    /// For each of the first N identities also write a genuine re-capture (`genuine-NNNNN.json`);
    /// at most `--count` [default: 5, or `--count` if fewer]
    #[arg(long)]
    genuine: Option<usize>,
    /// Also write this many impostors (`impostor-NNNNN.json`), identities not in the set.
    #[arg(long, default_value_t = 5)]
    impostors: usize,
    /// Code layout.
    #[arg(long, value_enum, default_value = "deployed")]
    layout: Layout,
    /// Seed of the generator (the same seed writes the same files).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs an `argus iris` subcommand.
pub fn run(cmd: IrisCmd) -> Result<(), String> {
    match cmd {
        IrisCmd::Gen(a) => gen(a),
        IrisCmd::Match { query, enrolled } => {
            let q = Template::read_file(&query).map_err(|e| format!("{}: {e}", query.display()))?;
            let e = Template::read_file(&enrolled).map_err(|e| format!("{}: {e}", enrolled.display()))?;
            let cfg = MatchConfig::default();
            let m = cfg.match_template(&q, &e).map_err(|e| e.to_string())?;
            println!("{}", if m { "match" } else { "no match" });
            Ok(())
        }
    }
}

fn gen(a: GenArgs) -> Result<(), String> {
    let genuine = match a.genuine {
        Some(n) if n > a.count => return Err(format!("--genuine {n} exceeds --count {}", a.count)),
        Some(n) => n,
        None => a.count.min(5),
    };
    let geometry = match a.layout {
        Layout::Deployed => IrisGeometry::DEPLOYED,
        Layout::OpenIris => IrisGeometry::OPEN_IRIS,
    };
    std::fs::create_dir_all(&a.out).map_err(|e| format!("creating {}: {e}", a.out.display()))?;
    let mut g = Generator::new(geometry, a.seed).map_err(|e| e.to_string())?;
    let mut plan: Vec<(String, Template)> = Vec::with_capacity(a.count + genuine + a.impostors);
    let ids: Vec<Template> = (0..a.count).map(|_| g.random_template()).collect();
    for (i, t) in ids.iter().enumerate() {
        plan.push((format!("identity-{i:05}.json"), t.clone()));
    }
    for (i, t) in ids.iter().take(genuine).enumerate() {
        plan.push((format!("genuine-{i:05}.json"), g.genuine_template(t).map_err(|e| e.to_string())?));
    }
    for i in 0..a.impostors {
        plan.push((format!("impostor-{i:05}.json"), g.impostor()));
    }
    // Refuse before writing anything if a file exists: nothing half-written, nothing lost.
    if let Some((name, _)) = plan.iter().find(|(name, _)| a.out.join(name).exists()) {
        return Err(format!("{} already exists; choose an empty --out directory", a.out.join(name).display()));
    }
    for (name, t) in &plan {
        t.write_file(a.out.join(name)).map_err(|e| format!("writing {name}: {e}"))?;
    }
    println!(
        "wrote {} identities, {} genuine re-captures and {} impostors ({}) to {}",
        a.count,
        genuine,
        a.impostors,
        geometry.describe(),
        a.out.display()
    );
    Ok(())
}
