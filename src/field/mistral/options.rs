//! The mistral family's options: the shared two keys, the tokenizer version and the
//! reasoning wrappers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::field::reasoning::spelling::Spelling;

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

family_options!(
    "mistral",
    "`[\"bracket\"]`, Magistral's `[THINK]`",
    vec![Spelling::Bracket],
    /// The tokenizer version: `auto` (default), `v3`, `v7`, `v11` or `v13` (MI-3).
    tokenizer_version: TokenizerVersion = TokenizerVersion::Auto,
);
