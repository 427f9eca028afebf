//! Rendering tool calls, tool results and whole turns into DeepSeek text (D3-18,
//! D31-10), as the chat templates write them into a prompt that replays history.

use serde_json::Value;

use super::Variant;
use crate::field::render_input::{call_of, list_of, push_think, turn, CallSpec, ResultSpec};
use crate::field::{Document, Item};

const CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
const CALLS_END: &str = "<｜tool▁calls▁end｜>";

/// One call: v3 with the type word and the fenced object, v3.1 name and object.
fn call(variant: Variant, spec: &CallSpec, out: &mut String) -> Result<(), String> {
    let arguments = spec.arguments_text()?;
    out.push_str("<｜tool▁call▁begin｜>");
    match variant {
        Variant::V3 => {
            out.push_str("function<｜tool▁sep｜>");
            out.push_str(&spec.name);
            out.push_str("\n```json\n");
            out.push_str(&arguments);
            out.push_str("\n```");
        }
        Variant::V31 => {
            out.push_str(&spec.name);
            out.push_str("<｜tool▁sep｜>");
            out.push_str(&arguments);
        }
    }
    out.push_str("<｜tool▁call▁end｜>");
    Ok(())
}

/// Tool calls as one calls section, calls separated by newlines.
pub fn render_calls(variant: Variant, calls: &[CallSpec]) -> Result<String, String> {
    let mut out = String::from(CALLS_BEGIN);
    for (i, spec) in calls.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        call(variant, spec, &mut out)?;
    }
    out.push_str(CALLS_END);
    Ok(out)
}

/// Tool results: each output between `<｜tool▁output▁begin｜>` and
/// `<｜tool▁output▁end｜>`; v3 wraps them in `<｜tool▁outputs▁begin｜>…<｜tool▁outputs▁end｜>`.
pub fn render_results(variant: Variant, results: &[ResultSpec]) -> String {
    let outputs: String = results
        .iter()
        .map(|r| {
            format!(
                "<｜tool▁output▁begin｜>{}<｜tool▁output▁end｜>",
                r.content_text()
            )
        })
        .collect();
    match variant {
        Variant::V3 => format!("<｜tool▁outputs▁begin｜>{outputs}<｜tool▁outputs▁end｜>"),
        Variant::V31 => outputs,
    }
}

/// A whole turn: reasoning as `<think>…</think>` (left open when it was not
/// closed), text verbatim, each run of adjacent calls as one calls section. Parsing
/// the result gives the turn back when its text and reasoning hold no markers and
/// its calls are complete.
pub fn render_turn(variant: Variant, doc: &Document) -> Result<String, String> {
    let mut out = String::new();
    let mut in_section = false;
    for item in &doc.items {
        let is_call = matches!(item, Item::ToolCall { .. });
        if in_section && !is_call {
            out.push_str(CALLS_END);
            in_section = false;
        }
        match item {
            Item::Reasoning { text, closed, .. } => push_think(&mut out, text, *closed),
            Item::Text { text, .. } => out.push_str(text),
            Item::ToolCall { .. } => {
                if in_section {
                    out.push('\n');
                } else {
                    out.push_str(CALLS_BEGIN);
                    in_section = true;
                }
                if let Some(spec) = call_of(item) {
                    call(variant, &spec, &mut out)?;
                }
            }
        }
    }
    if in_section {
        out.push_str(CALLS_END);
    }
    Ok(out)
}

fn render(
    variant: Variant,
    name: &str,
    what: Option<&str>,
    input: &Value,
) -> Result<String, String> {
    match what.unwrap_or("calls") {
        "calls" => render_calls(variant, &list_of::<CallSpec>(input)?),
        "results" => Ok(render_results(variant, &list_of::<ResultSpec>(input)?)),
        "turn" => render_turn(variant, &turn(input)?),
        other => Err(format!(
            "{name} renders calls, results or turn, not {other:?}"
        )),
    }
}

/// `idiolect render deepseek-v3 --what calls|results|turn`.
pub(crate) fn render_v3(
    what: Option<&str>,
    input: &Value,
    _options: &Value,
) -> Result<String, String> {
    render(Variant::V3, "deepseek-v3", what, input)
}

/// `idiolect render deepseek-v3.1 --what calls|results|turn`.
pub(crate) fn render_v31(
    what: Option<&str>,
    input: &Value,
    _options: &Value,
) -> Result<String, String> {
    render(Variant::V31, "deepseek-v3.1", what, input)
}
