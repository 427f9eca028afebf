//! Rendering tool calls, tool results and whole turns into harmony messages
//! (HA-18), as a prompt that replays history writes them.

use serde_json::Value;

use crate::field::render_input::{call_of, list_of, turn, CallSpec, ResultSpec};
use crate::field::{Document, Item};

/// One call: a commentary message to `functions.NAME`, JSON-constrained, ended by
/// `<|call|>`.
fn call(spec: &CallSpec, out: &mut String) -> Result<(), String> {
    let arguments = spec.arguments_text()?;
    out.push_str("<|start|>assistant<|channel|>commentary to=functions.");
    out.push_str(&spec.name);
    out.push_str(" <|constrain|>json<|message|>");
    out.push_str(&arguments);
    out.push_str("<|call|>");
    Ok(())
}

/// Tool calls, one message each.
pub fn render_calls(calls: &[CallSpec]) -> Result<String, String> {
    let mut out = String::new();
    for spec in calls {
        call(spec, &mut out)?;
    }
    Ok(out)
}

/// Tool results, one message each from the tool (`functions.NAME`) to the
/// assistant on the commentary channel.
pub fn render_results(results: &[ResultSpec]) -> String {
    results
        .iter()
        .map(|r| {
            format!(
                "<|start|>functions.{} to=assistant<|channel|>commentary<|message|>{}<|end|>",
                r.name.as_deref().unwrap_or("tool"),
                r.content_text()
            )
        })
        .collect()
}

/// A whole turn: reasoning on the analysis channel, text on the final channel,
/// calls as [`render_calls`] writes them; every message from `<|start|>assistant`
/// and ended by `<|end|>` (reasoning left without it when it was not closed).
/// Parsing the result gives the turn back when its text and reasoning hold no
/// markers and its calls are complete.
pub fn render_turn(doc: &Document) -> Result<String, String> {
    let mut out = String::new();
    for item in &doc.items {
        match item {
            Item::Reasoning { text, closed, .. } => {
                out.push_str("<|start|>assistant<|channel|>analysis<|message|>");
                out.push_str(text);
                if *closed {
                    out.push_str("<|end|>");
                }
            }
            Item::Text { text, .. } => {
                out.push_str("<|start|>assistant<|channel|>final<|message|>");
                out.push_str(text);
                out.push_str("<|end|>");
            }
            Item::ToolCall { .. } => {
                if let Some(spec) = call_of(item) {
                    call(&spec, &mut out)?;
                }
            }
        }
    }
    Ok(out)
}

/// `idiolect render harmony --what calls|results|turn`.
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
            "harmony renders calls, results or turn, not {other:?}"
        )),
    }
}
