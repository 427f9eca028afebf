//! The grammars of the field families, compiled once at first use.
//!
//! A grammar here is part of the crate: a tests asserts that each compiles, so the
//! `expect` below can only fire on a grammar edit that the test suite refuses.

use std::sync::OnceLock;

use crate::machine::{compile, Program};

/// The text of grammar/field-json.pest: the JSON of tool-call arguments, appended to
/// each JSON-argument field family's grammar.
pub const FIELD_JSON: &str = include_str!("../../grammar/field-json.pest");

/// The text of grammar/json-call-object.pest: a call object's walk read as JSON
/// (spec/custom-family.md CF-24).
pub const JSON_CALL_OBJECT: &str = include_str!("../../grammar/json-call-object.pest");

/// A field grammar: the files it joins and their texts.
struct Source {
    files: &'static [&'static str],
    texts: &'static [&'static str],
}

impl Source {
    /// The grammar's text: its files' texts joined by newlines.
    fn text(&self) -> String {
        self.texts.join("\n")
    }

    /// The grammar's program.
    fn compile(&self) -> Program {
        compile(&self.text()).unwrap_or_else(|e| {
            panic!(
                "grammar/{}.pest compiles (tested): {e}",
                self.files.join(".pest + ")
            )
        })
    }
}

/// Every field grammar, by name.
fn sources() -> [(&'static str, Source); 3] {
    let source = |files, texts| Source { files, texts };
    [
        (
            "JSON_CALL_OBJECT",
            source(
                &["json-call-object", "field-json"],
                &[JSON_CALL_OBJECT, FIELD_JSON],
            ),
        ),
        (
            "HERMES",
            source(&["hermes", "reasoning"], &[HERMES, REASONING]),
        ),
        ("REASONING", source(&["reasoning"], &[REASONING])),
    ]
}

/// The program of the field grammar called `name`.
fn program(name: &str) -> Program {
    let (_, source) = sources()
        .into_iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("{name} is a field grammar"));
    source.compile()
}

/// The program of grammar/json-call-object.pest with grammar/field-json.pest.
pub fn json_call_object() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| program("JSON_CALL_OBJECT"))
}

/// The text of grammar/hermes.pest.
pub const HERMES: &str = include_str!("../../grammar/hermes.pest");

/// The program of grammar/hermes.pest with grammar/reasoning.pest.
pub fn hermes() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| program("HERMES"))
}

/// The text of grammar/python-call.pest: Python keyword arguments and literals,
/// appended to the llama3-json grammar and, as the `python` literal syntax
/// (spec/custom-family.md CF-27), to an engine family's.
pub const PYTHON_CALL: &str = include_str!("../../grammar/python-call.pest");

/// The text of grammar/reasoning.pest: the reasoning wrappers' markers, the
/// `reasoning` dialect's grammar, appended to the grammars of the families that
/// honour `reasoning_markers`.
pub const REASONING: &str = include_str!("../../grammar/reasoning.pest");

/// The program of grammar/reasoning.pest.
pub fn reasoning() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| program("REASONING"))
}
