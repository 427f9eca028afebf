//! What the renderers of every field family read: calls, results, or a whole turn
//! (`idiolect render FAMILY --what calls|results|turn` reads these from JSON).

use serde::Deserialize;
use serde_json::Value;

use super::document::{Document, Item};

/// A tool call to render: its name and its arguments (a JSON value, or the JSON
/// text of one).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// The tool's name.
    pub name: String,
    /// The arguments: a JSON object, or a string holding its JSON text.
    #[serde(default)]
    pub arguments: Value,
    /// The call id, for families that write one.
    #[serde(default)]
    pub id: Option<String>,
}

impl CallSpec {
    /// The arguments as compact JSON text (`{}` when absent).
    pub fn arguments_text(&self) -> Result<String, String> {
        match &self.arguments {
            Value::Null => Ok("{}".into()),
            Value::String(text) => serde_json::from_str::<Value>(text)
                .map(|_| text.clone())
                .map_err(|e| format!("arguments of {:?} are not JSON: {e}", self.name)),
            other => Ok(other.to_string()),
        }
    }
}

/// A tool result to render.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultSpec {
    /// The result's content: text, or JSON rendered as its text.
    pub content: Value,
    /// The call id it answers, for families that write one.
    #[serde(default)]
    pub id: Option<String>,
    /// The tool's name, for families that write it.
    #[serde(default)]
    pub name: Option<String>,
}

impl ResultSpec {
    /// The content as text: a string as it is, anything else as compact JSON.
    pub fn content_text(&self) -> String {
        match &self.content {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// Reads `input` as a list of `T`, or a single `T`.
pub fn list_of<T: serde::de::DeserializeOwned>(input: &Value) -> Result<Vec<T>, String> {
    match input {
        Value::Array(_) => serde_json::from_value(input.clone()).map_err(|e| e.to_string()),
        _ => serde_json::from_value(input.clone())
            .map(|one| vec![one])
            .map_err(|e| e.to_string()),
    }
}

/// Reads `input` as a turn document.
pub fn turn(input: &Value) -> Result<Document, String> {
    serde_json::from_value(input.clone()).map_err(|e| e.to_string())
}

/// A turn item as a call spec, if it is a tool call.
pub fn call_of(item: &Item) -> Option<CallSpec> {
    match item {
        Item::ToolCall {
            name,
            arguments,
            id,
            ..
        } => Some(CallSpec {
            name: name.clone(),
            arguments: Value::String(arguments.clone()),
            id: id.clone(),
        }),
        _ => None,
    }
}

/// A parameter value as the XML-parameter templates write it (qwen3-coder, glm,
/// minimax-m2): strings raw, everything else as JSON.
pub(crate) fn raw_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The arguments of `spec` as a JSON object, for the families that write one
/// parameter per key, in order.
pub(crate) fn object_arguments(spec: &CallSpec) -> Result<serde_json::Map<String, Value>, String> {
    let arguments: Value = serde_json::from_str(&spec.arguments_text()?)
        .map_err(|e| format!("arguments of {:?}: {e}", spec.name))?;
    match arguments {
        Value::Object(params) => Ok(params),
        _ => Err(format!("arguments of {:?} are not an object", spec.name)),
    }
}

/// Reasoning as `<think>…</think>`, left open when it was not closed.
pub(crate) fn push_think(out: &mut String, text: &str, closed: bool) {
    out.push_str("<think>");
    out.push_str(text);
    if closed {
        out.push_str("</think>");
    }
}
