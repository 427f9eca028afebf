//! Rendering tool calls, tool results and whole turns into qwen3-coder text (QC-17).

use serde_json::Value;

use crate::field::render_input::{
    joined_calls, list_of, object_arguments, raw_value, think_turn, turn, CallSpec, ResultSpec,
};
use crate::field::Document;

/// One call as the Qwen3-Coder template writes it. The arguments must be a JSON
/// object (its keys become parameters, in order).
fn call(spec: &CallSpec, out: &mut String) -> Result<(), String> {
    let params = object_arguments(spec)?;
    out.push_str("<tool_call>\n<function=");
    out.push_str(&spec.name);
    out.push_str(">\n");
    for (key, value) in &params {
        out.push_str("<parameter=");
        out.push_str(key);
        out.push_str(">\n");
        out.push_str(&raw_value(value));
        out.push_str("\n</parameter>\n");
    }
    out.push_str("</function>\n</tool_call>");
    Ok(())
}

/// Tool calls, one block each, joined by newlines.
pub fn render_calls(calls: &[CallSpec]) -> Result<String, String> {
    joined_calls(calls, call)
}

/// Tool results as the template puts them in the following user turn:
/// `<tool_response>`, newline, content, newline, `</tool_response>`, joined by
/// newlines.
pub fn render_results(results: &[ResultSpec]) -> String {
    results
        .iter()
        .map(|r| format!("<tool_response>\n{}\n</tool_response>", r.content_text()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A whole turn: reasoning as `<think>…</think>`, text verbatim, calls as
/// [`render_calls`] writes them.
pub fn render_turn(doc: &Document) -> Result<String, String> {
    think_turn(doc, call)
}

/// `idiolect render qwen3-coder --what calls|results|turn`.
pub(crate) fn render(
    what: Option<&str>,
    input: &Value,
    _options: &Value,
) -> Result<String, String> {
    match what.unwrap_or("calls") {
        "calls" => render_calls(&list_of::<CallSpec>(input)?),
        "results" => Ok(render_results(&list_of::<ResultSpec>(input)?)),
        "turn" => render_turn(&turn(input)?),
        other => Err(format!(
            "qwen3-coder renders calls, results or turn, not {other:?}"
        )),
    }
}
