//! The pest parser generated from grammar/sections.pest and grammar/common.pest.
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

use pest_derive::Parser;

/// pest's parser of grammar/sections.pest with grammar/common.pest: the oracle the
/// parsing machine running the same grammar is tested against.
#[derive(Parser)]
#[grammar = "grammar/sections.pest"]
#[grammar = "grammar/common.pest"]
pub struct SectionsGrammar;
