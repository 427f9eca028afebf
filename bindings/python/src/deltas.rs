//! `idiolect.ChatDeltas`: a field family's output as OpenAI chat-completion deltas,
//! one per fed chunk, the shape a vLLM or SGLang tool/reasoning parser returns.
//!
//! The deltas are the library's [`DeltaProjection`] of the family's events, as
//! `idiolect stream FAMILY --deltas` prints them; the deltas one chunk releases are
//! merged into one (texts concatenated, a call's argument fragments joined), so
//! each `feed` answers with at most one delta.

use idiolect::field::{self, CompactString, Delta, DeltaMode, DeltaProjection, ToolCalls};
use idiolect::Stream;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::convert::{to_value, type_name};
use crate::pyser::to_python;
use crate::typed::{field_family, FieldFamily};
use crate::{open, options_value, text_bytes, OptionsError};

/// A field family's stream of events, whatever its machine.
pub(crate) trait FieldStream: Send + Sync {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<field::Event>);
    fn finish(&mut self, out: &mut Vec<field::Event>);
}

impl<M> FieldStream for Stream<M>
where
    M: idiolect::Machine<Event = field::Event> + Send + Sync,
{
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<field::Event>) {
        out.extend(Stream::feed(self, bytes));
    }
    fn finish(&mut self, out: &mut Vec<field::Event>) {
        out.extend(Stream::finish(self));
    }
}

fn options_of<T: DeserializeOwned>(name: &str, options: &Value) -> PyResult<T> {
    T::deserialize(options)
        .map_err(|e| OptionsError::new_err(format!("invalid {name} options: {e}")))
}

/// A field family's event stream with the options it holds.
struct StreamOf<'a>(&'a Value);

impl FieldFamily for StreamOf<'_> {
    type Out = PyResult<Box<dyn FieldStream>>;
    fn engine(self, family: &'static field::custom::Family, name: &'static str) -> Self::Out {
        let options: field::custom::Options = options_of(name, self.0)?;
        let machine = family.machine(&options).map_err(|e| match e {
            field::custom::FamilyError::Options(message) => {
                OptionsError::new_err(format!("invalid {name} options: {message}"))
            }
            other => OptionsError::new_err(format!("invalid {name} options: {other}")),
        })?;
        Ok(Box::new(Stream::new(machine)))
    }
}

/// The event stream of family `name` (checked to be one) with `options`.
pub(crate) fn family_stream(name: &str, options: &Value) -> PyResult<Box<dyn FieldStream>> {
    field_family(name, StreamOf(options)).unwrap_or_else(|| {
        Err(PyValueError::new_err(format!(
            "the {name} family has no delta stream in this build"
        )))
    })
}

/// The tools of a request as the `tools` option: each is idiolect's
/// `{"name", "description", "parameters"}`, or the OpenAI request's
/// `{"type": "function", "function": {...}}` whose `function` holds those keys
/// (its other keys, such as `strict`, say nothing about parsing and are left out).
fn tools_value(tools: &Bound<'_, PyAny>) -> PyResult<Value> {
    let value = to_value(tools, "tools")?;
    let Value::Array(entries) = value else {
        return Err(PyTypeError::new_err(format!(
            "tools must be a list of tools or None, not {}",
            type_name(tools)
        )));
    };
    let tools = entries
        .into_iter()
        .map(|entry| match entry {
            Value::Object(mut tool)
                if tool.get("type") == Some(&Value::from("function"))
                    && tool.get("function").is_some_and(Value::is_object) =>
            {
                let Some(Value::Object(function)) = tool.remove("function") else {
                    return Value::Object(tool);
                };
                let kept: Map<String, Value> = function
                    .into_iter()
                    .filter(|(k, _)| matches!(k.as_str(), "name" | "description" | "parameters"))
                    .collect();
                Value::Object(kept)
            }
            other => other,
        })
        .collect();
    Ok(Value::Array(tools))
}

/// Merges the deltas of one chunk into one: texts concatenated, and a call's
/// argument fragments joined to the entry before them when it is the same call.
fn merge(deltas: Vec<Delta>) -> Option<Delta> {
    let mut rest = deltas.into_iter();
    let mut merged = rest.next()?;
    let mut calls = merged.tool_calls.take().map(ToolCalls::into_vec);
    for delta in rest {
        if let Some(text) = delta.content {
            merged
                .content
                .get_or_insert_with(CompactString::default)
                .push_str(&text);
        }
        if let Some(text) = delta.reasoning {
            merged
                .reasoning
                .get_or_insert_with(CompactString::default)
                .push_str(&text);
        }
        for call in delta.tool_calls.into_iter().flatten() {
            let calls = calls.get_or_insert_with(Vec::new);
            let continues =
                call.id.is_none() && call.kind.is_none() && call.function.name.is_none();
            match calls.last_mut() {
                Some(last) if continues && last.index == call.index => {
                    if let Some(fragment) = call.function.arguments {
                        last.function
                            .arguments
                            .get_or_insert_with(CompactString::default)
                            .push_str(&fragment);
                    }
                }
                _ => calls.push(call),
            }
        }
    }
    merged.tool_calls = calls.map(ToolCalls::from);
    Some(merged)
}

