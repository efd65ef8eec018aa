//! The Python client of the iris service: the extension module `argus_client._native`, which the
//! Python package `argus_client` (in `python/`) wraps. It reads a `client.toml`, parses each eye
//! as open-iris JSON (the package turns an open-iris `IrisTemplate` into that text) and runs the
//! Rust client ([`argus_client::Client`]) on its own tokio runtime, without holding the GIL.
//!
//! Built by maturin with the `python` feature (`pip install ./crates/pyclient`); without it this
//! crate is empty, so that `cargo test --workspace` neither builds PyO3 nor needs Python.

#[cfg(feature = "python")]
mod python;
