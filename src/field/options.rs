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

/// What the request's `tool_choice` asked of the model (spec/field.md FD-10),
/// given in JSON as the OpenAI request writes it: `"auto"` (the default),
/// `"none"`, `"required"`, or a function by name (`{"type": "function",
/// "function": {"name": NAME}}`, or the Responses API's `{"type": "function",
/// "name": NAME}`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The family's own reading (FD-10a).
    #[default]
    Auto,
    /// Calls are dropped, their markup stays markup (FD-10b).
    None,
    /// After any reasoning, the answer is a JSON array of call objects (FD-10c).
    Required,
    /// After any reasoning, the answer is this tool's arguments object (FD-10d).
    Function(String),
}

impl ToolChoice {
    /// Whether it is the default, `"auto"`.
    pub fn is_auto(&self) -> bool {
        *self == ToolChoice::Auto
    }

    /// The choice of the JSON value `value`, or a message saying what is expected.
    pub fn from_value(value: &Value) -> Result<ToolChoice, String> {
        let function = |v: &Value| {
            let named = v.get("name").and_then(Value::as_str).map(str::to_string);
            named.ok_or(())
        };
        match value {
            Value::String(s) if s == "auto" => return Ok(ToolChoice::Auto),
            Value::String(s) if s == "none" => return Ok(ToolChoice::None),
            Value::String(s) if s == "required" => return Ok(ToolChoice::Required),
            Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("function") => {
                let name = match o.get("function") {
                    Some(inner) => function(inner),
                    None => function(value),
                };
                if let Ok(name) = name {
                    return Ok(ToolChoice::Function(name));
                }
            }
            _ => {}
        }
        Err(format!(
            "invalid value {value} for `tool_choice`, expected \"auto\", \"none\", \"required\" or {{\"type\": \"function\", \"function\": {{\"name\": NAME}}}}"
        ))
    }
}

impl Serialize for ToolChoice {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolChoice::Auto => "auto".serialize(serializer),
            ToolChoice::None => "none".serialize(serializer),
            ToolChoice::Required => "required".serialize(serializer),
            ToolChoice::Function(name) => {
                serde_json::json!({"type": "function", "function": {"name": name}})
                    .serialize(serializer)
            }
        }
    }
}

impl<'de> Deserialize<'de> for ToolChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        ToolChoice::from_value(&value).map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for ToolChoice {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ToolChoice".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "What the request's tool_choice asked (FD-10): \"auto\", \"none\", \"required\", or a function by name.",
            "oneOf": [
                {"enum": ["auto", "none", "required"]},
                {
                    "type": "object",
                    "required": ["type", "function"],
                    "properties": {
                        "type": {"const": "function"},
                        "function": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string"}}
                        }
                    }
                },
                {
                    "type": "object",
                    "required": ["type", "name"],
                    "properties": {"type": {"const": "function"}, "name": {"type": "string"}}
                }
            ]
        })
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
    /// What the request's `tool_choice` asked (FD-10; default `"auto"`).
    #[serde(skip_serializing_if = "ToolChoice::is_auto")]
    pub tool_choice: ToolChoice,
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
