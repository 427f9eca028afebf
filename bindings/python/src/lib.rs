//! The native module of the `idiolect` Python package (`idiolect._native`).
//!
//! A thin layer over the crate's dynamic layer ([`idiolect::session`]): a dialect
//! is found by name, options arrive as Python data and become JSON, sessions write
//! compact JSON, and that JSON becomes Python objects without a `serde_json::Value`
//! tree in between. Parsing runs with the GIL released, on a thread of its own
//! for large inputs while the calling thread converts what has settled
//! (module `typed`); `parse_many` parses on several threads, each converting its
//! own documents in turn with the GIL. Errors are the CLI's one-line messages,
//! raised as `ValueError` subclasses.

use idiolect::fold::Layout;
use idiolect::session::{Dialect, Session};
use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use serde_json::Value;

/// The module's Rust allocations (the typed documents, the parsers' buffers) go
/// to mimalloc rather than the C library's malloc: documents are built on one
/// thread and read or freed on another (the parsing thread of a large `parse`),
/// which glibc's per-thread arenas serve through locks, and a parse allocates
/// many small strings, mimalloc's fast case. Python's own objects keep CPython's
/// allocator. `local_dynamic_tls`: the module is loaded with `dlopen`, which has
/// no room reserved for initial-exec thread-locals.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod arenas;
mod convert;
mod deltas;
mod direct;
mod parser;
mod pyser;
mod server;
mod typed;

use convert::{to_value, type_name};

create_exception!(
    idiolect,
    UnknownDialectError,
    PyValueError,
    "No dialect has the given name; the message lists the known ones."
);
create_exception!(
    idiolect,
    OptionsError,
    PyValueError,
    "The dialect refused the options; the message says why, in one line."
);
create_exception!(
    idiolect,
    RenderError,
    PyValueError,
    "The dialect could not render the value (or renders nothing)."
);

/// The dialect called `name`, or the CLI's message listing the known ones.
fn find(name: &str) -> PyResult<&'static Dialect> {
    idiolect::dialect(name).ok_or_else(|| {
        let known: Vec<&str> = idiolect::dialects().iter().map(|d| d.name).collect();
        UnknownDialectError::new_err(format!(
            "unknown dialect {name:?}; known dialects: {}",
            known.join(", ")
        ))
    })
}

/// The options as JSON: `None` is an empty object, as when the CLI has no options.
fn options_value(options: Option<&Bound<'_, PyAny>>) -> PyResult<Value> {
    match options {
        None => Ok(Value::Object(Default::default())),
        Some(obj) if obj.is_none() => Ok(Value::Object(Default::default())),
        Some(obj) => {
            let value = to_value(obj, "options")?;
            if !value.is_object() {
                return Err(PyTypeError::new_err(format!(
                    "options must be a dict or None, not {}",
                    type_name(obj)
                )));
            }
            Ok(value)
        }
    }
}

/// Opens a session, raising [`OptionsError`] with the CLI's message.
fn open(dialect: &Dialect, options: &Value, spans: bool) -> PyResult<Box<dyn Session>> {
    dialect
        .open(options, spans)
        .map_err(|e| OptionsError::new_err(e.to_string()))
}

/// A whole document as the caller gave it: a `str`, whose UTF-8 is text already
/// (CPython refuses to encode one it cannot), or `bytes`, which the re-entry
/// layer decodes (S7).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Text<'a> {
    /// A `str`'s UTF-8.
    Str(&'a str),
    /// A `bytes` object's bytes.
    Bytes(&'a [u8]),
}

impl<'a> Text<'a> {
    /// The bytes.
    pub(crate) fn bytes(self) -> &'a [u8] {
        match self {
            Text::Str(s) => s.as_bytes(),
            Text::Bytes(b) => b,
        }
    }

    /// The length in bytes.
    pub(crate) fn len(self) -> usize {
        self.bytes().len()
    }

    /// The first piece of at most `size` bytes (at least 1; a `str` piece extended
    /// to the next character boundary) and the rest, or `None` when empty.
    pub(crate) fn split_piece(self, size: usize) -> Option<(Text<'a>, Text<'a>)> {
        let end = self.len().min(size.max(1));
        match self {
            _ if end == 0 => None,
            Text::Str(s) => {
                let (piece, rest) = idiolect::fold::split_str_piece(s, end);
                Some((Text::Str(piece), Text::Str(rest)))
            }
            Text::Bytes(b) => {
                let (piece, rest) = b.split_at(end);
                Some((Text::Bytes(piece), Text::Bytes(rest)))
            }
        }
    }
}

/// A `str` or `bytes` argument that is a whole document.
fn text_of<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Text<'a>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Text::Bytes(b.as_bytes()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Text::Str(s.to_str()?));
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be str or bytes, not {}",
        type_name(obj)
    )))
}

