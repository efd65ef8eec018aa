//! The service commands: `argus node`, `argus setup`, `argus share`, `argus import`, and the
//! client commands `argus enroll`, `check`, `delete`, `status`.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use argus_client::{with_scheme, Client, ClientConfig, IrisSettings, Kind, NodeStatus, Scheme};
use argus_iris::Template;
use argus_node::config::BatchSettings;
use argus_node::import::{check_share_file, read_share_header, ImportStep, ShareFileWriter};
use argus_node::NodeConfig;
use clap::Args;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// `argus node`.
#[derive(Args, Debug)]
pub struct NodeArgs {
    /// The node's configuration file (see `argus setup` for an example).
    #[arg(long)]
    config: PathBuf,
    /// Rebuild this node's store from its two peers before serving, for a node whose store was
    /// lost or restored from an older backup: point `store` at an empty database (or the old
    /// one), start the node with --recover while the other two run, and it gets back its own
    /// shares of every enrolled identity and the peers' commit log, learning nothing else. The
    /// other two must be intact and agree. Harmless when there is nothing to recover.
    #[arg(long)]
    recover: bool,
    /// Before serving, check with the two peers that the three nodes' shares of every identity
    /// are consistent, revealing nothing (a share corrupted on disk would otherwise silently change
    /// results); the nodes refuse to serve if not. Reads every share once (~1.5 s per 10 000
    /// identities). Done anyway after a recovery.
    #[arg(long)]
    audit: bool,
}

/// Runs one node until SIGINT or SIGTERM: it then finishes the batch it is running (commit and
/// replies), tells the requests still waiting to retry, and exits 0. A second signal ends it at
/// once (exit status 1), should that batch hang; the store is consistent either way.
pub fn node(a: NodeArgs) -> Result<(), String> {
    let cfg = NodeConfig { recover: a.recover, audit: a.audit, ..NodeConfig::load(&a.config).map_err(err)? };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // The shutdown first: it fires only once the flag is set, i.e. on the second signal.
        signal_hook::flag::register_conditional_shutdown(sig, 1, Arc::clone(&stop)).map_err(err)?;
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(err)?;
    }
    argus_node::run_node(cfg, stop).map_err(err)
}

/// `argus setup`.
#[derive(Args, Debug)]
pub struct SetupArgs {
    /// Directory to write the PKI, `party0.toml`..`party2.toml`, `client.toml` and `operator.toml` into.
    #[arg(long)]
    dir: PathBuf,
    /// Store URL prefix: `sqlite` (one file per node in the directory) or a PostgreSQL URL
    /// (`postgres://` or `postgresql://`) ending in a database name prefix, e.g.
    /// `postgres://argus@127.0.0.1/iris` → databases iris0..iris2; parameters stay after the name
    /// (TLS: `…/iris?sslmode=verify-full&sslrootcert=ca.pem`). Anything else is refused.
    #[arg(long, default_value = "sqlite")]
    store: String,
    // The scheme: the help names the registry's (`scheme_help`).
    #[arg(long, help = scheme_help(), default_value = Scheme::default().name())]
    scheme: String,
    /// Code layout: deployed (16x200x2x2 bits) or open-iris (16x256x2x2 bits).
    #[arg(long, value_enum, default_value = "deployed")]
    layout: LayoutArg,
}

/// A named code layout, for `--layout`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum LayoutArg {
    /// 16 x 200 x 2 x 2 = 12800 bits, as the deployed system uses.
    Deployed,
    /// 16 x 256 x 2 x 2 = 16384 bits, as the open-iris package emits.
    OpenIris,
}

impl LayoutArg {
    /// The layout's geometry.
    pub fn geometry(self) -> argus_iris::IrisGeometry {
        match self {
            LayoutArg::Deployed => argus_iris::IrisGeometry::DEPLOYED,
            LayoutArg::OpenIris => argus_iris::IrisGeometry::OPEN_IRIS,
        }
    }
}

