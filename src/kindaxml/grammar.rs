//! The pest parser generated from grammar/kindaxml.pest.
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

use pest_derive::Parser;

/// Parses complete kindaxml tags (rules `start_tag` and `end_tag`).
#[derive(Parser)]
#[grammar = "grammar/kindaxml.pest"]
pub struct KindaxmlGrammar;