/// The bytes of a `str` (UTF-8) or `bytes` argument.
fn text_bytes<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<&'a [u8]> {
    text_of(obj, what).map(Text::bytes)
}

/// Parses `text` whole and returns the document as compact JSON: the path of
/// `idiolect parse --compact` (the document is written as it is folded).
pub(crate) fn whole(
    dialect: &Dialect,
    options: &Value,
    spans: bool,
    text: &[u8],
) -> Result<Vec<u8>, String> {
    let mut session = dialect.open(options, spans).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(text.len() + text.len() / 4 + 256);
    session
        .feed_document(text, Layout::Compact, &mut out)
        .and_then(|_| session.finish_document(Layout::Compact, &mut out))
        .map_err(|e| format!("cannot write the document: {e}"))?;
    Ok(out)
}

/// The names of the dialects this build knows, in a stable order.
#[pyfunction]
fn dialects() -> Vec<&'static str> {
    idiolect::dialects().iter().map(|d| d.name).collect()
}

/// The field family that reads the output of the model called `model`, as
/// servers and hubs spell it, with the options its chat template implies
/// (spec/custom-family.md CF-35): a dict with `family`, `pattern`, `options` and,
/// where the table has one, `note`; `None` when the model is not known.
#[pyfunction]
fn family_for_model<'py>(py: Python<'py>, model: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(found) = idiolect::field::families::for_model(model) else {
        return Ok(None);
    };
    let mut answer = serde_json::json!({
        "family": found.family,
        "pattern": found.pattern,
        "options": found.options,
    });
    if let Some(note) = found.note {
        answer["note"] = note.into();
    }
    convert::from_json(py, answer.to_string().as_bytes()).map(Some)
}

/// The emptied arenas of CPython's object allocator kept for reuse
/// (src/arenas.rs): how many and their total bytes, or `None` when the module
/// installed no arena allocator. For the package's tests; not part of its API.
#[pyfunction]
fn _kept_arenas() -> Option<(usize, usize)> {
    arenas::kept()
}

/// Parses one whole document (`str` or `bytes`) and returns it as a dict.
#[pyfunction]
#[pyo3(signature = (dialect, text, options=None, *, spans=false))]
fn parse<'py>(
    py: Python<'py>,
    dialect: &str,
    text: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyAny>>,
    spans: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let (runner, options, bytes) = one_document(dialect, text, options, spans)?;
    runner.parse(py, &options, spans, bytes)
}

/// The runner, the options and the bytes of a call on one document.
fn one_document<'a>(
    dialect: &str,
    text: &'a Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyAny>>,
    spans: bool,
) -> PyResult<(Box<dyn typed::Runner>, Value, Text<'a>)> {
    let found = find(dialect)?;
    let options = options_value(options)?;
    let bytes = text_of(text, "text")?;
    // Refuse bad options with the CLI's message (and their own exception).
    drop(open(found, &options, spans)?);
    Ok((typed::runner(found, &options), options, bytes))
}

/// [`whole`] for every text, on `threads` threads (each parsing one contiguous
/// share of the texts), in the order of `texts`.
fn whole_many(
    dialect: &Dialect,
    options: &Value,
    spans: bool,
    texts: &[&[u8]],
    threads: usize,
) -> Result<Vec<Vec<u8>>, String> {
    let share = texts.len().div_ceil(threads.max(1)).max(1);
    let shares: Vec<Result<Vec<Vec<u8>>, String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = texts
            .chunks(share)
            .map(|share| {
                scope.spawn(move || {
                    share
                        .iter()
                        .map(|text| whole(dialect, options, spans, text))
                        .collect()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a parsing thread does not panic"))
            .collect()
    });
    let mut out = Vec::with_capacity(texts.len());
    for share in shares {
        out.extend(share?);
    }
    Ok(out)
}

/// Parses many documents with the GIL released; returns the documents in the
/// order of `texts`: as dicts (`output="python"`), or as compact JSON strings
/// (`output="json"`), which Arrow-based pipelines (Ray Data, Spark, Polars) keep
/// as one string column instead of merging every document's shape into one struct
/// type.
#[pyfunction]
#[pyo3(signature = (dialect, texts, options=None, threads=None, *, spans=false, output="python"))]
fn parse_many<'py>(
    py: Python<'py>,
    dialect: &str,
    texts: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
    spans: bool,
    output: &str,
) -> PyResult<Bound<'py, PyList>> {
    if !matches!(output, "python" | "json") {
        return Err(PyValueError::new_err(format!(
            "output must be \"python\" or \"json\", not {output:?}"
        )));
    }
    let found = find(dialect)?;
    let options = options_value(options)?;
    drop(open(found, &options, spans)?);
    if texts.is_instance_of::<PyString>() || texts.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(format!(
            "texts must be an iterable of str or bytes, not a single {}",
            type_name(texts)
        )));
    }
    let threads = match threads {
        Some(0) => return Err(PyValueError::new_err("threads must be at least 1")),
        Some(n) => typed::Threads::Exactly(n),
        None => typed::Threads::All,
    };
    let objects: Vec<Bound<'py, PyAny>> = texts.try_iter()?.collect::<PyResult<_>>()?;
    let mut slices = Vec::with_capacity(objects.len());
    for (i, obj) in objects.iter().enumerate() {
        slices.push(text_of(obj, &format!("texts[{i}]"))?);
    }
    if output == "json" {
        let count = match threads {
            typed::Threads::Exactly(n) => n,
            typed::Threads::All => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let texts: Vec<&[u8]> = slices.iter().map(|t| t.bytes()).collect();
        let documents = py
            .detach(|| whole_many(found, &options, spans, &texts, count))
            .map_err(PyValueError::new_err)?;
        let strings = documents
            .into_iter()
            .map(|d| String::from_utf8(d).expect("the document's JSON is UTF-8"));
        return PyList::new(py, strings);
    }
    let documents =
        typed::runner(found, &options).parse_many(py, &options, spans, &slices, threads)?;
    // The list is a container allocated after many (see `GcPause`).
    let _paused = pyser::GcPause::new(py);
    PyList::new(py, documents)
}

