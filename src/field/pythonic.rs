//! The pythonic family (Llama 4, Llama 3.2 small, Liquid): a list of calls
//! `[f(a=1, b="x"), g(c=True)]` with Python literal keyword arguments, optionally
//! wrapped in `<|python_start|>…<|python_end|>`. Rules: spec/pythonic.md.
//!
//! The family is grammar/pythonic.pest and grammar/pythonic.family.json, run by the
//! engine ([`crate::field::families::family`]`("pythonic")`, the `keywords`
//! encoding with `python` literals, spec/custom-family.md CF-27); this module
//! renders it (PY-16, PY-18 says why in Rust).
//!
//! ```
//! use idiolect::field::{families, Item};
//! let pythonic = families::family("pythonic").expect("a built-in family");
//! let doc = pythonic.parse("[get_weather(city='Paris', days=3)]", &Default::default()).unwrap();
//! assert!(matches!(&doc.items[0], Item::ToolCall { arguments, .. } if arguments == "{\"city\":\"Paris\",\"days\":3}"));
//! ```

use serde_json::Value;

use crate::field::render_input::{call_of, list_of, push_think, turn, CallSpec, ResultSpec};
use crate::field::{Document, Item};

/// Renders `doc`'s items; `group` writes a run of adjacent calls.
fn turn_with(
    doc: &Document,
    group: fn(&[CallSpec]) -> Result<String, String>,
) -> Result<String, String> {
    let mut out = String::new();
    let mut calls: Vec<CallSpec> = Vec::new();
    for item in &doc.items {
        if let Some(spec) = call_of(item) {
            calls.push(spec);
            continue;
        }
        if !calls.is_empty() {
            out.push_str(&group(&calls)?);
            calls.clear();
        }
        match item {
            Item::Reasoning { text, closed, .. } => push_think(&mut out, text, *closed),
            Item::Text { text, .. } => out.push_str(text),
            Item::ToolCall { .. } => {}
        }
    }
    if !calls.is_empty() {
        out.push_str(&group(&calls)?);
    }
    Ok(out)
}

/// Tool results as Llama 3 templates put them: each in an `ipython` message,
/// `<|start_header_id|>ipython<|end_header_id|>`, a blank line, the content,
/// `<|eot_id|>`.
fn render_results(results: &[ResultSpec]) -> String {
    results
        .iter()
        .map(|r| {
            format!(
                "<|start_header_id|>ipython<|end_header_id|>\n\n{}<|eot_id|>",
                r.content_text()
            )
        })
        .collect()
}

/// A JSON value as a Python literal: strings as JSON writes them (a JSON string
/// is a Python string with the same value), `True`/`False`/`None`, lists, dicts.
fn python_literal(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(_) => out.push_str(&value.to_string()),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_literal(item, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(": ");
                python_literal(v, out);
            }
            out.push('}');
        }
    }
}

/// Whether `key` is a Python identifier as PY-6 reads keywords.
fn is_keyword(key: &str) -> bool {
    let mut bytes = key.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// One pythonic call: `NAME(k=v, …)`.
fn pythonic_call(spec: &CallSpec, out: &mut String) -> Result<(), String> {
    let text = spec.arguments_text()?;
    let arguments: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let Value::Object(members) = arguments else {
        return Err(format!("arguments of {:?} are not an object", spec.name));
    };
    if !spec.name.split('.').all(is_keyword) {
        return Err(format!("{:?} is not a Python name", spec.name));
    }
    out.push_str(&spec.name);
    out.push('(');
    for (i, (k, v)) in members.iter().enumerate() {
        if !is_keyword(k) {
            return Err(format!(
                "argument {k:?} of {:?} is not a Python keyword",
                spec.name
            ));
        }
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(k);
        out.push('=');
        python_literal(v, out);
    }
    out.push(')');
    Ok(())
}

/// pythonic calls: one list `[f(a=1), g(b="x")]`.
pub fn render_calls(calls: &[CallSpec]) -> Result<String, String> {
    let mut out = String::from("[");
    for (i, spec) in calls.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        pythonic_call(spec, &mut out)?;
    }
    out.push(']');
    Ok(out)
}

/// A whole pythonic turn: reasoning as `<think>…</think>`, text verbatim, each run
/// of adjacent calls as one list. Parsing the result gives the turn back when its
/// texts hold no markers and no `[`, and its calls are complete.
pub fn render_turn(doc: &Document) -> Result<String, String> {
    turn_with(doc, render_calls)
}

/// `idiolect render pythonic --what calls|results|turn` (results as Llama
/// templates write them: the `ipython` message).
pub(crate) fn render_json(
    what: Option<&str>,
    input: &Value,
    _options: &Value,
) -> Result<String, String> {
    match what.unwrap_or("calls") {
        "calls" => render_calls(&list_of::<CallSpec>(input)?),
        "results" => Ok(render_results(&list_of::<ResultSpec>(input)?)),
        "turn" => render_turn(&turn(input)?),
        other => Err(format!(
            "pythonic renders calls, results or turn, not {other:?}"
        )),
    }
}