/// The `[iris]` settings of a new deployment: `scheme` on `layout`, the rest default; refused
/// before anything is written if the scheme cannot run the layout.
pub fn new_iris_settings(scheme: &str, layout: LayoutArg) -> Result<IrisSettings, String> {
    use argus_client::settings::{Layout, NamedLayout};
    let layout = Layout::Named(match layout {
        LayoutArg::Deployed => NamedLayout::Deployed,
        LayoutArg::OpenIris => NamedLayout::OpenIris,
    });
    let iris = IrisSettings { scheme: parse_scheme(scheme)?, layout, ..Default::default() };
    iris.check_supported().map_err(err)?;
    Ok(iris)
}

/// Parses a scheme name as the configuration file spells it.
pub fn parse_scheme(name: &str) -> Result<Scheme, String> {
    Scheme::from_name(name).ok_or_else(|| format!("unknown scheme {name:?} ({})", Scheme::names()))
}

/// `--scheme`'s help: the registered schemes by the names the configuration uses.
pub fn scheme_help() -> String {
    format!("Scheme ({})", Scheme::names())
}

/// Store URLs for the three nodes from a prefix: `sqlite`, or a PostgreSQL URL whose database
/// name gets the node's index (before any `?parameters`, e.g. TLS ones). Anything else is refused:
/// `foo` would have become the SQLite file `foo0`, and `postgres://host` the host `host0`.
pub fn store_urls(prefix: &str) -> Result<[String; 3], String> {
    const ACCEPTED: &str = "give `sqlite` (a SQLite file per node: party0.db .. party2.db) or a PostgreSQL URL \
                            (postgres://… or postgresql://…) ending in a database name prefix, e.g. \
                            postgres://argus@127.0.0.1/iris for the databases iris0 .. iris2";
    if prefix == "sqlite" {
        return Ok(std::array::from_fn(|i| format!("sqlite:party{i}.db")));
    }
    let Some(rest) = prefix.strip_prefix("postgres://").or_else(|| prefix.strip_prefix("postgresql://")) else {
        return Err(format!("--store {prefix:?} is not a store URL prefix: {ACCEPTED}"));
    };
    let (base, query) = prefix.split_once('?').map_or((prefix, String::new()), |(b, q)| (b, format!("?{q}")));
    let database = rest.split('?').next().unwrap_or_default().split_once('/').map_or("", |(_, db)| db);
    if database.is_empty() {
        return Err(format!(
            "--store {prefix:?} names no database (the node's index goes after the database name): {ACCEPTED}"
        ));
    }
    Ok(std::array::from_fn(|i| format!("{base}{i}{query}")))
}

/// Creates the PostgreSQL databases among `urls` that do not exist yet, where the role may
/// (`argus setup`, `argus demo`), saying which it created; where it may not, the error names the
/// command to run. With `strict` off (`argus setup`, which may write a deployment before its
/// database server is up) a failure is a warning and the configuration is written anyway. SQLite
/// stores are left to the nodes.
pub fn create_databases(urls: &[String], strict: bool) -> Result<(), String> {
    for url in urls.iter().filter(|u| u.starts_with("postgres://") || u.starts_with("postgresql://")) {
        match argus_store::create_postgres_database_if_missing(url) {
            Ok(true) => println!("created PostgreSQL database {}", database_of(url)),
            Ok(false) => {}
            Err(e) if strict => return Err(format!("store {}: {e}", database_of(url))),
            Err(e) => eprintln!(
                "warning: store {}: {e} (the configuration is written; the nodes need the database to start)",
                database_of(url)
            ),
        }
    }
    Ok(())
}

/// The database name of a PostgreSQL URL (no credentials), for messages.
fn database_of(url: &str) -> &str {
    url.split('?').next().unwrap_or_default().rsplit('/').next().unwrap_or_default()
}

