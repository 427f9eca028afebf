//! The pest parser generated from grammar/anthropic-xml.pest with grammar/common.pest (the oracle the parsing
//! machine is tested against; the dialect runs the same grammar on the machine), and
//! the structural names.
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

use std::sync::OnceLock;

use pest_derive::Parser;

use crate::machine::{compile_capturing, Program};

/// pest's parser of grammar/anthropic-xml.pest. Nothing calls it at run time; deriving
/// it has pest validate the grammar when the crate is built.
#[allow(dead_code)]
#[derive(Parser)]
#[grammar = "grammar/anthropic-xml.pest"]
#[grammar = "grammar/common.pest"]
pub struct AnthropicXmlGrammar;

/// A structural name (AX-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Name {
    Thinking,
    FunctionCalls,
    FunctionResults,
    Invoke,
    Parameter,
    Result,
    Error,
}

impl Name {
    /// Every name.
    pub const ALL: [Name; 7] = [
        Name::Thinking,
        Name::FunctionCalls,
        Name::FunctionResults,
        Name::Invoke,
        Name::Parameter,
        Name::Result,
        Name::Error,
    ];

    /// The spelling of this name (also the name of its rule in the grammar).
    pub const fn as_str(self) -> &'static str {
        match self {
            Name::Thinking => "thinking",
            Name::FunctionCalls => "function_calls",
            Name::FunctionResults => "function_results",
            Name::Invoke => "invoke",
            Name::Parameter => "parameter",
            Name::Result => "result",
            Name::Error => "error",
        }
    }
}

/// The rules whose captures the state machine reads: the names, the self-closing
/// slash, attribute keys and values, and the parameter closer of a value's end.
pub const CAPTURED: [&str; 12] = [
    "thinking",
    "function_calls",
    "function_results",
    "invoke",
    "parameter",
    "result",
    "error",
    "self_close",
    "xml_key",
    "xml_value",
    "xml_sq_value",
    "parameter_closer",
];

/// grammar/anthropic-xml.pest with grammar/common.pest compiled for the parsing machine, once. The grammar is
/// part of the crate and a test compiles it, so the `expect` cannot fire on a build
/// whose tests pass.
pub fn program() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let text = concat!(
            include_str!("../../grammar/anthropic-xml.pest"),
            "\n",
            include_str!("../../grammar/common.pest")
        );
        compile_capturing(text, &CAPTURED)
            .expect("grammar/anthropic-xml.pest with common.pest compiles (tested)")
    })
}
