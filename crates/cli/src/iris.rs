//! `argus iris ...`: tools around the plaintext iris model.

use std::path::PathBuf;

use argus_iris::{Generator, IrisGeometry, MatchConfig, Template};
use clap::{Args, Subcommand};

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
    layout: crate::service::LayoutArg,
    /// Seed of the generator (the same seed writes the same files).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs an `argus iris` subcommand.
pub fn run(cmd: IrisCmd) -> Result<(), String> {
    match cmd {
        IrisCmd::Gen(a) => gen(a),
        IrisCmd::Match { query, enrolled } => {
            let q = Template::read_file(&query).map_err(|e| e.to_string())?;
            let e = Template::read_file(&enrolled).map_err(|e| e.to_string())?;
            let (gq, ge) = (q.geometry().map_err(|e| e.to_string())?, e.geometry().map_err(|e| e.to_string())?);
            if gq != ge {
                return Err(format!(
                    "the two templates have different layouts: {} is {}, {} is {}",
                    query.display(),
                    gq.describe(),
                    enrolled.display(),
                    ge.describe()
                ));
            }
            let cfg = MatchConfig::default();
            let m = cfg.match_template(&q, &e).map_err(|e| e.to_string())?;
            println!("{}", if m { "match" } else { "no match" });
            Ok(())
        }
    }
}

/// Most files one `argus iris gen` writes (~8.5 kB each in the deployed layout): more is almost
/// certainly a typo, and several runs with different `--seed`s make a larger set.
const MAX_FILES: usize = 1_000_000;

fn gen(a: GenArgs) -> Result<(), String> {
    let genuine = match a.genuine {
        Some(n) if n > a.count => return Err(format!("--genuine {n} exceeds --count {}", a.count)),
        Some(n) => n,
        None => a.count.min(5),
    };
    if a.count.saturating_add(genuine).saturating_add(a.impostors) > MAX_FILES {
        return Err(format!(
            "--count + genuine re-captures + --impostors is more than {MAX_FILES} files; run several times with different --seed values"
        ));
    }
    let geometry = a.layout.geometry();
    let names = (0..a.count)
        .map(|i| format!("identity-{i:05}.json"))
        .chain((0..genuine).map(|i| format!("genuine-{i:05}.json")))
        .chain((0..a.impostors).map(|i| format!("impostor-{i:05}.json")));
    // Refuse before writing anything if a file exists: nothing lost.
    if let Some(name) = names.clone().find(|name| a.out.join(name).exists()) {
        return Err(format!("{} already exists; choose an empty --out directory", a.out.join(name).display()));
    }
    // Nothing half-done: on failure the files this run wrote go, and the directories it made.
    let mut created = crate::created::Created::default();
    created.dir_all(&a.out)?;
    let result = write_templates(&a, geometry, genuine, names, &mut created.files);
    if result.is_err() {
        created.undo();
    }
    result?;
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

/// Generates the templates in the generator's order (identities, re-captures of the first
/// `genuine`, impostors) and writes each under its name as soon as it is made, so memory holds
/// only the identities that get a re-capture; `written` collects the paths.
fn write_templates(
    a: &GenArgs,
    geometry: IrisGeometry,
    genuine: usize,
    mut names: impl Iterator<Item = String>,
    written: &mut Vec<PathBuf>,
) -> Result<(), String> {
    let mut g = Generator::new(geometry, a.seed).map_err(|e| e.to_string())?;
    let total = a.count + genuine + a.impostors;
    // A bar only where the wait is noticeable (~0.2 ms per file).
    let pb =
        if total >= 20_000 { crate::demo::bar(total as u64, "templates") } else { indicatif::ProgressBar::hidden() };
    let mut write = |t: &Template| {
        let path = a.out.join(names.next().expect("a name per template"));
        t.write_file(&path).map_err(|e| e.to_string())?;
        written.push(path);
        pb.inc(1);
        Ok::<_, String>(())
    };
    let mut kept = Vec::with_capacity(genuine);
    for i in 0..a.count {
        let t = g.random_template();
        write(&t)?;
        if i < genuine {
            kept.push(t);
        }
    }
    for t in &kept {
        write(&g.genuine_template(t).map_err(|e| e.to_string())?)?;
    }
    for _ in 0..a.impostors {
        write(&g.impostor())?;
    }
    pb.finish_and_clear();
    Ok(())
}