/// Writes a local deployment.
pub fn setup(a: SetupArgs) -> Result<(), String> {
    let iris = new_iris_settings(&a.scheme, a.layout)?;
    let stores = store_urls(&a.store)?;
    if let Some(p) = argus_node::deploy::existing_files(&a.dir).first() {
        return Err(format!(
            "{} already exists: argus setup writes a new PKI and configuration and overwrites nothing; \
             choose another --dir (or move it away)",
            p.display()
        ));
    }
    create_databases(&stores, false)?;
    let d = argus_node::deploy::write_local(&a.dir, &iris, &BatchSettings::default(), stores).map_err(err)?;
    println!("wrote a 3-node deployment to {}:", d.dir.display());
    for (c, p) in d.nodes.iter().zip(&d.node_configs) {
        println!("  argus node --config {}    # peers on {}, clients on {}", p.display(), c.peers[c.id], c.listen);
    }
    println!("  client: argus enroll --client {} TEMPLATE.json", d.client_config.display());
    println!("  operator (deletions, the commit log): argus delete --client {} ID", d.operator_config.display());
    Ok(())
}

/// `argus share`.
#[derive(Args, Debug)]
pub struct ShareArgs {
    /// Client configuration (scheme and layout).
    #[arg(long)]
    client: PathBuf,
    /// Directory for `party0.shares` .. `party2.shares` (created; existing files are not
    /// overwritten; a failed run leaves nothing behind).
    #[arg(long)]
    out: PathBuf,
    /// Identity id of the first template; the others follow in order (the last must be at most
    /// 2^63 - 1, the largest id a store holds).
    #[arg(long, default_value_t = 0)]
    first_id: u64,
    /// Template files (Argus JSON), in the layout of the client configuration.
    #[arg(required = true)]
    templates: Vec<PathBuf>,
}

/// The largest identity id the stores hold (they keep ids as signed 64-bit integers).
const MAX_ID: u64 = i64::MAX as u64;

/// Prefixes an error with the file it concerns (once: the messages below do not name it).
fn in_file(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

/// Shares templates into three share files for `argus import`. Everything that can be checked
/// up front is (ids, existing files); the directory and files are created with the first valid
/// template, and a failure removes what the run created.
pub fn share(a: ShareArgs) -> Result<(), String> {
    let cfg = ClientConfig::load(&a.client).map_err(err)?;
    let geometry = cfg.iris.layout.geometry().map_err(err)?;
    let match_cfg = cfg.iris.match_config().map_err(err)?;
    let n = a.templates.len() as u64;
    // A wrapped id would collide with another identity; one past MAX_ID fails only at import.
    if a.first_id.checked_add(n - 1).is_none_or(|last| last > MAX_ID) {
        return Err(format!(
            "--first-id {} with {n} templates gives ids past {MAX_ID}, the largest a store holds: \
             give --first-id {} or less",
            a.first_id,
            MAX_ID - (n - 1).min(MAX_ID)
        ));
    }
    if a.out.exists() && !a.out.is_dir() {
        return Err(format!("--out {} is not a directory", a.out.display()));
    }
    let paths: Vec<PathBuf> = (0..3).map(|i| a.out.join(format!("party{i}.shares"))).collect();
    if let Some(p) = paths.iter().find(|p| p.exists()) {
        return Err(format!(
            "{} already exists: share files are never overwritten; choose another --out (or move the old files away)",
            p.display()
        ));
    }
    let mut created = crate::created::Created::default();
    let result = share_into(&a, &cfg, geometry, &match_cfg, &paths, &mut created);
    if result.is_err() {
        created.undo();
    }
    result
}

fn share_into(
    a: &ShareArgs,
    cfg: &ClientConfig,
    geometry: argus_iris::IrisGeometry,
    match_cfg: &argus_iris::MatchConfig,
    paths: &[PathBuf],
    created: &mut crate::created::Created,
) -> Result<(), String> {
    let name = cfg.iris.scheme.name();
    // Unfinished writers delete their partial files when dropped.
    let mut files: Vec<ShareFileWriter> = Vec::new();
    let pb = crate::demo::bar(a.templates.len() as u64, "share");
    for (k, path) in a.templates.iter().enumerate() {
        pb.inc(1);
        let t = Template::read_file(path).map_err(|e| e.to_string())?; // names the file
        argus_client::check_layout(&t, geometry).map_err(|e| in_file(path, e))?;
        let shares = with_scheme!(cfg.iris.scheme, s => {
            use argus_iris::protocol::scheme::IrisScheme;
            let sh = s.share_enrollment(&t, match_cfg).map_err(|e| in_file(path, e))?;
            sh.map(|x| s.encode(&x))
        });
        if files.is_empty() {
            created.dir_all(&a.out)?;
            for (i, p) in paths.iter().enumerate() {
                files.push(ShareFileWriter::create(p, i, name, geometry.bits()).map_err(err)?);
            }
        }
        for (f, sh) in files.iter_mut().zip(&shares) {
            f.push(a.first_id + k as u64, sh).map_err(err)?;
        }
    }
    for (f, p) in files.into_iter().zip(paths) {
        f.finish().map_err(err)?;
        created.files.push(p.clone());
    }
    pb.finish_and_clear();
    println!("wrote {} shares per node to {}", a.templates.len(), a.out.display());
    Ok(())
}

/// `argus import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The node's configuration (its store, scheme and layout).
    #[arg(long)]
    config: PathBuf,
    /// The node's share file (from `argus share`). Run with the node stopped, on every node.
    shares: PathBuf,
}

