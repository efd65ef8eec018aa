//! `argus demo`: the flagship end to end. Three nodes as local processes on the embedded store,
//! a synthetic population bulk-imported, then a stream of queries — new identities and rotated,
//! noisy re-captures — enrolled through the full protocol, every outcome checked against the
//! plaintext reference replayed over the nodes' commit log. Exits non-zero on any disagreement.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use argus_client::{new_request_id, with_scheme, Client, ClientConfig, IrisSettings, Kind};
use argus_iris::protocol::scheme::IrisScheme;
use argus_iris::{Generator, MatchConfig, Template};
use argus_node::config::BatchSettings;
use argus_store::Op;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rand::{rngs::StdRng, Rng, SeedableRng};
use rayon::prelude::*;

use crate::service::{print_status, store_urls};

/// Arguments of `argus demo`.
#[derive(Args, Debug, Clone)]
pub struct DemoArgs {
    /// Enrolled identities loaded through the bulk-import path before the stream.
    #[arg(long, default_value_t = 10_000)]
    pub identities: usize,
    /// Queries in the stream (about 45 % re-captures of enrolled identities, 10 % re-captures of
    /// earlier queries, the rest new identities).
    #[arg(long, default_value_t = 500)]
    pub queries: usize,
    // The scheme: the help names the registry's (`scheme_help`).
    #[arg(long, help = crate::service::scheme_help(), default_value = argus_client::Scheme::default().name())]
    pub scheme: String,
    /// Code layout: deployed (16x200x2x2 bits) or open-iris (16x256x2x2 bits).
    #[arg(long, value_enum, default_value = "deployed")]
    pub layout: crate::service::LayoutArg,
    /// Queries per protocol run (the nodes' batch size).
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Queries in flight from the client.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// Seed of the synthetic data (shares always use OS randomness).
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Store URL prefix: `sqlite`, or a PostgreSQL URL ending in a database-name prefix (the
    /// node's index goes after the name, before any `?parameters` such as TLS ones).
    #[arg(long, default_value = "sqlite")]
    pub store: String,
    /// Working directory (default: a fresh temporary one, removed at the end).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Keep the working directory.
    #[arg(long)]
    pub keep: bool,
    /// After the stream, a load run of check-only queries: requests per second ...
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    pub load_qps: f64,
    /// ... for this many seconds (0: no load run).
    #[arg(long, default_value_t = 0)]
    pub load_seconds: u64,
}

/// The three node processes; stopped on drop as an operator would (SIGTERM: each finishes its
/// batch and exits), killed if one is not gone within [`STOP_WITHIN`].
struct Nodes(Vec<Child>);

const STOP_WITHIN: Duration = Duration::from_secs(10);

impl Drop for Nodes {
    fn drop(&mut self) {
        for c in &self.0 {
            // SAFETY: `kill` with our child's pid and a valid signal number.
            unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
        }
        let until = Instant::now() + STOP_WITHIN;
        for c in &mut self.0 {
            while matches!(c.try_wait(), Ok(None)) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Nodes {
    fn start(configs: &[PathBuf; 3], dir: &Path) -> Result<Nodes, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut children = Vec::new();
        for (i, cfg) in configs.iter().enumerate() {
            let log = std::fs::File::create(dir.join(format!("node{i}.log"))).map_err(|e| e.to_string())?;
            let child = Command::new(&exe)
                .args(["node", "--config"])
                .arg(cfg)
                .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()))
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .map_err(|e| format!("starting node {i}: {e}"))?;
            children.push(child);
        }
        Ok(Nodes(children))
    }

