//! The mistral family's options: the shared two keys, the tokenizer version and the
//! reasoning wrappers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::field::reasoning::spelling::Spelling;
use crate::field::Tool;

/// Which call syntax the model's tokenizer version writes (MI-3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TokenizerVersion {
    /// All three forms, told apart by the byte after `[TOOL_CALLS]`.
    #[default]
    Auto,
    /// `[TOOL_CALLS] [{"name", "arguments", "id"?}, …]` (Mistral-7B-v0.3, Mixtral, Nemo).
    V3,
    /// The same array form (Large-2407/2411).
    V7,
    /// `[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}`, call id optional (Mistral-Small-3.x).
    V11,
    /// `[TOOL_CALLS]NAME[ARGS]{…}` (Magistral, Devstral).
    V13,
}

/// The mistral options, as given in JSON (spec/mistral.md MI-3, MI-4, MI-18; FD-3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Whether the output starts inside reasoning (the prompt ended with `[THINK]`).
    pub start_in_reasoning: bool,
    /// The tools of the request (accepted; JSON arguments need no schema).
    pub tools: Vec<Tool>,
    /// The tokenizer version: `auto` (default), `v3`, `v7`, `v11` or `v13`.
    pub tokenizer_version: TokenizerVersion,
    /// The accepted reasoning wrappers (RS-11, MI-18): `think`, `bracket`,
    /// `triangle`; empty for none (default `["bracket"]`, Magistral's `[THINK]`).
    pub reasoning_markers: Vec<Spelling>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            start_in_reasoning: false,
            tools: Vec::new(),
            tokenizer_version: TokenizerVersion::Auto,
            reasoning_markers: vec![Spelling::Bracket],
        }
    }
}