/// The reasoning markers a field family reads with `options`: one `(opener,
/// closer)` pair per accepted spelling (`options["reasoning_markers"]`, else the
/// family's default, read from its options schema), in the order given. Servers
/// map them to token ids (a reasoning parser's end check).
#[pyfunction]
#[pyo3(signature = (family, options=None))]
fn reasoning_markers(
    family: &str,
    options: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<(&'static str, &'static str)>> {
    if !idiolect::field::is_family(family) {
        return Err(PyValueError::new_err(format!(
            "reasoning markers need a field family ({}), not {family:?}",
            idiolect::field::families::names()
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let found = find(family)?;
    let options = options_value(options)?;
    drop(open(found, &options, false)?);
    let given = match options.get("reasoning_markers") {
        Some(given) => given.clone(),
        None => found
            .schemas()
            .options
            .pointer("/properties/reasoning_markers/default")
            .cloned()
            .unwrap_or_else(|| Value::Array(Vec::new())),
    };
    let spellings: Vec<idiolect::field::reasoning::Spelling> = serde_json::from_value(given)
        .map_err(|e| OptionsError::new_err(format!("invalid {family} options: {e}")))?;
    Ok(spellings.iter().map(|s| (s.opener(), s.closer())).collect())
}

/// Renders `value` into the dialect's text, as `idiolect render DIALECT [WHAT]`.
#[pyfunction]
#[pyo3(signature = (dialect, what, value, options=None))]
fn render(
    dialect: &str,
    what: Option<&str>,
    value: &Bound<'_, PyAny>,
    options: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let found = find(dialect)?;
    let options = options_value(options)?;
    drop(open(found, &options, false)?);
    if !found.renders() {
        return Err(RenderError::new_err(format!(
            "the {} dialect has no renderer",
            found.name
        )));
    }
    let input = to_value(value, "value")?;
    found
        .render(what, &input, &options)
        .map_err(RenderError::new_err)
}

/// The module `idiolect._native`, re-exported by the `idiolect` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    arenas::install();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(dialects, m)?)?;
    m.add_function(wrap_pyfunction!(family_for_model, m)?)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(parse_many, m)?)?;
    m.add_function(wrap_pyfunction!(render, m)?)?;
    m.add_function(wrap_pyfunction!(reasoning_markers, m)?)?;
    m.add_function(wrap_pyfunction!(server::server_message, m)?)?;
    m.add_function(wrap_pyfunction!(server::call_markers, m)?)?;
    m.add_function(wrap_pyfunction!(server::call_structure, m)?)?;
    m.add_function(wrap_pyfunction!(_kept_arenas, m)?)?;
    m.add("KEEP_ARENA_BYTES", arenas::KEEP_BYTES)?;
    m.add_class::<parser::Parser>()?;
    m.add_class::<deltas::ChatDeltas>()?;
    m.add_class::<server::ServerDeltas>()?;
    m.add("UnknownDialectError", py.get_type::<UnknownDialectError>())?;
    m.add("OptionsError", py.get_type::<OptionsError>())?;
    m.add("RenderError", py.get_type::<RenderError>())?;
    Ok(())
}