    /// Fails if a node process has exited, pointing at its log.
    fn check_alive(&mut self, dir: &Path) -> Result<(), String> {
        for (i, c) in self.0.iter_mut().enumerate() {
            if let Ok(Some(status)) = c.try_wait() {
                let log = std::fs::read_to_string(dir.join(format!("node{i}.log"))).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(10).collect();
                return Err(format!(
                    "node {i} exited ({status}); last log lines:\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                ));
            }
        }
        Ok(())
    }
}

/// A progress bar of `len` steps labelled `what`.
pub(crate) fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!("{what:>10} [{{bar:40}}] {{pos}}/{{len}} {{per_sec}} eta {{eta}}"))
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb
}

/// Shares the population and bulk-imports one share per node into the three stores.
fn import_population(
    population: &[Template],
    iris: &IrisSettings,
    cfg: &MatchConfig,
    dir: &Path,
    stores: &[String; 3],
) -> Result<(), String> {
    let mut opened = Vec::new();
    for url in stores {
        let url = match url.strip_prefix("sqlite:") {
            Some(file) => format!("sqlite:{}", dir.join(file).display()),
            None => url.clone(),
        };
        opened.push(argus_store::open(&url).map_err(|e| format!("{url}: {e}"))?);
    }
    let pb = bar(population.len() as u64, "import");
    for (c, chunk) in population.chunks(256).enumerate() {
        let shares: Vec<[Vec<u8>; 3]> = with_scheme!(iris.scheme, s => chunk
            .par_iter()
            .map(|t| s.share_enrollment(t, cfg).map(|sh| sh.map(|x| s.encode(&x))))
            .collect::<Result<Vec<_>, _>>())
        .map_err(|e| e.to_string())?;
        for (node, store) in opened.iter_mut().enumerate() {
            let mut rows = shares.iter().enumerate().map(|(k, sh)| ((c * 256 + k) as u64, sh[node].clone()));
            store.bulk_import(&mut rows).map_err(|e| e.to_string())?;
        }
        pb.inc(chunk.len() as u64);
    }
    pb.finish();
    Ok(())
}

/// What a query is, by construction (the reference decides the expected outcome).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    New,
    RecaptureEnrolled,
    RecaptureQuery,
}

fn make_queries(
    gen: &mut Generator,
    population: &[Template],
    n: usize,
    seed: u64,
) -> Result<Vec<(Template, Origin)>, String> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
    let mut out: Vec<(Template, Origin)> = Vec::with_capacity(n);
    for _ in 0..n {
        let r: f64 = rng.gen();
        let news: Vec<usize> = (0..out.len()).filter(|&i| out[i].1 == Origin::New).collect();
        let q = if r < 0.45 && !population.is_empty() {
            (
                gen.genuine_template(&population[rng.gen_range(0..population.len())]).map_err(|e| e.to_string())?,
                Origin::RecaptureEnrolled,
            )
        } else if r < 0.55 && !news.is_empty() {
            let k = news[rng.gen_range(0..news.len())];
            (gen.genuine_template(&out[k].0).map_err(|e| e.to_string())?, Origin::RecaptureQuery)
        } else {
            (gen.random_template(), Origin::New)
        };
        out.push(q);
    }
    Ok(out)
}

/// Whether `q` matches any template of `db` (the plaintext twin: rotations made once, then a
/// parallel scan).
fn matches_any(q: &Template, db: &[Template], cfg: &MatchConfig) -> bool {
    let q = cfg.prepare(q);
    db.par_iter().any(|t| q.matches(t).expect("same geometry"))
}

/// The load run's flags, as `argus demo` spells them.
const LOAD_FLAGS: crate::load::Flags = crate::load::Flags { qps: "--load-qps", seconds: "--load-seconds" };

