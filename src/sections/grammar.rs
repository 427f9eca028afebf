//! The pest parser generated from grammar/sections.pest and grammar/common.pest (the
//! oracle the parsing machine is tested against), and the program the dialect runs.
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

use std::sync::OnceLock;

use pest_derive::Parser;

use crate::machine::{compile_bounded, Program};

use super::MAX_BRACE_DEPTH;

/// pest's parser of grammar/sections.pest with grammar/common.pest: the oracle the
/// parsing machine running the same grammar is tested against. Nothing calls it at run
/// time; deriving it has pest validate the grammar when the crate is built.
#[allow(dead_code)]
#[derive(Parser)]
#[grammar = "grammar/sections.pest"]
#[grammar = "grammar/common.pest"]
pub struct SectionsGrammar;

/// The text of grammar/sections.pest followed by grammar/common.pest (concatenated,
/// as pest does with the two `#[grammar]` files above).
pub const TEXT: &str = concat!(
    include_str!("../../grammar/sections.pest"),
    "\n",
    include_str!("../../grammar/common.pest")
);

/// The rules whose captures the state machine reads: the tag name, the self-closing
/// slash, attribute keys and the raw text of each value form.
pub const CAPTURED: [&str; 7] = [
    "tag_name",
    "self_close",
    "attr_key",
    "dq_inner",
    "sq_inner",
    "brace_value",
    "bare_value",
];

/// grammar/sections.pest with grammar/common.pest compiled for the parsing machine,
/// once, with `brace_value` nesting at most [`MAX_BRACE_DEPTH`] levels (SEC-6). The
/// grammar is part of the crate and a test compiles it, so the `expect`
/// cannot fire on a build whose tests pass.
pub fn program() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        compile_bounded(
            TEXT,
            Some(&CAPTURED),
            &[("brace_value", MAX_BRACE_DEPTH as u32)],
        )
        .expect("grammar/sections.pest with common.pest compiles (tested)")
    })
}
