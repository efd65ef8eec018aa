//! `argus`: the command line of the Argus MPC engine.
//!
//! * `argus demo` runs the three parties locally over TCP with mutual TLS and walks through the
//!   core protocols, checking every result against the plaintext twin.
//! * `argus bench core` measures the core protocols and prints a table (and JSON).
//! * `argus pki` and `argus party` run one party as its own OS process.

mod bench;
mod demo;
mod iris;
mod party;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

// Protocols allocate and free vectors of many megabytes per round; mimalloc keeps those pages
// mapped instead of returning them to the OS, which removes most page-fault time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Argus: a secure multi-party computation engine (3-party replicated and Shamir sharing).
#[derive(Parser)]
#[command(name = "argus", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a local 3-party demo of the core protocols, checked against plaintext (exit 1 on any mismatch).
    Demo(demo::DemoArgs),
    /// Run a benchmark suite and print a table (optionally JSON).
    Bench {
        #[command(subcommand)]
        suite: bench::Suite,
    },
    /// Write a test PKI (CA + one certificate per party, PEM) for `argus party`.
    Pki {
        /// Directory to write `ca.pem`, `party-<i>.pem`, `party-<i>.key`.
        #[arg(long)]
        out: PathBuf,
        /// Number of parties.
        #[arg(long, default_value_t = 3)]
        parties: usize,
    },
    /// Run one party as its own process, over TCP with mutual TLS.
    Party(party::PartyArgs),
    /// Iris tools: synthetic templates, plaintext matching.
    Iris {
        #[command(subcommand)]
        cmd: iris::IrisCmd,
    },
}

/// mimalloc's `mi_option_purge_delay` (index 15 in its v2 and v3 option enums).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() -> ExitCode {
    // Keep freed pages for a second before returning them to the OS: a protocol round frees and
    // re-allocates buffers of the same size within milliseconds, and re-faulting them (the
    // default 10 ms delay) cost a quarter of the run time of the bigger protocols.
    // SAFETY: sets a process-wide allocator option; no memory is touched.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1000) };
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Demo(a) => demo::run(a),
        Cmd::Bench { suite } => bench::run(suite),
        Cmd::Pki { out, parties } => {
            argus_net::tcp::Pki::generate(parties).write_pem(&out).map_err(|e| e.to_string()).map(|_| {
                println!("wrote a test PKI for {parties} parties to {}", out.display());
            })
        }
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