/// Runs the demo.
pub fn run(a: DemoArgs) -> Result<(), String> {
    let iris = crate::service::new_iris_settings(&a.scheme, a.layout)?;
    // Refused now rather than after the whole demo has run.
    if a.load_seconds > 0 {
        crate::load::schedule(a.load_qps, a.load_seconds, LOAD_FLAGS)?;
    }
    let cfg = iris.match_config().map_err(|e| e.to_string())?;
    let geometry = iris.layout.geometry().map_err(|e| e.to_string())?;
    store_urls(&a.store)?; // refused before any directory is made
    let tmp;
    let dir = match &a.dir {
        Some(d) => d.clone(),
        None => {
            tmp = std::env::temp_dir().join(format!("argus-demo-{}", std::process::id()));
            tmp.clone()
        }
    };
    if dir.join("party0.toml").exists() {
        return Err(format!("{} already holds a deployment; choose another --dir", dir.display()));
    }
    let result = run_in(&a, &iris, &cfg, geometry, &dir);
    if a.keep || result.is_err() {
        eprintln!("working directory kept: {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn run_in(
    a: &DemoArgs,
    iris: &IrisSettings,
    cfg: &MatchConfig,
    geometry: argus_iris::IrisGeometry,
    dir: &Path,
) -> Result<(), String> {
    let stores = store_urls(&a.store)?;
    crate::service::create_databases(&stores, true)?;
    let batch = BatchSettings { max: a.batch, ..Default::default() };
    let d = argus_node::deploy::write_local(dir, iris, &batch, stores.clone()).map_err(|e| e.to_string())?;
    println!(
        "argus demo: 3 nodes ({}, {} store), {} enrolled identities, {} queries, {}-bit codes, {} rotations, both eyes",
        iris.scheme_name(),
        if a.store == "sqlite" { "SQLite WAL" } else { "PostgreSQL" },
        a.identities,
        a.queries,
        geometry.bits(),
        cfg.rotations.clone().count()
    );

    // 1. The population, bulk-imported (as a deployment seeds its nodes from existing shares).
    let mut gen = Generator::new(geometry, a.seed).map_err(|e| e.to_string())?;
    let population: Vec<Template> = (0..a.identities).map(|_| gen.random_template()).collect();
    let t0 = Instant::now();
    import_population(&population, iris, cfg, dir, &stores)?;
    println!("imported {} identities into each node's store in {:.1} s", a.identities, t0.elapsed().as_secs_f64());

    // 2. The nodes.
    let mut nodes = Nodes::start(&d.node_configs, dir)?;
    let rt = crate::service::runtime()?;
    let _guard = rt.enter();
    let connect = |path: &Path| -> Result<Client, String> {
        Client::new(ClientConfig::load(path).map_err(|e| e.to_string())?).map_err(|e| e.to_string())
    };
    let client = Arc::new(connect(&d.client_config)?);
    // The commit log (every client's outcomes) is for operators.
    let operator = connect(&d.operator_config)?;
    let t0 = Instant::now();
    let pb = ProgressBar::new_spinner();
    pb.set_message("nodes loading their shares and checking consistency");
    loop {
        nodes.check_alive(dir)?;
        pb.tick();
        match rt.block_on(async { tokio::time::timeout(Duration::from_secs(2), client.status()).await }) {
            Ok(Ok(s)) if s.iter().all(|n| n.summary.count as usize == a.identities) => break,
            _ if t0.elapsed() > Duration::from_secs(600) => {
                return Err("the nodes did not come up within 10 minutes".into())
            }
            _ => std::thread::sleep(Duration::from_millis(500)),
        }
    }
    pb.finish_and_clear();
    println!("nodes up and consistent in {:.1} s", t0.elapsed().as_secs_f64());

    // 3. The query stream.
    let queries = make_queries(&mut gen, &population, a.queries, a.seed)?;
    let ids: Vec<String> = (0..queries.len()).map(|_| new_request_id()).collect();
    let pb = bar(queries.len() as u64, "queries");
    let t0 = Instant::now();
    let outcomes = rt.block_on(async {
        let sem = Arc::new(tokio::sync::Semaphore::new(a.concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        for (k, (q, _)) in queries.iter().enumerate() {
            let permit = sem.clone().acquire_owned().await.expect("open semaphore");
            let (client, q, id, pb) = (client.clone(), q.clone(), ids[k].clone(), pb.clone());
            tasks.spawn(async move {
                let c = client.clone();
                let shares = tokio::task::spawn_blocking(move || c.make_shares(&q)).await.expect("sharing")?;
                let r = client.submit_shares(id, Kind::Enroll, shares).await;
                pb.inc(1);
                drop(permit);
                r.map(|o| (k, o))
            });
        }
        let mut out = HashMap::new();
        while let Some(r) = tasks.join_next().await {
            let (k, o) = r.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
            out.insert(k, o);
        }
        Ok::<_, String>(out)
    })?;
    let stream_secs = t0.elapsed().as_secs_f64();
    pb.finish();
    nodes.check_alive(dir)?;

    // 4. The plaintext twin, replayed over the commit log (batch composition and order).
    let commits = rt.block_on(operator.commits(0, 0)).map_err(|e| e.to_string())?;
    // The log names each request as `client/id` (ids are bound to their client).
    let bound: Vec<String> = ids.iter().map(|id| format!("demo/{id}")).collect();
    let by_id: HashMap<&str, usize> = bound.iter().enumerate().map(|(k, id)| (id.as_str(), k)).collect();
    let mut db: Vec<Template> = population.clone();
    let (mut agree, mut total, mut comparisons) = (0usize, 0usize, 0f64);
    let (mut refused, mut enrolled, mut mirror_or_short) = (0usize, 0usize, 0usize);
    let rotations = cfg.rotations.clone().count() as f64;
    let pb = bar(queries.len() as u64, "reference");
    for c in &commits {
        let mut batch: Vec<usize> = Vec::new();
        let mut new_entries = Vec::new();
        for op in &c.ops {
            let (request_id, got) = match op {
                Op::Outcome { request_id, unique, enrolled } => (request_id, Some((*unique, enrolled.is_some()))),
                Op::Refused { request_id, .. } => (request_id, None),
                _ => continue,
            };
            let Some(&k) = by_id.get(request_id.as_str()) else { continue };
            let q = &queries[k].0;
            comparisons += 2.0 * rotations * db.len() as f64;
            // The twin: a query with too few valid bits is refused unchecked; a duplicate is not
            // unique; a unique one whose mirror image is enrolled is refused as a mirror attack.
            let dup = matches_any(q, &db, cfg)
                || batch.iter().any(|&j| cfg.match_template(q, &queries[j].0).expect("geometry"));
            let want =
                if cfg.too_few_valid_bits(q) || (!dup && iris.mirror_check && matches_any(&q.mirrored(), &db, cfg)) {
                    None
                } else {
                    Some((!dup, !dup))
                };
            let client_saw = outcomes.get(&k).map(|o| o.unique);
            let ok = got == want && (got.is_none() || client_saw == got.map(|g| g.0));
            total += 1;
            agree += ok as usize;
            if !ok {
                eprintln!("DISAGREEMENT: query {k} (batch {}): MPC {got:?}, reference {want:?} ((unique, enrolled); None: refused)", c.seq);
            }
            match want {
                Some((true, _)) => {
                    new_entries.push(q.clone());
                    enrolled += 1;
                }
                Some((false, _)) => refused += 1,
                None => mirror_or_short += 1,
            }
            batch.push(k);
            pb.inc(1);
        }
        db.extend(new_entries);
    }
    pb.finish();
    let status = rt.block_on(client.status()).map_err(|e| e.to_string())?;
    let by_origin = |o: Origin| queries.iter().filter(|q| q.1 == o).count();
    println!();
    println!(
        "queries: {} new identities, {} re-captures of enrolled identities, {} re-captures of earlier queries",
        by_origin(Origin::New),
        by_origin(Origin::RecaptureEnrolled),
        by_origin(Origin::RecaptureQuery)
    );
    println!(
        "outcomes: {enrolled} enrolled as unique, {refused} refused as duplicates, {mirror_or_short} refused unchecked \
         (too few valid bits, or mirror attacks), in {} batches",
        commits.len()
    );
    println!(
        "agreement with the plaintext reference: {agree}/{total} ({:.2} %){}",
        100.0 * agree as f64 / total.max(1) as f64,
        if total == queries.len() { "" } else { " — some queries missing from the commit log" }
    );
    println!(
        "throughput: {:.2} queries/s, {:.2} M iris comparisons/s over {:.1} s ({} cores, 3 parties)",
        queries.len() as f64 / stream_secs,
        comparisons / stream_secs / 1e6,
        stream_secs,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    print_status(&status);
    let counts: Vec<u64> = status.iter().map(|s| s.summary.count).collect();
    println!("final enrolled count: {} (expected {})", counts[0], a.identities + enrolled);

    if a.load_seconds > 0 {
        crate::load::run_load(
            &rt,
            &client,
            &mut gen,
            a.load_qps,
            a.load_seconds,
            LOAD_FLAGS,
            Some(&mut || nodes.check_alive(dir)),
        )?;
    }
    if agree != total || total != queries.len() || counts.iter().any(|&c| c as usize != a.identities + enrolled) {
        return Err("the MPC outcomes disagree with the plaintext reference".into());
    }
    println!("all outcomes agree with the plaintext reference");
    Ok(())
}
