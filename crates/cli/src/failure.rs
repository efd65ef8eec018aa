//! How a command that checks its input before any party starts ends: bad input (exit status 2,
//! nothing started) or a failure during the run, a disagreement with the plaintext reference
//! included (exit status 1). Used by `argus kmeans` and `argus gmw`.

use std::fmt;
use std::process::ExitCode;

/// Why the command stopped.
#[derive(Debug)]
pub enum Failure {
    /// Bad input, found before any party starts.
    Input(String),
    /// A failure during the run.
    Run(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Input(m) | Failure::Run(m) => f.write_str(m),
        }
    }
}

/// Bad input.
pub fn bad_input(e: impl fmt::Display) -> Failure {
    Failure::Input(e.to_string())
}

/// A failure during the run.
pub fn failed(e: impl fmt::Display) -> Failure {
    Failure::Run(e.to_string())
}

/// Prints `error: …` on stderr for a failure and returns the exit status.
pub fn exit(r: Result<(), Failure>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            match e {
                Failure::Input(_) => ExitCode::from(2),
                Failure::Run(_) => ExitCode::FAILURE,
            }
        }
    }
}
