//! Rendering a family from its description (CF-26): calls, results and whole turns
//! written by the templates of the description's `render` key, as the model's chat
//! template writes them when it replays history.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::field::reasoning::Spelling;
use crate::field::render_input::{
    call_of, list_of, object_arguments, raw_value, turn, CallSpec, ResultSpec,
};
use crate::field::{Document, Item};

/// The `render` key of a description (CF-26): templates in which `{{PLACEHOLDER}}`
/// is replaced and everything else is written as it stands.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Render {
    /// One call: `{{name}}`, `{{name_json}}`, `{{id}}`, `{{index}}`,
    /// `{{arguments}}`, `{{parameters}}`. Without it the family renders no calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// One argument, for `{{parameters}}`: `{{key}}`, `{{value}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// The id of a call that has none: `{{name}}`, `{{index}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Written before the calls written together.
    #[serde(default)]
    pub calls_open: String,
    /// Written after the calls written together.
    #[serde(default)]
    pub calls_close: String,
    /// Written between two calls written together.
    #[serde(default)]
    pub calls_separator: String,
    /// Written between two adjacent calls of a turn (default: `calls_separator`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_calls_separator: Option<String>,
    /// One tool result: `{{content}}`, `{{id}}`, `{{name}}`. Without it the family
    /// renders no results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Written before the results.
    #[serde(default)]
    pub results_open: String,
    /// Written after the results.
    #[serde(default)]
    pub results_close: String,
    /// Written between two results.
    #[serde(default)]
    pub results_separator: String,
    /// Written before reasoning in a turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_open: Option<String>,
    /// Written after reasoning in a turn, when it was closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_close: Option<String>,
    /// Written before each text item of a turn (CF-32).
    #[serde(default)]
    pub text_open: String,
    /// Written after each text item of a turn (CF-32).
    #[serde(default)]
    pub text_close: String,
}

/// What a placeholder stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Name,
    NameJson,
    Id,
    IdJson,
    Index,
    Arguments,
    Parameters,
    Key,
    Value,
    Content,
    ContentJson,
}

impl Slot {
    fn of(word: &str) -> Option<Slot> {
        Some(match word {
            "name" => Slot::Name,
            "name_json" => Slot::NameJson,
            "id" => Slot::Id,
            "id_json" => Slot::IdJson,
            "index" => Slot::Index,
            "arguments" => Slot::Arguments,
            "parameters" => Slot::Parameters,
            "key" => Slot::Key,
            "value" => Slot::Value,
            "content" => Slot::Content,
            "content_json" => Slot::ContentJson,
            _ => return None,
        })
    }
}

/// A piece of a template.
#[derive(Clone, Debug, PartialEq)]
enum Piece {
    Text(String),
    /// A placeholder, and the text written in its place when it is empty
    /// (`{{name|tool}}`, CF-32).
    Slot(Slot, Option<String>),
    /// `{{#id}}…{{/id}}`: written only where the placeholder's value is present
    /// (CF-32).
    Section(Slot, Template),
}

/// A template read into its pieces.
#[derive(Clone, Debug, Default, PartialEq)]
struct Template(Vec<Piece>);

/// How a template's placeholders are written: `fill` writes one, `present` says
/// whether a section's value is there.
struct Fill<'a> {
    fill: &'a mut dyn FnMut(Slot, &mut String) -> Result<(), String>,
    present: &'a dyn Fn(Slot) -> bool,
}

