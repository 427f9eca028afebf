//! grammar/transcript.pest: compiled for the parsing machine (what runs), and the pest
//! parser of the same text (the oracle the machine is tested against).
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

use std::sync::OnceLock;

use pest_derive::Parser;

use crate::machine::{compile_capturing, Program, RuleId};

/// pest's parser of grammar/transcript.pest. Nothing calls it at run time; deriving it
/// has pest validate the grammar when the crate is built.
#[allow(dead_code)]
#[derive(Parser)]
#[grammar = "grammar/transcript.pest"]
pub struct TranscriptGrammar;

/// The rules whose captures the state machine reads: the speaker of each format.
const CAPTURED: [&str; 3] = ["ha_speaker", "speaker", "role"];

/// grammar/transcript.pest compiled for the parsing machine, once. The grammar is part
/// of the crate and a test compiles it, so the `expect` cannot fire on a build whose
/// tests pass.
pub fn program() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        compile_capturing(include_str!("../../grammar/transcript.pest"), &CAPTURED)
            .expect("grammar/transcript.pest compiles (tested)")
    })
}

/// The rules of grammar/transcript.pest the state machine runs or reads.
#[derive(Debug)]
pub struct Rules {
    pub ha_header: RuleId,
    pub ha_speaker: RuleId,
    pub participant_header: RuleId,
    pub block_header: RuleId,
    pub name_colon: RuleId,
    pub speaker: RuleId,
    pub chatml_header: RuleId,
    pub role_line: RuleId,
    pub role: RuleId,
}

/// The rules, looked up once.
pub fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        let program = program();
        // The rules are in the grammar file of the crate (tested).
        let rule = |name: &str| program.rule(name).expect("rule of grammar/transcript.pest");
        Rules {
            ha_header: rule("ha_header"),
            ha_speaker: rule("ha_speaker"),
            participant_header: rule("participant_header"),
            block_header: rule("block_header"),
            name_colon: rule("name_colon"),
            speaker: rule("speaker"),
            chatml_header: rule("chatml_header"),
            role_line: rule("role_line"),
            role: rule("role"),
        }
    })
}
