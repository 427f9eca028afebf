//! Rendering tool calls, tool results and whole turns into hermes text (HE-14).

use serde_json::Value;

use crate::field::render_input::{joined_calls, list_of, think_turn, turn, CallSpec, ResultSpec};
use crate::field::Document;

/// One call as the hermes templates write it: `<tool_call>`, newline, the JSON
/// object with `name` first and the arguments text as given, newline, the closer.
fn call(spec: &CallSpec, out: &mut String) -> Result<(), String> {
    let arguments = spec.arguments_text()?;
    out.push_str("<tool_call>\n{\"name\": ");
    out.push_str(&Value::String(spec.name.clone()).to_string());
    out.push_str(", \"arguments\": ");
    out.push_str(&arguments);
    out.push_str("}\n</tool_call>");
    Ok(())
}

/// Tool calls, one block each, joined by newlines.
pub fn render_calls(calls: &[CallSpec]) -> Result<String, String> {
    joined_calls(calls, call)
}

/// Tool results as the Qwen/Hermes templates put them in the following user turn:
/// `<tool_response>`, newline, the content, newline, `</tool_response>`, joined by
/// newlines.
pub fn render_results(results: &[ResultSpec]) -> String {
    results
        .iter()
        .map(|r| format!("<tool_response>\n{}\n</tool_response>", r.content_text()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A whole turn: reasoning as `<think>…</think>` (left open when it was not
/// closed), text verbatim, calls as [`render_calls`] writes them. Parsing the
/// result gives the turn back when its text and reasoning contain no markers and
/// its calls are complete.
pub fn render_turn(doc: &Document) -> Result<String, String> {
    think_turn(doc, call)
}

/// `idiolect render hermes --what calls|results|turn`.
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
            "hermes renders calls, results or turn, not {other:?}"
        )),
    }
}