/// Bulk-imports a share file into a node's store.
pub fn import(a: ImportArgs) -> Result<(), String> {
    let cfg = NodeConfig::load(&a.config).map_err(err)?;
    // A running node would not see the imported identities (it holds its database in memory) and
    // would answer from the old set: refuse while its ports are taken.
    for (what, addr) in [("client", cfg.listen), ("peer", cfg.peers[cfg.id])] {
        if let Err(e) = std::net::TcpListener::bind(addr) {
            if e.kind() == std::io::ErrorKind::AddrInUse {
                return Err(format!(
                    "node {}'s {what} port {addr} is in use: is the node running? Stop it before importing \
                     (a running node would not see the imported identities)",
                    cfg.id
                ));
            }
        }
    }
    // The file is read and checked whole before the store is opened: opening creates an empty
    // SQLite database, which a refused import must not leave behind.
    if a.shares.is_dir() {
        return Err(format!(
            "{} is a directory, not a share file: give this node's file in it, {}",
            a.shares.display(),
            a.shares.join(format!("party{}.shares", cfg.id)).display()
        ));
    }
    let head = read_share_header(&a.shares).map_err(err)?;
    if head.party != cfg.id {
        let config = a.config.file_name().map_or(a.config.display(), |f| Path::new(f).display());
        return Err(format!(
            "{} holds node {}'s shares; this is node {} ({config}): import node {}'s file (party{}.shares) here",
            a.shares.display(),
            head.party,
            cfg.id,
            cfg.id,
            cfg.id
        ));
    }
    let bits = cfg.iris.layout.geometry().map_err(err)?.bits();
    let match_cfg = cfg.iris.match_config().map_err(err)?;
    // Checking counts up (the file's length is known only once read); writing fills a bar.
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_style(
        indicatif::ProgressStyle::with_template("{msg:>10} {pos} identities {per_sec}").expect("valid template"),
    );
    pb.set_message("check");
    let mut writing = false;
    let mut progress = |step: ImportStep, n: u64| {
        if step == ImportStep::Writing && !writing {
            writing = true;
            let total = pb.position();
            pb.set_style(crate::demo::bar(total, "write").style());
            pb.set_length(total);
            pb.reset();
        }
        pb.set_position(n);
    };
    let checked =
        with_scheme!(cfg.iris.scheme, s => check_share_file(&a.shares, cfg.id, &s, bits, &match_cfg, &mut progress))
            .map_err(err)?;
    let mut store = argus_store::open(&cfg.store).map_err(err)?;
    let done = checked.import_into(store.as_mut(), &mut progress).map_err(err)?;
    pb.finish_and_clear();
    let again =
        if done.already > 0 { format!(" ({} were there already, skipped)", done.already) } else { String::new() };
    println!("imported {} identities into {}{again}", done.written, store.describe());
    Ok(())
}

