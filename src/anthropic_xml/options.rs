//! Options of the anthropic-xml dialect (AX-24): tool definitions and bounds.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Default for [`Options::max_tag_bytes`].
pub const DEFAULT_MAX_TAG_BYTES: usize = 1024;

/// The smallest [`Options::max_tag_bytes`] accepted: room for the longest closer in
/// the prefixed form and the lookahead after a parameter closer.
pub const MIN_MAX_TAG_BYTES: usize = 64;

/// A tool the model may call: used to type call inputs (AX-13) and to render the
/// tools block (AX-25).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolDefinition {
    /// The name the model writes in an invoke's `name` attribute.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the tool's parameters (an object schema with `properties`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
}

/// Options of the anthropic-xml dialect, as given in JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Tool definitions; a call to one of them is typed by its schema.
    pub tools: Vec<ToolDefinition>,
    /// The longest a structural tag may be, `<` to `>` inclusive; also bounds the
    /// lookahead after a parameter closer and so what is held back (AX-4, AX-11).
    pub max_tag_bytes: usize,
    /// Whether rendering writes the prefixed form of the tags.
    pub render_prefix: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tools: Vec::new(),
            max_tag_bytes: DEFAULT_MAX_TAG_BYTES,
            render_prefix: true,
        }
    }
}

/// Why a set of options cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionsProblem {
    /// `max_tag_bytes` is below [`MIN_MAX_TAG_BYTES`].
    TagBoundTooSmall(usize),
}

impl std::fmt::Display for OptionsProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionsProblem::TagBoundTooSmall(n) => {
                write!(
                    f,
                    "max_tag_bytes is {n}; it must be at least {MIN_MAX_TAG_BYTES}"
                )
            }
        }
    }
}

impl std::error::Error for OptionsProblem {}

impl Options {
    /// Checks the options.
    pub fn validate(&self) -> Result<(), OptionsProblem> {
        if self.max_tag_bytes < MIN_MAX_TAG_BYTES {
            return Err(OptionsProblem::TagBoundTooSmall(self.max_tag_bytes));
        }
        Ok(())
    }

    /// The definition of the tool called `name` (the first, if several share it).
    pub fn tool(&self, name: &str) -> Option<&ToolDefinition> {
        self.tools.iter().find(|t| t.name == name)
    }
}
