//! grammar/plurnk.pest: compiled for the parsing machine (what runs), and the pest
//! parser of the same text (the oracle the machine is tested against).
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

use std::sync::OnceLock;

use pest_derive::Parser;

use crate::machine::{compile_capturing, Program, RuleId};

/// pest's parser of grammar/plurnk.pest. Nothing calls it at run time; deriving it has
/// pest validate the grammar when the crate is built, and the tests use it as the oracle.
#[allow(dead_code)]
#[derive(Parser)]
#[grammar = "grammar/plurnk.pest"]
pub struct PlurnkGrammar;

/// The rules whose captures the state machine and typing read.
const CAPTURED: [&str; 18] = [
    "op",
    "body_open",
    "signal_text",
    "path_text",
    "int",
    "slot_break",
    "marker_start",
    "stray",
    "unclosed_signal",
    "unclosed_path",
    "unclosed_marker",
    "unclosed_header",
    "tag",
    "int_entry",
    "runtime_entry",
    "url_prefix",
    "regex_pattern",
    "regex_flags",
];

/// grammar/plurnk.pest compiled for the parsing machine, once. The grammar is part of
/// the crate and a test compiles it, so the `expect` cannot fire on a build whose
/// tests pass.
pub fn program() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        compile_capturing(include_str!("../../grammar/plurnk.pest"), &CAPTURED)
            .expect("grammar/plurnk.pest compiles (tested)")
    })
}

/// The rules of grammar/plurnk.pest the dialect runs or reads.
#[derive(Debug)]
pub struct Rules {
    pub opener: RuleId,
    pub header_step: RuleId,
    pub close_tag: RuleId,
    pub lookahead: RuleId,
    pub tag_list: RuleId,
    pub int_entry: RuleId,
    pub runtime_entry: RuleId,
    pub url_prefix: RuleId,
    pub regex_literal: RuleId,
    pub op: RuleId,
    pub body_open: RuleId,
    pub signal_text: RuleId,
    pub path_text: RuleId,
    pub int: RuleId,
    pub slot_break: RuleId,
    pub marker_start: RuleId,
    pub stray: RuleId,
    pub unclosed_signal: RuleId,
    pub unclosed_path: RuleId,
    pub unclosed_marker: RuleId,
    pub unclosed_header: RuleId,
    pub tag: RuleId,
    pub regex_pattern: RuleId,
    pub regex_flags: RuleId,
}

/// The rules, looked up once.
pub fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        let program = program();
        // The rules are in the grammar file of the crate (tested).
        let rule = |name: &str| program.rule(name).expect("rule of grammar/plurnk.pest");
        Rules {
            opener: rule("opener"),
            header_step: rule("header_step"),
            close_tag: rule("close_tag"),
            lookahead: rule("lookahead"),
            tag_list: rule("tag_list"),
            int_entry: rule("int_entry"),
            runtime_entry: rule("runtime_entry"),
            url_prefix: rule("url_prefix"),
            regex_literal: rule("regex_literal"),
            op: rule("op"),
            body_open: rule("body_open"),
            signal_text: rule("signal_text"),
            path_text: rule("path_text"),
            int: rule("int"),
            slot_break: rule("slot_break"),
            marker_start: rule("marker_start"),
            stray: rule("stray"),
            unclosed_signal: rule("unclosed_signal"),
            unclosed_path: rule("unclosed_path"),
            unclosed_marker: rule("unclosed_marker"),
            unclosed_header: rule("unclosed_header"),
            tag: rule("tag"),
            regex_pattern: rule("regex_pattern"),
            regex_flags: rule("regex_flags"),
        }
    })
}
