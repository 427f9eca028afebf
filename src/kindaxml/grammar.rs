//! grammar/kindaxml.pest: compiled for the parsing machine (what runs), and the
//! pest parser derived from it (the oracle the machine is tested against).
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

use std::sync::OnceLock;

use pest_derive::Parser;

use crate::machine::{compile_capturing, Program, RuleId};

/// pest's parser of grammar/kindaxml.pest. Nothing calls it at run time; deriving it
/// has pest validate the grammar when the crate is built, and the tests compare it
/// with the machine.
#[allow(dead_code)]
#[derive(Parser)]
#[grammar = "grammar/kindaxml.pest"]
pub struct KindaxmlGrammar;

/// The rules whose captures the state machine reads: the name, the literal block
/// opener, and the parts of a start tag.
pub const CAPTURED: [&str; 10] = [
    "name",
    "cdata_open",
    "attribute",
    "key",
    "dq_closed",
    "dq_open",
    "sq_closed",
    "sq_open",
    "bare_value",
    "self_close",
];

/// grammar/kindaxml.pest compiled for the parsing machine, once. The grammar is part
/// of the crate and a test compiles it, so the `expect` cannot fire on a build whose
/// tests pass.
pub fn program() -> &'static Program {
    static PROGRAM: OnceLock<Program> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        compile_capturing(include_str!("../../grammar/kindaxml.pest"), &CAPTURED)
            .expect("grammar/kindaxml.pest compiles (tested)")
    })
}

/// The rules of the grammar the state machine runs and reads.
pub struct TagRules {
    /// The entry rules: the head with and without literal blocks, and the rest of a
    /// start tag, of a recognized end tag and of an unknown end tag.
    pub head: RuleId,
    pub head_or_cdata: RuleId,
    pub start_rest: RuleId,
    pub end_rest: RuleId,
    pub unknown_end_rest: RuleId,
    /// The captured rules.
    pub name: RuleId,
    pub cdata_open: RuleId,
    pub attribute: RuleId,
    pub key: RuleId,
    /// The five value rules (quoted closed, quoted open, twice, and unquoted).
    pub values: [RuleId; 5],
    pub self_close: RuleId,
}

impl TagRules {
    /// The rules, looked up once.
    pub fn get() -> &'static TagRules {
        static RULES: OnceLock<TagRules> = OnceLock::new();
        RULES.get_or_init(|| {
            let program = program();
            // The rules are in the grammar file of the crate (tested).
            let rule = |name: &str| program.rule(name).expect("rule of grammar/kindaxml.pest");
            TagRules {
                head: rule("head"),
                head_or_cdata: rule("head_or_cdata"),
                start_rest: rule("start_rest"),
                end_rest: rule("end_rest"),
                unknown_end_rest: rule("unknown_end_rest"),
                name: rule("name"),
                cdata_open: rule("cdata_open"),
                attribute: rule("attribute"),
                key: rule("key"),
                values: ["dq_closed", "dq_open", "sq_closed", "sq_open", "bare_value"].map(rule),
                self_close: rule("self_close"),
            }
        })
    }
}