/// A template given on the command line.
#[derive(Args, Debug)]
pub struct TemplateArgs {
    /// Client configuration (`client.toml` from `argus setup`).
    #[arg(long)]
    client: PathBuf,
    /// Template in Argus JSON (see `argus iris gen`).
    #[arg(required_unless_present = "open_iris")]
    template: Option<PathBuf>,
    /// Instead: the left and right eye as open-iris IrisTemplate JSON files: what open-iris 1.x's
    /// `IrisTemplate.serialize()` returns (packed base64 arrays, iris_code_version), or nested
    /// boolean arrays (`[c.tolist() for c in t.iris_codes]`, likewise mask_codes).
    #[arg(long, num_args = 2, value_names = ["LEFT", "RIGHT"], conflicts_with = "template")]
    open_iris: Option<Vec<PathBuf>>,
}

fn read_template(a: &TemplateArgs) -> Result<Template, String> {
    match (&a.template, &a.open_iris) {
        // Both name the file in their errors.
        (Some(p), _) => Template::read_file(p).map_err(|e| e.to_string()),
        (None, Some(lr)) => Template::read_open_iris_files(&lr[0], &lr[1]).map_err(|e| e.to_string()),
        _ => Err("give a template file or --open-iris LEFT RIGHT".into()),
    }
}

/// The client side's async runtime (two workers).
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(err)
}

fn client_at(path: &Path) -> Result<Client, String> {
    Client::new(ClientConfig::load(path).map_err(err)?).map_err(err)
}

/// `argus enroll` / `argus check`.
pub fn submit(a: TemplateArgs, kind: Kind) -> Result<(), String> {
    let t = read_template(&a)?;
    let rt = runtime()?;
    let _guard = rt.enter();
    let client = client_at(&a.client)?;
    let o = rt.block_on(client.submit(&t, kind)).map_err(err)?;
    match (o.unique, o.enrolled) {
        (true, Some(id)) => println!("unique: enrolled as identity {id}"),
        (true, None) => println!("unique"),
        (false, _) => println!("not unique: matches an enrolled identity"),
    }
    Ok(())
}

/// `argus verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The enrolled identity (as `argus enroll` printed it).
    #[arg(long)]
    id: u64,
    #[command(flatten)]
    template: TemplateArgs,
}

