//! A field family's call markers and call structure (spec/servers.md, SV-10 and
//! SV-11), read from its description's rendering: what a server's `has_tool_call`
//! looks for, and the begin/end/trigger triple a server builds a structural tag
//! from for constrained decoding.
//!
//! ```
//! use idiolect::field::server_markers::{family_call_markers, family_call_structure};
//! assert_eq!(family_call_markers("hermes").unwrap(), ["<tool_call>"]);
//! let s = family_call_structure("hermes", "get_weather").unwrap();
//! assert_eq!(s.begin, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": ");
//! assert_eq!(s.end, "}\n</tool_call>");
//! assert_eq!(s.trigger, "<tool_call>");
//! ```

use serde::Serialize;
use serde_json::Value;

use super::families;

/// The literal head of a template: its text before the first placeholder.
fn head(template: &str) -> &str {
    template.split("{{").next().unwrap_or_default()
}

/// A head cut to its marker (SV-10): up to its first whitespace, `{` or `"`.
fn marker(head: &str) -> Option<&str> {
    let end = head
        .find(|c: char| c.is_whitespace() || c == '{' || c == '"')
        .unwrap_or(head.len());
    Some(&head[..end]).filter(|m| !m.is_empty())
}

fn render_text<'a>(description: &'a Value, key: &str) -> Option<&'a str> {
    description.get("render")?.get(key)?.as_str()
}

/// The call markers of the family `description` (its JSON): `render.calls_open`'s
/// and `render.call`'s heads cut to markers, in that order, without repeats (SV-10).
pub fn call_markers(description: &Value) -> Vec<String> {
    let mut markers: Vec<String> = Vec::new();
    for key in ["calls_open", "call"] {
        if let Some(found) = render_text(description, key).map(head).and_then(marker) {
            if !markers.iter().any(|m| m == found) {
                markers.push(found.to_owned());
            }
        }
    }
    markers
}

/// The text around one call's arguments, for constrained decoding (SV-11).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallStructure {
    /// The call's text before its arguments, the tool's name written in.
    pub begin: String,
    /// The call's text after its arguments.
    pub end: String,
    /// The call marker `begin` starts with.
    pub trigger: String,
}

/// The placeholders of a template, in order (`{{#id}}` sections included as
/// `#id`), and the texts between them.
fn pieces(template: &str) -> (Vec<&str>, Vec<&str>) {
    let mut texts = Vec::new();
    let mut words = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        texts.push(&rest[..open]);
        let Some(close) = rest[open..].find("}}") else {
            break;
        };
        words.push(&rest[open + 2..open + close]);
        rest = &rest[open + close + 2..];
    }
    texts.push(rest);
    (words, texts)
}

/// The call structure of the family `description` for the tool `name` (SV-11), or
/// `None` where the family's markup cannot hold one schema-constrained object.
pub fn call_structure(description: &Value, name: &str) -> Option<CallStructure> {
    let encoding = description.get("arguments")?.get("encoding")?.as_str()?;
    if !matches!(encoding, "json" | "json_call_object") {
        return None;
    }
    let template = render_text(description, "call")?;
    let (words, texts) = pieces(template);
    let written = match words.as_slice() {
        ["name", "arguments"] => name.to_owned(),
        ["name_json", "arguments"] => Value::from(name).to_string(),
        _ => return None,
    };
    let begin = format!("{}{written}{}", texts[0], texts[1]);
    let trigger = call_markers(description)
        .into_iter()
        .find(|m| begin.starts_with(m.as_str()))?;
    Some(CallStructure {
        begin,
        end: texts[2].to_owned(),
        trigger,
    })
}

/// The description of a family of the table, as JSON.
fn description_json(family: &str) -> Option<Value> {
    let entry = families::TABLE.iter().find(|e| e.name == family)?;
    Some(serde_json::from_str(entry.description).expect("a family description (tested)"))
}

/// [`call_markers`] of the table's family `family`; `None` for a name that is no
/// field family.
pub fn family_call_markers(family: &str) -> Option<Vec<String>> {
    description_json(family).map(|d| call_markers(&d))
}

/// [`call_structure`] of the table's family `family` for the tool `name`.
pub fn family_call_structure(family: &str, name: &str) -> Option<CallStructure> {
    call_structure(&description_json(family)?, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The markers of every family with calls rendered, read by hand from their
    /// descriptions (SV-10).
    #[test]
    fn markers_are_the_heads_cut_at_whitespace_brace_or_quote() {
        let expected: &[(&str, &[&str])] = &[
            ("hermes", &["<tool_call>"]),
            ("qwen3-coder", &["<tool_call>"]),
            ("glm", &["<tool_call>"]),
            (
                "deepseek-v3.1",
                &["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>"],
            ),
            (
                "kimi-k2",
                &["<|tool_calls_section_begin|>", "<|tool_call_begin|>"],
            ),
            ("llama3-json", &["<|python_tag|>"]),
            ("hunyuan-a13b", &["<tool_calls>["]),
            ("minimax-m2", &["<minimax:tool_call>", "<invoke"]),
            ("mistral", &["[TOOL_CALLS]"]),
            ("seed-oss", &["<seed:tool_call>"]),
            ("kimi-k3", &["<|open|>tools<|sep|>", "<|open|>call"]),
            ("pythonic", &[]),
            ("gemma4", &[]),
        ];
        for (family, markers) in expected {
            assert_eq!(
                family_call_markers(family).unwrap(),
                markers.to_vec(),
                "{family}"
            );
        }
        assert_eq!(family_call_markers("sections"), None);
    }

    /// The structures of the JSON families with a name-then-arguments template,
    /// and none for the others (SV-11).
    #[test]
    fn structures_exist_where_one_object_is_the_arguments() {
        let s = family_call_structure("deepseek-v3.1", "f").unwrap();
        assert_eq!(s.begin, "<｜tool▁call▁begin｜>f<｜tool▁sep｜>");
        assert_eq!(s.end, "<｜tool▁call▁end｜>");
        assert_eq!(s.trigger, "<｜tool▁call▁begin｜>");
        let s = family_call_structure("hermes", "a\"b").unwrap();
        assert_eq!(
            s.begin,
            "<tool_call>\n{\"name\": \"a\\\"b\", \"arguments\": "
        );
        let s = family_call_structure("deepseek-v3", "f").unwrap();
        assert_eq!(
            s.begin,
            "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n"
        );
        assert_eq!(s.end, "\n```<｜tool▁call▁end｜>");
        // kimi-k2 writes an id, mistral an id section, llama3-json and
        // hunyuan-a13b open a call with bare JSON, qwen3-coder's arguments are
        // parameters.
        for family in [
            "kimi-k2",
            "mistral",
            "llama3-json",
            "hunyuan-a13b",
            "qwen3-coder",
            "pythonic",
        ] {
            assert_eq!(family_call_structure(family, "f"), None, "{family}");
        }
    }
}