// `Send + Sync` as PyO3 asks of a class that may cross threads: the stream is
// (`FieldStream`), and the rest is plain data.
/// A field family's output as chat-completion deltas, one per fed chunk. Usable
/// from any thread, one call at a time.
#[pyclass(module = "idiolect")]
pub struct ChatDeltas {
    dialect: &'static str,
    options: Value,
    mode: DeltaMode,
    stream: Box<dyn FieldStream>,
    projection: DeltaProjection,
    finished: bool,
    /// Reused between feeds.
    events: Vec<field::Event>,
}

impl ChatDeltas {
    fn check_open(&self, call: &str) -> PyResult<()> {
        if self.finished {
            return Err(PyRuntimeError::new_err(format!(
                "{call}() after finish(): the output has ended; call reset() to read another"
            )));
        }
        Ok(())
    }

    /// The one delta of what the last feed or finish decided, or `None`.
    fn answer<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut deltas = Vec::new();
        for event in self.events.drain(..) {
            self.projection.push(&event, &mut deltas);
        }
        merge(deltas).map(|d| to_python(py, &d)).transpose()
    }
}

#[pymethods]
impl ChatDeltas {
    /// Deltas of field family `dialect`; `tools` (a list, or None) becomes the
    /// `tools` option; `whole_calls` releases each call whole when it completes.
    #[new]
    #[pyo3(signature = (dialect, options=None, tools=None, whole_calls=false))]
    fn new(
        dialect: &str,
        options: Option<&Bound<'_, PyAny>>,
        tools: Option<&Bound<'_, PyAny>>,
        whole_calls: bool,
    ) -> PyResult<Self> {
        // The CLI's check and message for `stream --deltas`.
        if !field::is_family(dialect) {
            return Err(PyValueError::new_err(format!(
                "--deltas needs a field family ({}), not {dialect:?}",
                field::families::names().collect::<Vec<_>>().join(", ")
            )));
        }
        let found = crate::find(dialect)?;
        let mut options = options_value(options)?;
        if let Some(tools) = tools.filter(|t| !t.is_none()) {
            let Value::Object(map) = &mut options else {
                return Err(PyTypeError::new_err("options must be a dict or None"));
            };
            if map.contains_key("tools") {
                return Err(PyValueError::new_err(
                    "tools are given twice: as options[\"tools\"] and as tools=",
                ));
            }
            map.insert("tools".into(), tools_value(tools)?);
        }
        // Refuse bad options with the CLI's message.
        drop(open(found, &options, false)?);
        let stream = family_stream(found.name, &options)?;
        let mode = if whole_calls {
            DeltaMode::WholeCalls
        } else {
            DeltaMode::Live
        };
        Ok(ChatDeltas {
            dialect: found.name,
            options,
            mode,
            stream,
            projection: DeltaProjection::new(mode),
            finished: false,
            events: Vec::new(),
        })
    }

    /// Feeds a chunk (`str` or `bytes`) of the model's output; returns the delta
    /// it decided (a dict with `content`, `reasoning` and/or `tool_calls`), or
    /// None when it decided nothing yet.
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.check_open("feed")?;
        let bytes = text_bytes(chunk, "chunk")?;
        self.stream.feed(bytes, &mut self.events);
        self.answer(py)
    }

    /// Ends the output; returns the delta the end decided, or None.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.check_open("finish")?;
        self.finished = true;
        self.stream.finish(&mut self.events);
        self.answer(py)
    }

    /// Starts over with the same family, options and mode, for a new output.
    fn reset(&mut self) -> PyResult<()> {
        self.stream = family_stream(self.dialect, &self.options)?;
        self.projection = DeltaProjection::new(self.mode);
        self.finished = false;
        self.events.clear();
        Ok(())
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

    /// Whether calls are released whole (`whole_calls=True`).
    #[getter]
    fn whole_calls(&self) -> bool {
        self.mode == DeltaMode::WholeCalls
    }

    fn __repr__(&self) -> String {
        let state = if self.finished { "finished" } else { "open" };
        let mode = if self.whole_calls() {
            ", whole_calls"
        } else {
            ""
        };
        format!("<idiolect.ChatDeltas {}{mode} ({state})>", self.dialect)
    }
}
