//! Rendering tool calls, tool results and whole turns into glm text (GL-15).

use serde_json::Value;

use crate::field::render_input::{call_of, list_of, turn, CallSpec, ResultSpec};
use crate::field::{Document, Item};

/// A value as the template writes it: strings raw, everything else as JSON.
fn raw_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One call as the GLM-4.5 template writes it. The arguments must be a JSON
/// object (its keys become pairs, in order).
fn call(spec: &CallSpec, out: &mut String) -> Result<(), String> {
    let arguments: Value = serde_json::from_str(&spec.arguments_text()?)
        .map_err(|e| format!("arguments of {:?}: {e}", spec.name))?;
    let Value::Object(params) = arguments else {
        return Err(format!("arguments of {:?} are not an object", spec.name));
    };
    out.push_str("<tool_call>");
    out.push_str(&spec.name);
    out.push('\n');
    for (key, value) in &params {
        out.push_str("<arg_key>");
        out.push_str(key);
        out.push_str("</arg_key>\n<arg_value>");
        out.push_str(&raw_value(value));
        out.push_str("</arg_value>\n");
    }
    out.push_str("</tool_call>");
    Ok(())
}

/// Tool calls, joined by newlines.
pub fn render_calls(calls: &[CallSpec]) -> Result<String, String> {
    let mut out = String::new();
    for (i, spec) in calls.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        call(spec, &mut out)?;
    }
    Ok(out)
}

/// Tool results: `<tool_response>CONTENT</tool_response>` each, joined by newlines.
pub fn render_results(results: &[ResultSpec]) -> String {
    results
        .iter()
        .map(|r| format!("<tool_response>{}</tool_response>", r.content_text()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A whole turn: reasoning as `<think>…</think>` (left open when it was not
/// closed), text verbatim, calls as [`render_calls`] writes them.
pub fn render_turn(doc: &Document) -> Result<String, String> {
    let mut out = String::new();
    for item in &doc.items {
        match item {
            Item::Reasoning { text, closed, .. } => {
                out.push_str("<think>");
                out.push_str(text);
                if *closed {
                    out.push_str("</think>");
                }
            }
            Item::Text { text, .. } => out.push_str(text),
            Item::ToolCall { .. } => {
                if let Some(spec) = call_of(item) {
                    call(&spec, &mut out)?;
                }
            }
        }
    }
    Ok(out)
}

/// `idiolect render glm --what calls|results|turn`.
pub(crate) fn render(
    what: Option<&str>,
    input: &Value,
    _options: &Value,
) -> Result<String, String> {
    match what.unwrap_or("calls") {
        "calls" => render_calls(&list_of::<CallSpec>(input)?),
        "results" => Ok(render_results(&list_of::<ResultSpec>(input)?)),
        "turn" => render_turn(&turn(input)?),
        other => Err(format!("glm renders calls, results or turn, not {other:?}")),
    }
}
