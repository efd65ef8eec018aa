//! `argus`: the command line of the Argus MPC engine and its iris uniqueness service.
//!
//! * `argus demo` starts three iris nodes as local processes, bulk-imports a synthetic
//!   population, streams queries through the full protocol and checks every outcome against the
//!   plaintext reference.
//! * `argus node`, `argus setup`, `argus share`, `argus import`: run and seed the service;
//!   `argus enroll`, `check`, `delete`, `status`, `load`: its client.
//! * `argus engine-demo` walks through the core protocols, checked against plaintext.
//! * `argus kmeans` clusters a CSV file by private k-means (the Sharemind protocol) on three
//!   parties, local threads or (`--party`) separate processes, checked against plaintext.
//! * `argus gmw` evaluates a Bristol circuit by p-party GMW (paper 003), checked against plaintext.
//! * `argus bench core|iris|sharemind|gmw` measures; `argus party` runs one bare party process of the engine
//!   (`argus pki` writes the certificates it uses).

mod bench;
mod biometric;
mod created;
mod demo;
mod engine_demo;
mod failure;
mod gmw;
mod iris;
mod kmeans;
mod load;
mod one_party;
mod party;
mod relu;
mod service;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

// Protocols allocate and free vectors of many megabytes per round; mimalloc keeps those pages
// mapped instead of returning them to the OS, which removes most page-fault time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `argus --version`: the release, the peer protocol its nodes speak (the three must share it) and
/// the client protocol its clients and nodes speak (a client and its nodes must share it).
fn version() -> &'static str {
    // Built once per parse; clap keeps `&'static str` without its `string` feature.
    Box::leak(
        format!(
            "{} (peer protocol {}, client protocol {})",
            env!("CARGO_PKG_VERSION"),
            argus_node::wire::PEER_PROTOCOL,
            argus_client::wire::CLIENT_PROTOCOL
        )
        .into_boxed_str(),
    )
}

