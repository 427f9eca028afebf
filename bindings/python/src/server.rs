//! The server layer of the library (spec/servers.md) for the Python package:
//! `ServerDeltas` (a field family's output as the deltas an inference server sends),
//! `server_message` (the one-shot message), `call_markers` and `call_structure`
//! (a family's markers). `idiolect._servers` and the vLLM and SGLang plug-ins are
//! built on them.

use idiolect::field::server::{self, CallIds, ServerOptions, ServerProjection};
use idiolect::field::server_markers;
use idiolect::field::{self, DocumentFolder, Event};
use idiolect::Fold;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde_json::Value;

use crate::deltas::{family_stream, FieldStream};
use crate::pyser::to_python;
use crate::{find, open, options_value, text_bytes};

/// Checks that `family` is a field family, with the message of `ChatDeltas`.
fn check_family(family: &str) -> PyResult<()> {
    if field::is_family(family) {
        return Ok(());
    }
    Err(PyValueError::new_err(format!(
        "the server layer needs a field family ({}), not {family:?}",
        field::families::names().collect::<Vec<_>>().join(", ")
    )))
}

/// The server options of the arguments: `names` (an iterable of str, or None) and
/// `ids` (a style name).
fn server_options(names: Option<Vec<String>>, ids: &str) -> PyResult<ServerOptions> {
    let ids = CallIds::from_name(ids).ok_or_else(|| {
        PyValueError::new_err(format!(
            "ids must be one of {}, not {ids:?}",
            CallIds::NAMES.join(", ")
        ))
    })?;
    Ok(ServerOptions { ids, names })
}

/// The family's event stream, its options checked with the CLI's message.
fn checked_stream(
    family: &str,
    options: Option<&Bound<'_, PyAny>>,
) -> PyResult<(&'static str, Value, Box<dyn FieldStream>)> {
    check_family(family)?;
    let found = find(family)?;
    let options = options_value(options)?;
    drop(open(found, &options, false)?);
    let stream = family_stream(found.name, &options)?;
    Ok((found.name, options, stream))
}

/// A field family's output as the deltas an inference server sends (SV-1 to SV-8):
/// one delta per fed chunk at most, at most one call in each but the last. Usable
/// from any thread, one call at a time.
#[pyclass(module = "idiolect")]
pub struct ServerDeltas {
    dialect: &'static str,
    stream: Box<dyn FieldStream>,
    projection: ServerProjection,
    finished: bool,
    /// Reused between feeds.
    events: Vec<Event>,
}

impl ServerDeltas {
    fn check_open(&self, call: &str) -> PyResult<()> {
        if self.finished {
            return Err(PyRuntimeError::new_err(format!(
                "{call}() after finish(): the output has ended"
            )));
        }
        Ok(())
    }

    fn push_events(&mut self) {
        for event in self.events.drain(..) {
            self.projection.push(&event);
        }
    }
}

#[pymethods]
impl ServerDeltas {
    /// Deltas of field family `dialect` with `options`; `names` (the declared
    /// tools) drops calls to other tools; `ids` names how calls without the
    /// model's own id get one (`model`, `random`, `vllm`, `sequence`).
    #[new]
    #[pyo3(signature = (dialect, options=None, names=None, ids="model"))]
    fn new(
        dialect: &str,
        options: Option<&Bound<'_, PyAny>>,
        names: Option<Vec<String>>,
        ids: &str,
    ) -> PyResult<Self> {
        let rules = server_options(names, ids)?;
        let (dialect, _, stream) = checked_stream(dialect, options)?;
        Ok(ServerDeltas {
            dialect,
            stream,
            projection: ServerProjection::new(rules),
            finished: false,
            events: Vec::new(),
        })
    }

    /// Feeds a chunk (`str` or `bytes`); returns the delta it decided, or None.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.check_open("feed")?;
        let bytes = text_bytes(chunk, "chunk")?;
        self.stream.feed(bytes, &mut self.events);
        self.push_events();
        self.projection
            .delta()
            .map(|d| to_python(py, &d))
            .transpose()
    }

    /// Ends the output; returns the last delta (everything still held), or None.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.check_open("finish")?;
        self.finished = true;
        self.stream.finish(&mut self.events);
        self.push_events();
        self.projection
            .finish()
            .map(|d| to_python(py, &d))
            .transpose()
    }

    /// How many calls were announced so far.
    #[getter]
    fn calls(&self) -> usize {
        self.projection.calls()
    }

    /// Whether `finish` was called.
    #[getter]
    fn finished(&self) -> bool {
        self.finished
    }

    /// The family's name.
    #[getter]
    fn dialect(&self) -> &'static str {
        self.dialect
    }

    fn __repr__(&self) -> String {
        let state = if self.finished { "finished" } else { "open" };
        format!("<idiolect.ServerDeltas {} ({state})>", self.dialect)
    }
}

/// The one-shot message of a whole output of field family `dialect` (SV-9): a dict
/// with `content`, `reasoning` (None when empty) and `tool_calls` (complete calls
/// only, each `{"id", "type", "function": {"name", "arguments"}}`).
#[pyfunction]
#[pyo3(signature = (dialect, text, options=None, names=None, ids="model"))]
pub fn server_message<'py>(
    py: Python<'py>,
    dialect: &str,
    text: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyAny>>,
    names: Option<Vec<String>>,
    ids: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let rules = server_options(names, ids)?;
    let (_, _, mut stream) = checked_stream(dialect, options)?;
    let bytes = text_bytes(text, "text")?;
    let mut events = Vec::new();
    stream.feed(bytes, &mut events);
    stream.finish(&mut events);
    let mut folder = DocumentFolder::new(false);
    for event in &events {
        folder.push(event);
    }
    to_python(py, &server::message(&folder.into_document(), &rules))
}

/// The call markers of field family `family` (SV-10): the literal texts its calls
/// open with, read from its rendering (empty for a family that renders no call).
#[pyfunction]
pub fn call_markers(family: &str) -> PyResult<Vec<String>> {
    check_family(family)?;
    Ok(server_markers::family_call_markers(family).unwrap_or_default())
}

/// The call structure of field family `family` for the tool `name` (SV-11): a dict
/// `{"begin", "end", "trigger"}`, or None where the family's markup has none.
#[pyfunction]
pub fn call_structure<'py>(
    py: Python<'py>,
    family: &str,
    name: &str,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    check_family(family)?;
    server_markers::family_call_structure(family, name)
        .map(|s| to_python(py, &s))
        .transpose()
}
