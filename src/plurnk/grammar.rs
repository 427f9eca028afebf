//! The pest parser generated from grammar/plurnk.pest.
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

use pest_derive::Parser;

/// Parses the complete pieces of a plurnk statement (header, signal, matcher, path prefix).
#[derive(Parser)]
#[grammar = "grammar/plurnk.pest"]
pub struct PlurnkGrammar;