/// Re-authenticates a template against one identity: exit status 0 for yes, 1 for no, 2 when
/// it could not be decided (bad input, nodes unreachable), as `grep` does.
pub fn verify(a: VerifyArgs) -> std::process::ExitCode {
    let answer = || -> Result<bool, String> {
        let t = read_template(&a.template)?;
        let rt = runtime()?;
        let _guard = rt.enter();
        let client = client_at(&a.template.client)?;
        rt.block_on(client.verify(&t, a.id)).map_err(err)
    };
    match answer() {
        Ok(true) => {
            println!("verified: the template is identity {}", a.id);
            std::process::ExitCode::SUCCESS
        }
        Ok(false) => {
            println!("not verified: the template is not identity {} (or no such identity is enrolled)", a.id);
            std::process::ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// `argus delete`.
#[derive(Args, Debug)]
pub struct DeleteArgs {
    /// Client configuration of an operator (`operator.toml` from `argus setup`: only a certificate
    /// with the operator role may delete).
    #[arg(long)]
    client: PathBuf,
    /// The identity id (as `argus enroll` printed it).
    id: u64,
}

/// Deletes an identity.
pub fn delete(a: DeleteArgs) -> Result<(), String> {
    let rt = runtime()?;
    let _guard = rt.enter();
    let client = client_at(&a.client)?;
    let existed = rt.block_on(client.delete(a.id)).map_err(err)?;
    println!(
        "{}",
        if existed { format!("deleted identity {}", a.id) } else { format!("identity {} was not enrolled", a.id) }
    );
    Ok(())
}

/// `argus status`.
#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Client configuration.
    #[arg(long)]
    client: PathBuf,
}

/// Prints one line per node.
pub fn print_status(s: &[NodeStatus; 3]) {
    for n in s {
        println!("{}", status_line(n));
    }
}

/// One node's status on one line.
fn status_line(n: &NodeStatus) -> String {
    let hex: String = n.summary.digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "node {}: {} identities (ids digest {hex}…), last batch {}, scheme {} ({:.1} B per code bit), \
         shares in memory {:.1} MB ({} per identity), RSS {:.1} MB, sent to peers {:.1} MB, \
         {} waiting ({} refused busy, {} queries refused for too few valid bits, {} for invalid shares, {} as mirror attacks), \
         kernel {} on {} ({}), {}",
        n.id,
        n.summary.count,
        n.summary.last_seq,
        n.scheme,
        n.share_bytes_per_code_bit,
        n.db_bytes as f64 / 1e6,
        n.db_bytes_per_identity().map_or("-".into(), |b| format!("{:.1} kB", b / 1e3)),
        n.rss_bytes as f64 / 1e6,
        n.peer_bytes_sent as f64 / 1e6,
        n.queued,
        n.refused_busy,
        n.refused_short,
        n.refused_invalid,
        n.refused_mirror,
        n.kernel,
        n.cpu,
        n.isa,
        if n.serving { "serving" } else { "not serving: connecting to its peers, catching up or recovering" },
    )
}

/// How long `argus status` waits for a node.
const STATUS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Shows the nodes' state, asking each node once: a line per node (or why it did not answer),
/// then whether the three agree. Fails (exit status 1) if a node did not answer or the nodes
/// differ, so that a monitor can run it.
pub fn status(a: StatusArgs) -> Result<(), String> {
    let rt = runtime()?;
    let _guard = rt.enter();
    let client = Arc::new(client_at(&a.client)?);
    let asks: Vec<_> = (0..3)
        .map(|node| {
            let client = client.clone();
            rt.spawn(async move { tokio::time::timeout(STATUS_TIMEOUT, client.node_status(node)).await })
        })
        .collect();
    let mut answered = Vec::new();
    let mut silent = Vec::new();
    for (node, ask) in asks.into_iter().enumerate() {
        match rt.block_on(ask).map_err(err)? {
            Ok(Ok(s)) => {
                println!("{}", status_line(&s));
                answered.push(s);
            }
            Ok(Err(e)) => {
                println!("node {node}: no answer: {e}");
                silent.push(node);
            }
            Err(_) => {
                println!("node {node}: no answer within {STATUS_TIMEOUT:?}");
                silent.push(node);
            }
        }
    }
    if !silent.is_empty() {
        return Err(format!("node(s) {silent:?} did not answer"));
    }
    let idle: Vec<usize> = answered.iter().filter(|s| !s.serving).map(|s| s.id).collect();
    if !idle.is_empty() {
        return Err(format!("node(s) {idle:?} are not connected to their peers"));
    }
    if answered.iter().any(|s| s.summary != answered[0].summary) {
        return Err("the nodes hold different identities (count, digest, last batch, next id); \
                    a batch may be committing: ask again"
            .into());
    }
    println!(
        "all three nodes agree: {} identities, last batch {}",
        answered[0].summary.count, answered[0].summary.last_seq
    );
    Ok(())
}
