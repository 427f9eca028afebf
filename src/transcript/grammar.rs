//! The pest parser generated from grammar/transcript.pest.
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

use pest_derive::Parser;

/// Parses complete turn headers (rules `ha_header`, `participant_header`,
/// `block_header`, `chatml_header`).
#[derive(Parser)]
#[grammar = "grammar/transcript.pest"]
pub struct TranscriptGrammar;
