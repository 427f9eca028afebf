//! Typed call input: parameter strings to JSON values, by the tool's JSON Schema when
//! there is one (AX-13), else by the heuristic (AX-14).

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::options::ToolDefinition;

/// The declared JSON Schema `type`(s) of parameter `param`, if the schema gives any.
fn declared_types<'a>(tool: Option<&'a ToolDefinition>, param: &str) -> Option<Vec<&'a str>> {
    let property = tool?.input_schema.as_ref()?.get("properties")?.get(param)?;
    match property.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(list) => Some(list.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

fn fits(value: &Value, ty: &str) -> bool {
    match (ty, value) {
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        ("number", Value::Number(_)) => true,
        ("boolean", Value::Bool(_)) => true,
        ("null", Value::Null) => true,
        ("array", Value::Array(_)) => true,
        ("object", Value::Object(_)) => true,
        _ => false,
    }
}

/// Types one raw value by its declared types (AX-13).
fn by_schema(raw: &str, types: &[&str]) -> Value {
    if types.contains(&"string") {
        return Value::String(raw.to_string());
    }
    match serde_json::from_str::<Value>(raw.trim()) {
        Ok(value) if types.iter().any(|t| fits(&value, t)) => value,
        _ => Value::String(raw.to_string()),
    }
}

/// Whether `text` is `-?[0-9]{16,}`: an integer a double would not keep exactly.
fn is_long_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    digits.len() >= 16 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Types one raw value without a schema (AX-14).
pub fn heuristic(raw: &str) -> Value {
    let trimmed = raw.trim();
    if is_long_integer(trimmed) {
        return Value::String(raw.to_string());
    }
    serde_json::from_str::<Value>(trimmed).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// The typed input of a call to `tool` with these raw parameters.
pub fn typed_input(
    tool: Option<&ToolDefinition>,
    params: &IndexMap<String, String>,
) -> Map<String, Value> {
    params
        .iter()
        .map(|(name, raw)| {
            let value = match declared_types(tool, name) {
                Some(types) => by_schema(raw, &types),
                None => heuristic(raw),
            };
            (name.clone(), value)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn heuristic_keeps_long_integers_and_non_json_as_raw_strings() {
        assert_eq!(heuristic(" 42 "), json!(42));
        assert_eq!(
            heuristic("12345678901234567890"),
            json!("12345678901234567890")
        );
        assert_eq!(heuristic(" hi "), json!(" hi "));
        assert_eq!(heuristic("{\"a\":1}"), json!({"a": 1}));
    }

    #[test]
    fn schema_string_keeps_digits_and_integer_rejects_fractions() {
        let tool = ToolDefinition {
            name: "t".into(),
            description: None,
            input_schema: Some(
                json!({"properties": {"s": {"type": "string"}, "i": {"type": "integer"}}}),
            ),
        };
        let params: IndexMap<String, String> = [("s", "42"), ("i", "4.5"), ("x", "7")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let input = typed_input(Some(&tool), &params);
        assert_eq!(Value::Object(input), json!({"s": "42", "i": "4.5", "x": 7}));
    }
}