/// Argus: a secure multi-party computation engine (3-party replicated and Shamir sharing).
#[derive(Parser)]
#[command(name = "argus", version = version(), about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The iris uniqueness service end to end: 3 local nodes, a bulk-imported population, a stream
    /// of queries checked against the plaintext reference (exit 1 on any disagreement).
    Demo(demo::DemoArgs),
    /// Run one iris node (peers over mutual TLS, clients over TLS) until SIGINT or SIGTERM: it
    /// finishes its running batch, tells waiting requests to retry and exits 0 (a second signal:
    /// at once).
    ///
    /// It logs to stderr: start-up, serving, and its activity about once a minute (filter
    /// `argus_node=info,warn`). Set `RUST_LOG` to change that, e.g. `RUST_LOG=warn` for
    /// problems only or `RUST_LOG=info,argus_net=debug` for more.
    Node(service::NodeArgs),
    /// Write a local 3-node deployment: PKI, party0..2.toml, client.toml, operator.toml.
    Setup(service::SetupArgs),
    /// Share templates into one share file per node, for `argus import`.
    Share(service::ShareArgs),
    /// Bulk-import a share file into a (stopped) node's store.
    Import(service::ImportArgs),
    /// Check a template and enrol it if unique.
    Enroll(service::TemplateArgs),
    /// Check whether a template is unique (nothing is enrolled).
    Check(service::TemplateArgs),
    /// Re-authentication: is a template the enrolled identity --id (1:1, both eyes)? Compared with
    /// that identity alone, revealing only yes or no; exit status 0 for yes, 1 for no, 2 for an error.
    Verify(service::VerifyArgs),
    /// Delete an enrolled identity by id.
    Delete(service::DeleteArgs),
    /// Show each node's identities, memory, traffic and backlog, and whether the three agree
    /// (exit status 1 if a node does not answer within 5 s or the nodes differ).
    Status(service::StatusArgs),
    /// A load run of check-only queries at a fixed rate, with latency percentiles.
    Load(LoadArgs),
    /// Walk through the core protocols on 3 local parties, checked against plaintext.
    EngineDemo(engine_demo::DemoArgs),
    /// Private k-means of a CSV file on three parties (the Sharemind protocol, paper 001 section
    /// 8.4), checked against the plaintext reference: exit status 2 on bad input (found before any
    /// party starts), 1 on a failure or any disagreement.
    ///
    /// What the parties learn: in the paper's variant (the default) each iteration reveals every
    /// point's cluster and the cluster sizes; with --hide-assignment each iteration reveals only
    /// whether any point moved. Both reveal the number of iterations and the final centroids, and
    /// nothing else.
    ///
    /// The three parties are threads of this process (--backend); with --party I --addrs A,B,C
    /// --pki DIR this process is party I alone, over TCP with mutual TLS, and party 0 (which has
    /// --data) sends the others the shape, k, the iterations and the variant. Progress goes to
    /// stderr, one line per iteration; the result to stdout.
    Kmeans(kmeans::KmeansArgs),
    /// Evaluate a Bristol Fashion circuit by p-party GMW (paper 003) on hex inputs (input value k
    /// is party k's), checked against the plaintext evaluation: exit status 2 on a malformed
    /// circuit or input (found before any party starts, with its line), 1 on a failure or any
    /// disagreement. The parties are threads of this process (--backend), or with --party I
    /// --addrs A,B,… --pki DIR this process is party I alone over TCP with mutual TLS.
    Gmw(gmw::GmwArgs),
    /// ReLU or a comparison with zero (paper 002) on a file of fixed-point numbers, one per line,
    /// by three parties in the Shamir setting over F_q (q = 2^128 − 159); the results are written
    /// out and checked against the plaintext twin (exit status 2 on bad input — a value out of
    /// range is named by its line — 1 on a failure or any disagreement). The parties are threads
    /// of this process (--backend), or with --party I --addrs A,B,C --pki DIR this process is party
    /// I alone over TCP with mutual TLS (party 0 holds the file and learns the results).
    Relu(relu::ReluArgs),
    /// Batched biometric identification (paper 004) on two parties: a client's queries against
    /// a server's references by squared distance on tensor triples, then the secure threshold,
    /// on a synthetic population; the match decisions are printed beside the plaintext twin's
    /// (exit status 2 on bad input, 1 on a failure or any disagreement).
    ///
    /// The parties are threads of this process (--backend), or with --party I --addrs A,B --pki
    /// DIR this process is party I alone over TCP with mutual TLS (each process draws the same
    /// population from --seed and uses its own role's part).
    Biometric(biometric::BiometricArgs),
    /// Run a benchmark suite and print a table (optionally JSON).
    Bench {
        #[command(subcommand)]
        suite: bench::Suite,
    },
    /// Write a test PKI (CA + one certificate per party and per client, PEM). Writes nothing if
    /// any file it would write exists, unless --force.
    Pki(PkiArgs),
    /// Run one party as its own process, over TCP with mutual TLS.
    Party(party::PartyArgs),
    /// Iris tools: synthetic templates, plaintext matching.
    Iris {
        #[command(subcommand)]
        cmd: iris::IrisCmd,
    },
}

/// Arguments of `argus pki`.
#[derive(clap::Args, Debug)]
struct PkiArgs {
    /// Directory to write `ca.pem` (party CA), `client-ca.pem` (client CA), `party-<i>.pem`, `party-<i>.key`,
    /// `client-<name>.pem`, `client-<name>.key`.
    #[arg(long)]
    out: PathBuf,
    /// Number of parties (2 to 64).
    #[arg(long, default_value_t = 3)]
    parties: usize,
    /// Client names to issue certificates for, comma separated: ASCII letters, digits, '-', '_'
    /// and '.' (each becomes the DNS name `client-<name>`).
    #[arg(long, value_delimiter = ',', default_value = "demo")]
    clients: Vec<String>,
    /// Overwrite existing files. Without it, any existing file among those to write is an error
    /// (they may be a running deployment's CA and keys), and nothing is written.
    #[arg(long)]
    force: bool,
}

/// Most parties `argus pki` issues certificates for: far more than any network of the engine
/// runs, and few enough that a typo does not make thousands of keys.
const MAX_PKI_PARTIES: usize = 64;

