//! The PyO3 bindings: `Client`, `Outcome` and the exceptions.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use argus_client::{Client, ClientConfig, ClientError, Kind};
use argus_iris::{IrisCode, IrisGeometry, Template};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(argus_client, ArgusError, PyException, "An Argus request failed; the message says why.");
create_exception!(
    argus_client,
    TemplateError,
    ArgusError,
    "A template that cannot be read, or is not in the service's layout. Nothing was sent."
);
create_exception!(
    argus_client,
    RefusedError,
    ArgusError,
    "A node refused the request (say, an eye with too few valid bits); nothing was enrolled."
);

/// The Python exception for a client error, with the Rust message.
fn py_err(e: ClientError) -> PyErr {
    match e {
        ClientError::Input(_) => TemplateError::new_err(e.to_string()),
        ClientError::Refused { .. } => RefusedError::new_err(e.to_string()),
        _ => ArgusError::new_err(e.to_string()),
    }
}

/// What the three nodes decided about one submission.
#[pyclass(module = "argus_client", frozen, get_all)]
struct Outcome {
    /// No enrolled identity matched (for `enroll`: nor an earlier query of its batch).
    unique: bool,
    /// The identity the template was enrolled as (`enroll` of a unique template), else None.
    enrolled: Option<u64>,
    /// The request's id (random, drawn by the client for this call; its retries reuse it).
    request_id: String,
    /// The batch (commit) that decided it.
    seq: u64,
}

#[pymethods]
impl Outcome {
    fn __repr__(&self) -> String {
        let enrolled = self.enrolled.map_or("None".to_string(), |id| id.to_string());
        format!(
            "Outcome(unique={}, enrolled={enrolled}, request_id='{}', seq={})",
            if self.unique { "True" } else { "False" },
            self.request_id,
            self.seq
        )
    }
}

impl From<argus_client::Outcome> for Outcome {
    fn from(o: argus_client::Outcome) -> Self {
        Outcome { unique: o.unique, enrolled: o.enrolled, request_id: o.request_id, seq: o.seq }
    }
}

/// A client of the three nodes (the package's `argus_client.Client` wraps it); its methods take
/// each eye as open-iris JSON text. Safe to share between Python threads.
#[pyclass(name = "Client", module = "argus_client._native", frozen)]
struct NativeClient {
    client: Client,
    /// The service's code layout: the eyes are read in it.
    geometry: IrisGeometry,
    /// Runs the client's connections; calls block on it with the GIL released.
    rt: tokio::runtime::Runtime,
}

#[pymethods]
impl NativeClient {
    /// A client configured by `config` (a `client.toml`; a relative `pki` is relative to it).
    #[new]
    fn new(config: PathBuf) -> PyResult<Self> {
        let cfg = ClientConfig::load(&config).map_err(py_err)?;
        let geometry = cfg.iris.layout.geometry().map_err(py_err)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("argus-client")
            .enable_all()
            .build()
            .map_err(|e| ArgusError::new_err(format!("starting the client's runtime: {e}")))?;
        let client = {
            let _in_runtime = rt.enter();
            Client::new(cfg).map_err(py_err)?
        };
        Ok(NativeClient { client, geometry, rt })
    }

    /// Checks the template and enrols it if unique.
    fn enroll(&self, py: Python<'_>, left: &str, right: &str) -> PyResult<Outcome> {
        let t = self.template(left, right)?;
        Ok(self.wait(py, self.client.submit(&t, Kind::Enroll))?.into())
    }

    /// Checks the template against the enrolled ones; enrols nothing.
    fn check(&self, py: Python<'_>, left: &str, right: &str) -> PyResult<Outcome> {
        let t = self.template(left, right)?;
        Ok(self.wait(py, self.client.submit(&t, Kind::Check))?.into())
    }

    /// Whether the template is enrolled identity `identity` (1:1, only yes or no is revealed).
    fn verify(&self, py: Python<'_>, left: &str, right: &str, identity: u64) -> PyResult<bool> {
        let t = self.template(left, right)?;
        self.wait(py, self.client.verify(&t, identity))
    }
}

impl NativeClient {
    /// The two-eye template from each eye's open-iris JSON, read in the service's layout.
    fn template(&self, left: &str, right: &str) -> PyResult<Template> {
        let eye = |text: &str, which: &str| {
            IrisCode::from_open_iris_json_with(text, self.geometry).map_err(|e| {
                TemplateError::new_err(format!(
                    "{which} eye (read in the service's layout {}): {e}",
                    self.geometry.describe()
                ))
            })
        };
        Template::new(eye(left, "left")?, eye(right, "right")?).map_err(|e| TemplateError::new_err(e.to_string()))
    }

    /// Runs `fut` to its end without the GIL, waking every 100 ms so that Python can run its
    /// signal handlers: Ctrl-C raises KeyboardInterrupt here instead of after the timeout (the
    /// request is then abandoned by this client; the nodes still decide it).
    fn wait<T: Send>(&self, py: Python<'_>, fut: impl Future<Output = Result<T, ClientError>> + Send) -> PyResult<T> {
        let mut fut = std::pin::pin!(fut);
        loop {
            let step = py.detach(|| {
                self.rt.block_on(async { tokio::time::timeout(Duration::from_millis(100), fut.as_mut()).await })
            });
            match step {
                Ok(result) => return result.map_err(py_err),
                Err(_elapsed) => py.check_signals()?,
            }
        }
    }
}

/// The Rust half of `argus_client` (import the package, not this module).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<NativeClient>()?;
    m.add_class::<Outcome>()?;
    m.add("ArgusError", py.get_type::<ArgusError>())?;
    m.add("TemplateError", py.get_type::<TemplateError>())?;
    m.add("RefusedError", py.get_type::<RefusedError>())?;
    Ok(())
}
