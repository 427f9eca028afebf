//! `idiolect.Parser`: one streaming parse, fed chunk by chunk (the idiom of the
//! standard library's `XMLPullParser`: `feed`, events, then `finish`).

use idiolect::session::{Dialect, Session};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use serde_json::Value;

use crate::convert::lines_into;
use crate::pyser::Shared;
use crate::{find, open, options_value, text_bytes};

/// A streaming parse of one input. Sessions are not `Send`, so a parser stays on
/// the thread that made it (pyo3 raises if another thread touches it).
#[pyclass(unsendable, module = "idiolect")]
pub struct Parser {
    dialect: &'static Dialect,
    options: Value,
    spans: bool,
    session: Box<dyn Session>,
    finished: bool,
    /// The JSON lines of the last feed, reused between feeds.
    lines: Vec<u8>,
}

impl Parser {
    fn check_open(&self, call: &str) -> PyResult<()> {
        if self.finished {
            return Err(PyRuntimeError::new_err(format!(
                "{call}() after finish(): the input has ended; call reset() to parse another"
            )));
        }
        Ok(())
    }

    fn events<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        lines_into(py, &self.lines, &list)?;
        Ok(list)
    }
}

#[pymethods]
impl Parser {
    /// A parser for `dialect` with `options` (a dict, or None for the defaults).
    #[new]
    #[pyo3(signature = (dialect, options=None, *, spans=false))]
    fn new(dialect: &str, options: Option<&Bound<'_, PyAny>>, spans: bool) -> PyResult<Self> {
        let dialect = find(dialect)?;
        let options = options_value(options)?;
        let session = open(dialect, &options, spans)?;
        Ok(Parser {
            dialect,
            options,
            spans,
            session,
            finished: false,
            lines: Vec::new(),
        })
    }

    /// Feeds a chunk (`str` or `bytes`); returns the events it decided.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.check_open("feed")?;
        let bytes = text_bytes(chunk, "chunk")?;
        self.lines.clear();
        self.session.feed_json(bytes, &mut self.lines);
        self.events(py)
    }

    /// Ends the input; returns the events the end decided.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.check_open("finish")?;
        self.finished = true;
        self.lines.clear();
        self.session.finish_json(&mut self.lines);
        self.events(py)
    }

    /// The document folded from the events so far (complete after `finish`).
    fn document<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // A whole document, possibly long: with struct templates.
        Shared::new(py).convert(&self.session.document())
    }

    /// Whether the document is free of errors so far.
    #[getter]
    fn is_clean(&self) -> bool {
        self.session.is_clean()
    }

    /// Whether `finish` was called.
    #[getter]
    fn finished(&self) -> bool {
        self.finished
    }

    /// The dialect's name.
    #[getter]
    fn dialect(&self) -> &'static str {
        self.dialect.name
    }

    /// Starts over with the same dialect and options, for a new input.
    fn reset(&mut self) -> PyResult<()> {
        self.session = open(self.dialect, &self.options, self.spans)?;
        self.finished = false;
        self.lines.clear();
        Ok(())
    }

    fn __repr__(&self) -> String {
        let state = if self.finished { "finished" } else { "open" };
        format!("<idiolect.Parser {} ({state})>", self.dialect.name)
    }
}