impl Template {
    /// Reads `text` as the template of `key`, whose placeholders are `allowed`.
    fn read(key: &str, text: &str, allowed: &[&str]) -> Result<Template, String> {
        let refuse = |what: String| format!("key `render.{key}`: {what}");
        let slot_of = |word: &str| {
            Slot::of(word)
                .filter(|_| allowed.contains(&word))
                .ok_or_else(|| {
                    refuse(format!(
                        "no placeholder `{{{{{word}}}}}` here (it offers {})",
                        allowed.join(", ")
                    ))
                })
        };
        // The open sections, innermost last, each with its pieces so far.
        let mut open: Vec<(String, Slot, Vec<Piece>)> = Vec::new();
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.find("{{") {
            if at > 0 {
                pieces.push(Piece::Text(rest[..at].to_string()));
            }
            let after = &rest[at + 2..];
            let close = after
                .find("}}")
                .ok_or_else(|| refuse("`{{` without `}}`".into()))?;
            let inside = &after[..close];
            rest = &after[close + 2..];
            if let Some(word) = inside.strip_prefix('#') {
                let word = word.trim();
                open.push((
                    word.to_string(),
                    slot_of(word)?,
                    std::mem::take(&mut pieces),
                ));
            } else if let Some(word) = inside.strip_prefix('/') {
                let word = word.trim();
                let Some((name, slot, outer)) = open.pop().filter(|(name, ..)| name == word) else {
                    return Err(refuse(format!("`{{{{/{word}}}}}` closes no open section")));
                };
                debug_assert_eq!(name, word);
                let body = std::mem::replace(&mut pieces, outer);
                pieces.push(Piece::Section(slot, Template(body)));
            } else {
                let (word, default) = match inside.split_once('|') {
                    Some((word, default)) => (word.trim(), Some(default.to_string())),
                    None => (inside.trim(), None),
                };
                pieces.push(Piece::Slot(slot_of(word)?, default));
            }
        }
        if let Some((word, ..)) = open.last() {
            return Err(refuse(format!("section `{{{{#{word}}}}}` is not closed")));
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_string()));
        }
        Ok(Template(pieces))
    }

    /// Whether the template writes `slot` anywhere, sections included.
    fn uses(&self, slot: Slot) -> bool {
        self.0.iter().any(|p| match p {
            Piece::Slot(s, _) => *s == slot,
            Piece::Section(s, body) => *s == slot || body.uses(slot),
            Piece::Text(_) => false,
        })
    }

    /// Writes the template, each placeholder by `fill`; every section is present.
    fn write(
        &self,
        out: &mut String,
        mut fill: impl FnMut(Slot, &mut String) -> Result<(), String>,
    ) -> Result<(), String> {
        self.write_with(
            out,
            &mut Fill {
                fill: &mut fill,
                present: &|_| true,
            },
        )
    }

    /// Writes the template as `with` says.
    fn write_with(&self, out: &mut String, with: &mut Fill<'_>) -> Result<(), String> {
        for piece in &self.0 {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Slot(slot, default) => {
                    let before = out.len();
                    (with.fill)(*slot, out)?;
                    if let (true, Some(default)) = (out.len() == before, default) {
                        out.push_str(default);
                    }
                }
                Piece::Section(slot, body) => {
                    if (with.present)(*slot) {
                        body.write_with(out, with)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// `text` as a JSON string.
fn json_string(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

/// A family's renderer, its templates read when the family is built.
#[derive(Clone, Debug)]
pub(crate) struct Renderer {
    /// The family's name, for messages.
    name: String,
    call: Option<Template>,
    parameter: Option<Template>,
    id: Option<Template>,
    result: Option<Template>,
    spec: Render,
}

impl Renderer {
    /// Reads the templates of `render` (CF-26).
    pub(crate) fn new(name: &str, render: &Render) -> Result<Renderer, String> {
        let read = |key: &str, text: &Option<String>, allowed: &[&str]| {
            text.as_deref()
                .map(|t| Template::read(key, t, allowed))
                .transpose()
        };
        let call = read(
            "call",
            &render.call,
            &[
                "name",
                "name_json",
                "id",
                "id_json",
                "index",
                "arguments",
                "parameters",
            ],
        )?;
        let parameter = read("parameter", &render.parameter, &["key", "value"])?;
        let id = read("id", &render.id, &["name", "index"])?;
        let result = read(
            "result",
            &render.result,
            &["content", "content_json", "id", "id_json", "name"],
        )?;
        if call.as_ref().is_some_and(|t| t.uses(Slot::Parameters)) && parameter.is_none() {
            return Err(
                "key `render.call`: `{{parameters}}` needs the key `render.parameter`".into(),
            );
        }
        for (key, text) in [
            ("reasoning_open", render.reasoning_open.as_ref()),
            ("reasoning_close", render.reasoning_close.as_ref()),
            ("text_open", Some(&render.text_open)),
            ("text_close", Some(&render.text_close)),
        ] {
            if let Some(text) = text {
                Template::read(key, text, &[])?;
            }
        }
        Ok(Renderer {
            name: name.to_string(),
            call,
            parameter,
            id,
            result,
            spec: render.clone(),
        })
    }

    /// One call at `index`.
    fn call(&self, spec: &CallSpec, index: usize, out: &mut String) -> Result<(), String> {
        let Some(call) = &self.call else {
            return Err(format!("{} renders no calls", self.name));
        };
        let mut fill = |slot, out: &mut String| {
            match slot {
                Slot::Name => out.push_str(&spec.name),
                Slot::NameJson => out.push_str(&json_string(&spec.name)),
                Slot::Index => out.push_str(&index.to_string()),
                Slot::Arguments => out.push_str(&spec.arguments_text()?),
                Slot::Id => self.id_of(spec, index, out)?,
                Slot::IdJson => {
                    let mut id = String::new();
                    self.id_of(spec, index, &mut id)?;
                    out.push_str(&json_string(&id));
                }
                Slot::Parameters => {
                    let parameter = self.parameter.as_ref().expect("checked when built");
                    for (key, value) in &object_arguments(spec)? {
                        parameter.write(out, |slot, out| {
                            match slot {
                                Slot::Key => out.push_str(key),
                                _ => out.push_str(&raw_value(value)),
                            }
                            Ok(())
                        })?;
                    }
                }
                Slot::Key | Slot::Value | Slot::Content | Slot::ContentJson => {}
            }
            Ok(())
        };
        // A section on the id is written for a call's own id (CF-32).
        let present = |slot| !matches!(slot, Slot::Id | Slot::IdJson) || spec.id.is_some();
        call.write_with(
            out,
            &mut Fill {
                fill: &mut fill,
                present: &present,
            },
        )
    }

    /// The id of a call: its own, or the `id` template's text.
    fn id_of(&self, spec: &CallSpec, index: usize, out: &mut String) -> Result<(), String> {
        match (&spec.id, &self.id) {
            (Some(id), _) => out.push_str(id),
            (None, Some(template)) => template.write(out, |slot, out| {
                match slot {
                    Slot::Name => out.push_str(&spec.name),
                    _ => out.push_str(&index.to_string()),
                }
                Ok(())
            })?,
            (None, None) => return Err(format!("the call of {:?} has no id", spec.name)),
        }
        Ok(())
    }

    /// Calls written together: the opener, the calls joined by `separator`, the
    /// closer.
    fn calls(
        &self,
        calls: impl IntoIterator<Item = (CallSpec, usize)>,
        separator: &str,
        out: &mut String,
    ) -> Result<(), String> {
        out.push_str(&self.spec.calls_open);
        for (n, (spec, index)) in calls.into_iter().enumerate() {
            if n > 0 {
                out.push_str(separator);
            }
            self.call(&spec, index, out)?;
        }
        out.push_str(&self.spec.calls_close);
        Ok(())
    }

    /// Tool calls, as the template writes them together (`render calls`).
    pub(crate) fn render_calls(&self, calls: &[CallSpec]) -> Result<String, String> {
        let mut out = String::new();
        let numbered = calls.iter().cloned().zip(0..);
        self.calls(numbered, &self.spec.calls_separator, &mut out)?;
        Ok(out)
    }

    /// Tool results (`render results`).
    pub(crate) fn render_results(&self, results: &[ResultSpec]) -> Result<String, String> {
        let Some(template) = &self.result else {
            return Err(format!("{} renders no results", self.name));
        };
        let mut out = self.spec.results_open.clone();
        for (n, result) in results.iter().enumerate() {
            if n > 0 {
                out.push_str(&self.spec.results_separator);
            }
            let mut fill = |slot, out: &mut String| {
                match slot {
                    Slot::Content => out.push_str(&result.content_text()),
                    Slot::ContentJson => out.push_str(&json_string(&result.content_text())),
                    Slot::Id => out.push_str(result.id.as_deref().unwrap_or("")),
                    Slot::IdJson => out.push_str(&json_string(result.id.as_deref().unwrap_or(""))),
                    _ => out.push_str(result.name.as_deref().unwrap_or("")),
                }
                Ok(())
            };
            let present = |slot| match slot {
                Slot::Id | Slot::IdJson => result.id.is_some(),
                Slot::Name => result.name.is_some(),
                _ => true,
            };
            template.write_with(
                &mut out,
                &mut Fill {
                    fill: &mut fill,
                    present: &present,
                },
            )?;
        }
        out.push_str(&self.spec.results_close);
        Ok(out)
    }

    /// The reasoning wrappers of a turn: the description's, or the first of the
    /// accepted spellings of CF-19's key (`think` when none is).
    fn wrappers(&self, accepted: Option<&[Spelling]>) -> Option<(String, String)> {
        if let Some(open) = &self.spec.reasoning_open {
            let close = self.spec.reasoning_close.clone().unwrap_or_default();
            return Some((open.clone(), close));
        }
        let spelling = accepted?.first().copied().unwrap_or(Spelling::Think);
        Some((spelling.opener().to_string(), spelling.closer().to_string()))
    }

    /// A whole turn (`render turn`): text as it is, reasoning in its wrappers, each
    /// run of adjacent calls written together. `accepted` are the spellings CF-19's
    /// key accepts (`None` without the key).
    pub(crate) fn render_turn(
        &self,
        doc: &Document,
        accepted: Option<&[Spelling]>,
    ) -> Result<String, String> {
        let separator = self
            .spec
            .turn_calls_separator
            .as_deref()
            .unwrap_or(&self.spec.calls_separator);
        let mut out = String::new();
        let mut items = doc.items.iter().peekable();
        while let Some(item) = items.next() {
            match item {
                Item::Text { text, .. } => {
                    out.push_str(&self.spec.text_open);
                    out.push_str(text);
                    out.push_str(&self.spec.text_close);
                }
                Item::Reasoning { text, closed, .. } => {
                    let (open, close) = self.wrappers(accepted).ok_or_else(|| {
                        format!("{} has no reasoning wrappers to render", self.name)
                    })?;
                    out.push_str(&open);
                    out.push_str(text);
                    if *closed {
                        out.push_str(&close);
                    }
                }
                Item::ToolCall { .. } => {
                    let mut run = vec![item];
                    while let Some(next) = items.next_if(|i| matches!(i, Item::ToolCall { .. })) {
                        run.push(next);
                    }
                    let calls = run.into_iter().filter_map(|item| match item {
                        Item::ToolCall { index, .. } => call_of(item).map(|spec| (spec, *index)),
                        _ => None,
                    });
                    self.calls(calls, separator, &mut out)?;
                }
            }
        }
        Ok(out)
    }

    /// `idiolect render` of the family: `what` is `calls`, `results` or `turn`
    /// (default: `calls`, or `turn` for a family that renders no calls).
    pub(crate) fn render(
        &self,
        what: Option<&str>,
        input: &Value,
        accepted: Option<&[Spelling]>,
    ) -> Result<String, String> {
        let default = if self.call.is_some() { "calls" } else { "turn" };
        match what.unwrap_or(default) {
            "calls" if self.call.is_some() => self.render_calls(&list_of::<CallSpec>(input)?),
            "results" if self.result.is_some() => {
                self.render_results(&list_of::<ResultSpec>(input)?)
            }
            "turn" => self.render_turn(&turn(input)?, accepted),
            other => {
                let offered = match (self.call.is_some(), self.result.is_some()) {
                    (true, true) => "calls, results or turn",
                    (true, false) => "calls or turn",
                    (false, true) => "results or turn",
                    (false, false) => "a turn only (it has no calls)",
                };
                Err(format!("{} renders {offered}, not {other:?}", self.name))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn renderer(json: &str) -> Result<Renderer, String> {
        let render: Render = serde_json::from_str(json).map_err(|e| e.to_string())?;
        Renderer::new("t", &render)
    }

    #[test]
    fn a_placeholder_a_key_does_not_offer_is_refused() {
        let e = renderer(r#"{"call": "{{name}} {{content}}"}"#).unwrap_err();
        assert!(
            e.contains("render.call") && e.contains("{{content}}"),
            "{e}"
        );
        let e = renderer(r#"{"result": "{{nme}}"}"#).unwrap_err();
        assert!(e.contains("render.result") && e.contains("{{nme}}"), "{e}");
    }

    #[test]
    fn an_unclosed_placeholder_is_refused() {
        let e = renderer(r#"{"call": "<{{name>"}"#).unwrap_err();
        assert!(e.contains("render.call") && e.contains("without"), "{e}");
    }

    #[test]
    fn parameters_need_the_parameter_template() {
        let e = renderer(r#"{"call": "<f={{name}}>{{parameters}}</f>"}"#).unwrap_err();
        assert!(e.contains("render.parameter"), "{e}");
    }

    #[test]
    fn placeholders_are_filled_and_braces_around_them_kept() {
        let r = renderer(r#"{"call": "{\"name\": {{name_json}}, \"arguments\": {{arguments}}}"}"#)
            .unwrap();
        let call = CallSpec {
            name: "a\"b".into(),
            arguments: serde_json::json!({"x": [1]}),
            id: None,
        };
        assert_eq!(
            r.render_calls(&[call]).unwrap(),
            r#"{"name": "a\"b", "arguments": {"x":[1]}}"#
        );
    }

    #[test]
    fn a_call_without_id_needs_the_id_template() {
        let call = CallSpec {
            name: "f".into(),
            arguments: Value::Null,
            id: None,
        };
        let bare = renderer(r#"{"call": "[{{id}}]"}"#).unwrap();
        assert!(bare.render_calls(std::slice::from_ref(&call)).is_err());
        let numbered = renderer(r#"{"call": "[{{id}}]", "id": "{{name}}:{{index}}"}"#).unwrap();
        assert_eq!(
            numbered.render_calls(&[call.clone(), call]).unwrap(),
            "[f:0][f:1]"
        );
    }

    #[test]
    fn a_family_without_a_call_template_renders_turns_only() {
        let r = renderer(r#"{"reasoning_open": "<r>", "reasoning_close": "</r>"}"#).unwrap();
        let e = r
            .render(Some("calls"), &Value::Array(vec![]), None)
            .unwrap_err();
        assert!(e.contains("a turn only"), "{e}");
        let doc = serde_json::json!({"items": [
            {"type": "reasoning", "text": "x", "closed": true},
            {"type": "text", "text": "y"}
        ]});
        assert_eq!(r.render(None, &doc, None).unwrap(), "<r>x</r>y");
    }

    #[test]
    fn sections_are_written_only_where_their_value_is_present() {
        let r = renderer(
            r#"{"call": "<{{name}}{{#id}} id={{id_json}}{{/id}}>", "id": "{{index}}",
                "result": "[{{name|tool}}{{#id}}#{{id}}{{/id}}:{{content_json}}]"}"#,
        )
        .unwrap();
        let call = |id: Option<&str>| CallSpec {
            name: "f".into(),
            arguments: Value::Null,
            id: id.map(str::to_string),
        };
        // The section tests the call's own id, not the `id` template's.
        assert_eq!(
            r.render_calls(&[call(Some("a\"b")), call(None)]).unwrap(),
            "<f id=\"a\\\"b\"><f>"
        );
        let results: Vec<ResultSpec> = serde_json::from_value(serde_json::json!([
            {"content": "x\ny", "id": "c1", "name": "g"},
            {"content": {"ok": true}}
        ]))
        .unwrap();
        assert_eq!(
            r.render_results(&results).unwrap(),
            "[g#c1:\"x\\ny\"][tool:\"{\\\"ok\\\":true}\"]"
        );
    }

    #[test]
    fn an_unclosed_or_unopened_section_is_refused() {
        for (json, says) in [
            (r#"{"call": "{{#id}}x"}"#, "is not closed"),
            (r#"{"call": "x{{/id}}"}"#, "closes no open section"),
            (
                r#"{"call": "{{#id}}{{#name}}{{/id}}{{/name}}"}"#,
                "closes no open section",
            ),
            (r#"{"call": "{{#content}}{{/content}}"}"#, "no placeholder"),
        ] {
            let e = renderer(json).unwrap_err();
            assert!(
                e.starts_with("key `render.call`: ") && e.contains(says),
                "{json}: {e}"
            );
        }
    }
}
