//! Rendering tool calls, tool results and whole turns into minimax-m2 text (MM-15).

use serde_json::Value;

use crate::field::render_input::{
    call_of, list_of, object_arguments, push_think, raw_value, turn, CallSpec, ResultSpec,
};
use crate::field::{Document, Item};

const BLOCK_OPEN: &str = "<minimax:tool_call>\n";
const BLOCK_CLOSE: &str = "</minimax:tool_call>";

/// One invoke. The arguments must be a JSON object (its keys become parameters,
/// in order).
fn invoke(spec: &CallSpec, out: &mut String) -> Result<(), String> {
    let params = object_arguments(spec)?;
    out.push_str("<invoke name=\"");
    out.push_str(&spec.name);
    out.push_str("\">\n");
    for (key, value) in &params {
        out.push_str("<parameter name=\"");
        out.push_str(key);
        out.push_str("\">");
        out.push_str(&raw_value(value));
        out.push_str("</parameter>\n");
    }
    out.push_str("</invoke>\n");
    Ok(())
}

/// Tool calls as one block.
pub fn render_calls(calls: &[CallSpec]) -> Result<String, String> {
    let mut out = String::from(BLOCK_OPEN);
    for spec in calls {
        invoke(spec, &mut out)?;
    }
    out.push_str(BLOCK_CLOSE);
    Ok(out)
}

/// Tool results: `<response>CONTENT</response>` each, joined by newlines.
pub fn render_results(results: &[ResultSpec]) -> String {
    results
        .iter()
        .map(|r| format!("<response>{}</response>", r.content_text()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A whole turn: reasoning as `<think>…</think>`, text verbatim, each run of
/// adjacent calls as one block. Parse it back with `start_in_reasoning: false`.
pub fn render_turn(doc: &Document) -> Result<String, String> {
    let mut out = String::new();
    let mut in_block = false;
    for item in &doc.items {
        let is_call = matches!(item, Item::ToolCall { .. });
        if in_block && !is_call {
            out.push_str(BLOCK_CLOSE);
            in_block = false;
        }
        match item {
            Item::Reasoning { text, closed, .. } => push_think(&mut out, text, *closed),
            Item::Text { text, .. } => out.push_str(text),
            Item::ToolCall { .. } => {
                if !in_block {
                    out.push_str(BLOCK_OPEN);
                    in_block = true;
                }
                if let Some(spec) = call_of(item) {
                    invoke(&spec, &mut out)?;
                }
            }
        }
    }
    if in_block {
        out.push_str(BLOCK_CLOSE);
    }
    Ok(out)
}

/// `idiolect render minimax-m2 --what calls|results|turn`.
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
            "minimax-m2 renders calls, results or turn, not {other:?}"
        )),
    }
}