/// `argus pki`: every argument is checked and every certificate made before anything is written.
fn pki_cmd(a: PkiArgs) -> Result<(), String> {
    if !(2..=MAX_PKI_PARTIES).contains(&a.parties) {
        return Err(format!(
            "--parties must be at least 2 (a network has at least 2 parties) and at most {MAX_PKI_PARTIES}, got {}",
            a.parties
        ));
    }
    for (i, name) in a.clients.iter().enumerate() {
        argus_net::tcp::check_client_name(name).map_err(|e| format!("--clients: {e}"))?;
        if a.clients[..i].contains(name) {
            return Err(format!("--clients: client name {name:?} is given twice"));
        }
    }
    let names: Vec<&str> = a.clients.iter().map(String::as_str).collect();
    let pki = argus_net::tcp::Pki::generate_with_clients(a.parties, &names).map_err(|e| e.to_string())?;
    if !a.force {
        if let Some(f) = pki.pem_files(&a.out).into_iter().find(|f| f.symlink_metadata().is_ok()) {
            return Err(format!(
                "{} already exists (it may belong to a deployment in use); nothing was written: \
                 choose another --out, or pass --force to overwrite",
                f.display()
            ));
        }
    }
    pki.write_pem(&a.out).map_err(|e| e.to_string())?;
    println!("wrote a test PKI for {} parties and clients {:?} to {}", a.parties, a.clients, a.out.display());
    Ok(())
}

/// Arguments of `argus load`.
#[derive(clap::Args, Debug)]
struct LoadArgs {
    /// Client configuration.
    #[arg(long)]
    client: PathBuf,
    /// Requests per second (above 0).
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    qps: f64,
    /// Duration in seconds (at least 1; at most 10 000 000 queries in all).
    #[arg(long, default_value_t = 300)]
    seconds: u64,
    /// Seed of the synthetic queries.
    #[arg(long, default_value_t = 99)]
    seed: u64,
}

/// The load run's flags, as `argus load` spells them.
const LOAD_FLAGS: load::Flags = load::Flags { qps: "--qps", seconds: "--seconds" };

fn load_cmd(a: LoadArgs) -> Result<(), String> {
    load::schedule(a.qps, a.seconds, LOAD_FLAGS)?;
    let cfg = argus_client::ClientConfig::load(&a.client).map_err(|e| e.to_string())?;
    let geometry = cfg.iris.layout.geometry().map_err(|e| e.to_string())?;
    let rt = service::runtime()?;
    let _guard = rt.enter();
    let client = std::sync::Arc::new(argus_client::Client::new(cfg).map_err(|e| e.to_string())?);
    let mut gen = argus_iris::Generator::new(geometry, a.seed).map_err(|e| e.to_string())?;
    load::run_load(&rt, &client, &mut gen, a.qps, a.seconds, LOAD_FLAGS, None)
}

/// `argus node`'s log filter when `RUST_LOG` is not set (see `argus node --help`).
const NODE_LOG: &str = "argus_node=info,warn";

/// mimalloc's `mi_option_purge_delay` (index 15 in its v2 and v3 option enums).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() -> ExitCode {
    // Never return freed pages to the OS: a protocol round frees and re-allocates buffers of the
    // same (many-megabyte) sizes within milliseconds, and with any purge delay (default 10 ms;
    // 1 s measured too) re-faulting them as fresh, zeroed huge pages cost 20–30 % of the
    // comparison phase. A node's footprint is then its peak working set, which is flat.
    // SAFETY: sets a process-wide allocator option; no memory is touched.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
    let cli = Cli::parse();
    // A node says when it starts and serves (info) unless told otherwise; the other commands
    // print their own output, and their libraries' logs only when something is wrong.
    let default_filter = if matches!(cli.cmd, Cmd::Node(_)) { NODE_LOG } else { "warn" };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter)),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let result = match cli.cmd {
        Cmd::Demo(a) => demo::run(a),
        Cmd::Node(a) => service::node(a),
        Cmd::Setup(a) => service::setup(a),
        Cmd::Share(a) => service::share(a),
        Cmd::Import(a) => service::import(a),
        Cmd::Enroll(a) => service::submit(a, argus_client::Kind::Enroll),
        Cmd::Check(a) => service::submit(a, argus_client::Kind::Check),
        Cmd::Delete(a) => service::delete(a),
        Cmd::Verify(a) => return service::verify(a),
        Cmd::Status(a) => service::status(a),
        Cmd::Load(a) => load_cmd(a),
        Cmd::EngineDemo(a) => engine_demo::run(a),
        // Its own exit status: 2 for bad input, 1 for a failure during the run.
        Cmd::Kmeans(a) => return kmeans::run(a),
        Cmd::Gmw(a) => return gmw::run_cmd(a),
        Cmd::Biometric(a) => return biometric::run_cmd(a),
        Cmd::Relu(a) => return relu::run_cmd(a),
        Cmd::Bench { suite } => bench::run(suite),
        Cmd::Pki(a) => pki_cmd(a),
        Cmd::Party(a) => party::run(a),
        Cmd::Iris { cmd } => iris::run(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
