//! Typing the raw values of XML-parameter families by the request's tool schema.
//!
//! The text between parameter tags is raw: `5` may be the string or the number.
//! With a schema the declared types are tried in order: `integer` and `number`
//! take a JSON number (the digits are kept as written, so integers beyond 2^53
//! survive exactly in the arguments text), `boolean` takes `true`/`false` in any
//! ASCII case (Python's `True`/`False` too), `null` takes `null` or `None`,
//! `object` and `array` take JSON of that kind, `string` takes the raw text
//! verbatim. A value no declared type takes stays the raw string. Without a schema
//! for the parameter every value is the raw string.

use serde_json::Value;

use super::options::Tool;

/// The declared JSON Schema types of parameter `param` of `tool`, in order: from
/// `type` (a name or a list), else from the `type` of each `anyOf`/`oneOf` branch.
/// `None` when the schema says nothing about the parameter.
pub fn declared_types<'a>(tool: Option<&'a Tool>, param: &str) -> Option<Vec<&'a str>> {
    let property = tool?.parameters.as_ref()?.get("properties")?.get(param)?;
    let of = |v: &'a Value| -> Vec<&'a str> {
        match v.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    };
    let mut types = of(property);
    if types.is_empty() {
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = property.get(key) {
                types.extend(branches.iter().flat_map(of));
            }
        }
    }
    (!types.is_empty()).then_some(types)
}

/// Whether a parameter with these declared types is a plain string, so that its
/// bytes can be streamed as an escaped JSON string as they arrive: no schema, or
/// `string` as the only type.
pub fn streams_as_string(types: Option<&[&str]>) -> bool {
    match types {
        None => true,
        Some(types) => types.iter().all(|t| *t == "string"),
    }
}

/// `text` escaped as the inside of a JSON string (no quotes). Escaping works
/// character by character, so the fragments of a string escape to the fragments
/// of its escaped form.
pub fn escape_fragment(text: &str) -> String {
    // Most fragments need no escaping: copy them as they are.
    if !needs_escape(text) {
        return text.to_string();
    }
    let quoted = Value::String(text.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

/// Whether `text` changes when written inside a JSON string (a control
/// character, `"` or `\`): when not, [`escape_fragment`] returns it as it is.
pub fn needs_escape(text: &str) -> bool {
    text.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\')
}

/// The JSON text of one raw value, typed by the declared types (see the module
/// docs).
pub fn typed_json(raw: &str, types: Option<&[&str]>) -> String {
    let Some(types) = types else {
        return Value::String(raw.to_string()).to_string();
    };
    let trimmed = raw.trim();
    for ty in types {
        let taken = match *ty {
            "string" => Some(Value::String(raw.to_string()).to_string()),
            "integer" | "number" => number(trimmed, *ty == "integer").map(str::to_string),
            "boolean" if trimmed.eq_ignore_ascii_case("true") => Some("true".into()),
            "boolean" if trimmed.eq_ignore_ascii_case("false") => Some("false".into()),
            "null" if trimmed == "null" || trimmed == "None" => Some("null".into()),
            "object" | "array" => match serde_json::from_str::<Value>(trimmed) {
                Ok(v @ Value::Object(_)) if *ty == "object" => Some(v.to_string()),
                Ok(v @ Value::Array(_)) if *ty == "array" => Some(v.to_string()),
                _ => None,
            },
            _ => None,
        };
        if let Some(json) = taken {
            return json;
        }
    }
    Value::String(raw.to_string()).to_string()
}

/// `text` when it is a JSON number (an integer when asked).
fn number(text: &str, integer: bool) -> Option<&str> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let int_part = digits.split(['.', 'e', 'E']).next().unwrap_or("");
    let shape_ok = !int_part.is_empty()
        && int_part.bytes().all(|b| b.is_ascii_digit())
        && (int_part == "0" || !int_part.starts_with('0'));
    if !shape_ok {
        return None;
    }
    if integer {
        return (digits.len() == int_part.len()).then_some(text);
    }
    serde_json::from_str::<serde_json::Number>(text)
        .ok()
        .map(|_| text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_take_the_first_declared_type_that_fits() {
        assert_eq!(typed_json(" 42 ", Some(&["integer"])), "42");
        assert_eq!(typed_json("4.5", Some(&["integer"])), "\"4.5\"");
        assert_eq!(typed_json("4.5", Some(&["number"])), "4.5");
        assert_eq!(typed_json("True", Some(&["boolean"])), "true");
        assert_eq!(typed_json("None", Some(&["string"])), "\"None\"");
        assert_eq!(typed_json("None", Some(&["integer", "null"])), "null");
        assert_eq!(typed_json("007", Some(&["integer"])), "\"007\"");
        assert_eq!(
            typed_json("9007199254740993", Some(&["integer"])),
            "9007199254740993"
        );
        assert_eq!(typed_json("[1, 2]", Some(&["array"])), "[1,2]");
        assert_eq!(typed_json("5", None), "\"5\"");
    }

    #[test]
    fn fragments_escape_like_the_whole() {
        let text = "a\"b\\c\nd\u{1}é";
        let whole = escape_fragment(text);
        let parts: String = text
            .chars()
            .map(|c| escape_fragment(&c.to_string()))
            .collect();
        assert_eq!(whole, parts);
    }
}
