//! Rendering tool calls, tool results and whole turns into mistral text (MI-17),
//! in the form of the options' tokenizer version.

use serde_json::{json, Value};

use super::options::{Options, TokenizerVersion};
use crate::field::render_input::{call_of, list_of, turn, CallSpec, ResultSpec};
use crate::field::{Document, Item};

/// Whether `version` writes the array form.
fn array_form(version: TokenizerVersion) -> bool {
    matches!(version, TokenizerVersion::V3 | TokenizerVersion::V7)
}

/// One array element: `name`, `arguments` (the arguments text as given), `id`
/// when there is one.
fn element(spec: &CallSpec, out: &mut String) -> Result<(), String> {
    let arguments = spec.arguments_text()?;
    out.push_str("{\"name\": ");
    out.push_str(&Value::String(spec.name.clone()).to_string());
    out.push_str(", \"arguments\": ");
    out.push_str(&arguments);
    if let Some(id) = &spec.id {
        out.push_str(", \"id\": ");
        out.push_str(&Value::String(id.clone()).to_string());
    }
    out.push('}');
    Ok(())
}

/// One call of the name form: v13 never writes the call id; v11 and `auto` write
/// it when there is one.
fn name_form(version: TokenizerVersion, spec: &CallSpec, out: &mut String) -> Result<(), String> {
    let arguments = spec.arguments_text()?;
    out.push_str("[TOOL_CALLS]");
    out.push_str(&spec.name);
    if let (Some(id), false) = (&spec.id, version == TokenizerVersion::V13) {
        out.push_str("[CALL_ID]");
        out.push_str(id);
    }
    out.push_str("[ARGS]");
    out.push_str(&arguments);
    Ok(())
}

/// Tool calls: one `[TOOL_CALLS]` array (v3, v7), or one name-form group each.
pub fn render_calls(version: TokenizerVersion, calls: &[CallSpec]) -> Result<String, String> {
    let mut out = String::new();
    if array_form(version) {
        out.push_str("[TOOL_CALLS][");
        for (i, spec) in calls.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            element(spec, &mut out)?;
        }
        out.push(']');
    } else {
        for spec in calls {
            name_form(version, spec, &mut out)?;
        }
    }
    Ok(out)
}

/// Tool results, each `[TOOL_RESULTS]`, a JSON object of `content` and (when
/// there is one) `call_id`, `[/TOOL_RESULTS]`, in every version.
pub fn render_results(results: &[ResultSpec]) -> String {
    results
        .iter()
        .map(|r| {
            let body = match &r.id {
                Some(id) => json!({"content": r.content_text(), "call_id": id}),
                None => json!({"content": r.content_text()}),
            };
            format!("[TOOL_RESULTS]{body}[/TOOL_RESULTS]")
        })
        .collect()
}

/// A whole turn: reasoning as `[THINK]…[/THINK]` (left open when it was not
/// closed), text verbatim, each run of adjacent calls as [`render_calls`] writes
/// them. Parsing the result with the same version gives the turn back when its
/// text and reasoning hold no markers and its calls are complete.
pub fn render_turn(version: TokenizerVersion, doc: &Document) -> Result<String, String> {
    let mut out = String::new();
    let mut run: Vec<CallSpec> = Vec::new();
    for item in &doc.items {
        if let Some(spec) = call_of(item) {
            run.push(spec);
            continue;
        }
        if !run.is_empty() {
            out.push_str(&render_calls(version, &run)?);
            run.clear();
        }
        match item {
            Item::Reasoning { text, closed, .. } => {
                out.push_str("[THINK]");
                out.push_str(text);
                if *closed {
                    out.push_str("[/THINK]");
                }
            }
            Item::Text { text, .. } => out.push_str(text),
            Item::ToolCall { .. } => {}
        }
    }
    if !run.is_empty() {
        out.push_str(&render_calls(version, &run)?);
    }
    Ok(out)
}

/// `idiolect render mistral --what calls|results|turn`, the version from the
/// options.
pub(crate) fn render(what: Option<&str>, input: &Value, options: &Value) -> Result<String, String> {
    let options: Options = if options.is_null() {
        Options::default()
    } else {
        serde_json::from_value(options.clone()).map_err(|e| e.to_string())?
    };
    let version = options.tokenizer_version;
    match what.unwrap_or("calls") {
        "calls" => render_calls(version, &list_of::<CallSpec>(input)?),
        "results" => Ok(render_results(&list_of::<ResultSpec>(input)?)),
        "turn" => render_turn(version, &turn(input)?),
        other => Err(format!(
            "mistral renders calls, results or turn, not {other:?}"
        )),
    }
}
