//! `idiolect.Parser`: one streaming parse, fed chunk by chunk (the idiom of the
//! standard library's `XMLPullParser`: `feed`, events, then `finish`).

use std::sync::{Mutex, MutexGuard, PoisonError};

use idiolect::session::{Dialect, Session};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use serde_json::Value;

use crate::convert::lines_into;
use crate::pyser::Shared;
use crate::{find, open, options_value, text_bytes};

// PyO3 lets a class cross threads only if it is `Send + Sync`. A session is
// `Send` but not `Sync` (a dialect's machine need not be), hence the `Mutex`.
// The methods that change the parse take `&mut self`, which PyO3's borrow flag
// makes exclusive (a call that overlaps another on the same parser raises
// `RuntimeError` before it starts), so they reach the session through
// `Mutex::get_mut`, without locking; `document` and `is_clean` lock it only
// while no Python code can run, so no call ever waits for the lock.
/// A streaming parse of one input: `feed` chunks, then `finish`. Usable from any
/// thread, one call at a time.
#[pyclass(module = "idiolect")]
pub struct Parser {
    dialect: &'static Dialect,
    options: Value,
    spans: bool,
    session: Mutex<Box<dyn Session>>,
    finished: bool,
    /// The JSON lines of the last feed, reused between feeds.
    lines: Vec<u8>,
}

/// The session of a call that holds the parser exclusively (`&mut self`), with
/// no locking.
fn exclusive(session: &mut Mutex<Box<dyn Session>>) -> &mut dyn Session {
    // Poisoned only by a panic in the library (a bug), which reached the caller
    // as PanicException already; the session stays as the panic left it, as it
    // did before it sat in a Mutex.
    &mut **session.get_mut().unwrap_or_else(PoisonError::into_inner)
}

impl Parser {
    /// The session, locked, for a call that only reads it. Hold the guard only
    /// while no Python code runs (see [`Parser`]).
    fn session(&self) -> MutexGuard<'_, Box<dyn Session>> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

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
            session: Mutex::new(session),
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
        exclusive(&mut self.session).feed_json(bytes, &mut self.lines);
        self.events(py)
    }

    /// Ends the input; returns the events the end decided.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.check_open("finish")?;
        self.finished = true;
        self.lines.clear();
        exclusive(&mut self.session).finish_json(&mut self.lines);
        self.events(py)
    }

    /// The document folded from the events so far (complete after `finish`).
    fn document<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // A whole document, possibly long: with struct templates.
        // The lock is released before the conversion, which makes Python objects.
        let document = self.session().document();
        Shared::new(py).convert(&document)
    }

    /// Whether the document is free of errors so far.
    #[getter]
    fn is_clean(&self) -> bool {
        self.session().is_clean()
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
        self.session = Mutex::new(open(self.dialect, &self.options, self.spans)?);
        self.finished = false;
        self.lines.clear();
        Ok(())
    }

    fn __repr__(&self) -> String {
        let state = if self.finished { "finished" } else { "open" };
        format!("<idiolect.Parser {} ({state})>", self.dialect.name)
    }
}
