//! Rendering tool calls, tool results and whole turns into kimi-k2 text (KK-17), as
//! the chat template writes them into a prompt that replays history.

use serde_json::Value;

use crate::field::render_input::{call_of, list_of, push_think, turn, CallSpec, ResultSpec};
use crate::field::{Document, Item};

const SECTION_BEGIN: &str = "<|tool_calls_section_begin|>";
const SECTION_END: &str = "<|tool_calls_section_end|>";

/// One call: its id (or `functions.NAME:INDEX`), then its arguments.
fn call(spec: &CallSpec, index: usize, out: &mut String) -> Result<(), String> {
    let arguments = spec.arguments_text()?;
    out.push_str("<|tool_call_begin|>");
    match &spec.id {
        Some(id) => out.push_str(id),
        None => out.push_str(&format!("functions.{}:{index}", spec.name)),
    }
    out.push_str("<|tool_call_argument_begin|>");
    out.push_str(&arguments);
    out.push_str("<|tool_call_end|>");
    Ok(())
}

/// Tool calls as one section.
pub fn render_calls(calls: &[CallSpec]) -> Result<String, String> {
    let mut out = String::from(SECTION_BEGIN);
    for (index, spec) in calls.iter().enumerate() {
        call(spec, index, &mut out)?;
    }
    out.push_str(SECTION_END);
    Ok(out)
}

/// Tool results as the template writes them: `## Return of ID`, a newline and the
/// content, joined by newlines (a result without id names none).
pub fn render_results(results: &[ResultSpec]) -> String {
    results
        .iter()
        .map(|r| {
            format!(
                "## Return of {}\n{}",
                r.id.as_deref().unwrap_or(""),
                r.content_text()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A whole turn: reasoning as `<think>…</think>` (left open when it was not
/// closed), text verbatim, each run of adjacent calls as one section. Parsing the
/// result gives the turn back when its text and reasoning hold no markers, its
/// calls are complete and their ids are `functions.NAME:INDEX` or absent.
pub fn render_turn(doc: &Document) -> Result<String, String> {
    let mut out = String::new();
    let mut in_section = false;
    for item in &doc.items {
        let is_call = matches!(item, Item::ToolCall { .. });
        if in_section && !is_call {
            out.push_str(SECTION_END);
            in_section = false;
        }
        match item {
            Item::Reasoning { text, closed, .. } => push_think(&mut out, text, *closed),
            Item::Text { text, .. } => out.push_str(text),
            Item::ToolCall { index, .. } => {
                if !in_section {
                    out.push_str(SECTION_BEGIN);
                    in_section = true;
                }
                if let Some(spec) = call_of(item) {
                    call(&spec, *index, &mut out)?;
                }
            }
        }
    }
    if in_section {
        out.push_str(SECTION_END);
    }
    Ok(out)
}

/// `idiolect render kimi-k2 --what calls|results|turn`.
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
            "kimi-k2 renders calls, results or turn, not {other:?}"
        )),
    }
}
