//! Rendering tool calls, tool results and whole turns into glm text (GL-15).

use serde_json::Value;

use crate::field::render_input::{
    joined_calls, list_of, object_arguments, raw_value, think_turn, turn, CallSpec, ResultSpec,
};
use crate::field::Document;

/// One call as the GLM-4.5 template writes it. The arguments must be a JSON
/// object (its keys become pairs, in order).
fn call(spec: &CallSpec, out: &mut String) -> Result<(), String> {
    let params = object_arguments(spec)?;
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
    joined_calls(calls, call)
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
    think_turn(doc, call)
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
