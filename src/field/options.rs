//! The options every field family shares: where the output starts and the tools.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// A tool the model may call. Its `parameters` schema types the raw values of
/// XML-parameter families (see [`crate::field::typing`]); JSON families ignore it.
/// Read from JSON, a tool whose `parameters` hold a `$ref` that cannot be read
/// (FD-6b: outside the schema, to nothing, around a cycle) is refused, in every
/// family.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    /// The tool's name, as the model writes it.
    pub name: String,
    /// What the tool does (used only when rendering tool definitions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the arguments: an object schema with `properties`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
}

impl<'de> Deserialize<'de> for Tool {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The tool as written, before its references are checked (named `Tool`
        /// for serde's messages).
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields, rename = "Tool")]
        struct Written {
            name: String,
            #[serde(default)]
            description: Option<String>,
            #[serde(default)]
            parameters: Option<Value>,
        }
        let written = Written::deserialize(deserializer)?;
        let tool = Tool {
            name: written.name,
            description: written.description,
            parameters: written.parameters,
        };
        super::typing::check_references(&tool).map_err(serde::de::Error::custom)?;
        Ok(tool)
    }
}

/// The options shared by every field family, as given in JSON.
///
/// A family whose spec needs more (a tokenizer version, accepted marker spellings)
/// has its own options type with these two keys and its own; both keys keep these
/// names and meanings in every family.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Whether the output starts inside reasoning: the chat template ended the
    /// prompt with the reasoning opener, so the text is `…</think>answer`.
    pub start_in_reasoning: bool,
    /// The tools of the request, with their JSON Schemas.
    pub tools: Vec<Tool>,
}

impl Options {
    /// The tool called `name`, if the options list it.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// Tools whose only parameter's schema refers to itself through `$ref`.
    fn cyclic() -> serde_json::Value {
        json!({"tools": [{"name": "f", "parameters": {
            "$defs": {"A": {"$ref": "#/$defs/A"}}, "properties": {"p": {"$ref": "#/$defs/A"}}}}]})
    }

    const CYCLE: &str =
        "tool \"f\": $ref \"#/$defs/A\" refers back to itself through $ref, allOf, anyOf and oneOf alone";

    #[test]
    fn a_tool_with_a_ref_cycle_is_refused_when_a_built_in_family_reads_its_options() {
        for name in ["qwen3-coder", "glm", "minimax-m2", "hermes"] {
            let dialect = crate::dialect(name).expect("a dialect");
            let refused = dialect.open(&cyclic(), false).err().expect("refused");
            assert_eq!(
                refused.to_string(),
                format!("invalid {name} options: {CYCLE}")
            );
        }
    }

    #[test]
    fn a_tool_with_a_ref_cycle_is_refused_in_the_options_a_run_time_family_reads() {
        // `custom::Family::options` reads these options (CF-9 refuses as FD-6b).
        let refused = serde_json::from_value::<super::Options>(cyclic()).err();
        assert_eq!(refused.map(|e| e.to_string()).as_deref(), Some(CYCLE));
    }
}
