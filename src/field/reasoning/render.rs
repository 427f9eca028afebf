//! Rendering a turn of the `reasoning` dialect (RS-10).

use serde_json::Value;

use super::Spelling;
use crate::field::custom::Options;
use crate::field::render_input::turn;
use crate::field::{Document, Item};

/// A whole turn: reasoning in `spelling` (left open when it was not closed), text
/// verbatim. Parsing the result gives the turn back when its texts hold no markers.
pub fn render_turn(doc: &Document, spelling: Spelling) -> Result<String, String> {
    let mut out = String::new();
    for item in &doc.items {
        match item {
            Item::Reasoning { text, closed, .. } => {
                out.push_str(spelling.opener());
                out.push_str(text);
                if *closed {
                    out.push_str(spelling.closer());
                }
            }
            Item::Text { text, .. } => out.push_str(text),
            Item::ToolCall { name, .. } => {
                return Err(format!(
                    "the reasoning dialect has no calls (found {name:?})"
                ))
            }
        }
    }
    Ok(out)
}

/// `idiolect render reasoning --what turn`.
pub(crate) fn render(what: Option<&str>, input: &Value, options: &Value) -> Result<String, String> {
    let options: Options = if options.is_null() {
        Options::default()
    } else {
        serde_json::from_value(options.clone()).map_err(|e| e.to_string())?
    };
    let spelling = options
        .reasoning_markers
        .and_then(|accepted| accepted.first().copied())
        .unwrap_or(Spelling::Think);
    match what.unwrap_or("turn") {
        "turn" => render_turn(&turn(input)?, spelling),
        other => Err(format!(
            "reasoning renders a turn only (it has no calls), not {other:?}"
        )),
    }
}
