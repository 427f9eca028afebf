//! The pest parser generated from grammar/sections.pest and grammar/common.pest.
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

use pest_derive::Parser;

/// Parses complete section tags (rules `opener` and `closer`).
#[derive(Parser)]
#[grammar = "grammar/sections.pest"]
#[grammar = "grammar/common.pest"]
pub struct SectionsGrammar;
