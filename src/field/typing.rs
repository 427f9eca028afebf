//! Typing the raw values of XML-parameter families by the request's tool schema.
//!
//! The text between parameter tags is raw: `5` may be the string or the number.
//! With a schema the declared types are tried in order: `integer` and `number`
//! take a JSON number (the digits are kept as written, so integers beyond 2^53
//! survive exactly in the arguments text), `boolean` takes `true`/`false` in any
//! ASCII case (Python's `True`/`False` too), `null` takes `null` or `None`,
//! `object` and `array` take JSON of that kind or a Python literal of that kind,
//! `string` takes the raw text verbatim. Where `null` is declared, `null` and
//! `None` are null whatever the order; Python's type names (`float`, `int`, …) are
//! read as JSON Schema's. A value no declared type takes stays the raw string.
//! Without a schema for the parameter every value is the raw string (spec/field.md
//! FD-6).

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
        Some(types) => types.iter().all(|t| canonical(t) == "string"),
    }
}

/// A declared type name as JSON Schema spells it: the names that tool definitions
/// written for Python use (`float`, `double`, `int`, `bool`, `str`, `dict`, `list`)
/// are read as `number`, `integer`, `boolean`, `string`, `object`, `array` (FD-6);
/// every other name is itself.
pub fn canonical(ty: &str) -> &str {
    match ty {
        "float" | "double" => "number",
        "int" => "integer",
        "bool" => "boolean",
        "str" => "string",
        "dict" => "object",
        "list" => "array",
        other => other,
    }
}

/// The declared types of every parameter of every tool, looked up once when a
/// machine is made rather than in the schema per parameter: per tool (the first of
/// a name, as `Options::tool` finds it), the parameters [`declared_types`] has types
/// for, sorted by key (a few comparisons find one, with no hashing).
#[derive(Clone, Debug, Default)]
pub struct SchemaTypes {
    tools: Vec<(String, ParamTypes)>,
}

/// A tool's parameters with declared types, sorted by key: (key, types, whether
/// a type other than `string` is among them, as written).
type ParamTypes = Vec<(String, Vec<String>, bool)>;

impl SchemaTypes {
    /// The declared types of the tools' parameters.
    pub fn new(tools: &[Tool]) -> Self {
        let mut out: Vec<(String, ParamTypes)> = Vec::new();
        for tool in tools {
            if out.iter().any(|(name, _)| *name == tool.name) {
                continue;
            }
            let mut params = Vec::new();
            if let Some(properties) = tool
                .parameters
                .as_ref()
                .and_then(|p| p.get("properties"))
                .and_then(Value::as_object)
            {
                for key in properties.keys() {
                    if let Some(types) = declared_types(Some(tool), key) {
                        let other = types.iter().any(|t| *t != "string");
                        params.push((
                            key.clone(),
                            types.iter().map(|t| t.to_string()).collect(),
                            other,
                        ));
                    }
                }
            }
            // A JSON object's keys are distinct.
            params.sort_by(|a, b| a.0.cmp(&b.0));
            out.push((tool.name.clone(), params));
        }
        SchemaTypes { tools: out }
    }

    /// The tool called `name` (its position, for [`Self::param`]).
    pub fn tool(&self, name: &str) -> Option<usize> {
        self.tools.iter().position(|(n, _)| n == name)
    }

    /// The declared types of parameter `key` of the tool at `tool`, as
    /// [`declared_types`] gives them.
    pub fn param(&self, tool: Option<usize>, key: &str) -> Option<&[String]> {
        let at = self.param_at(tool, key)?;
        Some(self.types(tool, at))
    }

    /// Where parameter `key` of the tool at `tool` is, when it has declared types
    /// ([`Self::types`] gives them).
    pub fn param_at(&self, tool: Option<usize>, key: &str) -> Option<usize> {
        let (_, params) = self.tools.get(tool?)?;
        params.binary_search_by(|(k, ..)| k.as_str().cmp(key)).ok()
    }

    /// Where parameter `key` of the tool at `tool` is ([`Self::param_at`]) when
    /// a type other than `string`, as written, is among its declared types.
    pub fn typed_at(&self, tool: Option<usize>, key: &str) -> Option<usize> {
        let at = self.param_at(tool, key)?;
        self.tools[tool?].1[at].2.then_some(at)
    }

    /// The declared types of the parameter at `at` of the tool at `tool` (as
    /// [`Self::param_at`] found it; empty for any other position).
    pub fn types(&self, tool: Option<usize>, at: usize) -> &[String] {
        tool.and_then(|t| self.tools.get(t))
            .and_then(|(_, params)| params.get(at))
            .map_or(&[], |(_, types, _)| types)
    }
}

/// `text` escaped as the inside of a JSON string (no quotes). Escaping works
/// character by character, so the fragments of a string escape to the fragments
/// of its escaped form.
pub fn escape_fragment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text);
    out
}

/// Appends `text` escaped as the inside of a JSON string, exactly as serde_json
/// writes a string: `"` and `\\` escaped, control characters as `\b`, `\t`, `\n`,
/// `\f`, `\r` or `\u00xx`, everything else as it is.
pub fn push_escaped(out: &mut String, text: &str) {
    let bytes = text.as_bytes();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        // The character after the backslash (`u` for `\u00xx`).
        let escape = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'\n' => 'n',
            b'\r' => 'r',
            b'\t' => 't',
            0x08 => 'b',
            0x0C => 'f',
            0x00..=0x1F => 'u',
            _ => continue,
        };
        // Every byte escaped is ASCII, so `from..i` lies on character boundaries.
        if from < i {
            out.push_str(&text[from..i]);
        }
        // The escape's ASCII characters one by one (no copy call for two bytes).
        out.push('\\');
        out.push(escape);
        if escape == 'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push('0');
            out.push('0');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xF)]));
        }
        from = i + 1;
    }
    if from < bytes.len() {
        out.push_str(&text[from..]);
    }
}

/// Appends `text` as a JSON string (quoted and escaped as serde_json writes it).
pub fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    push_escaped(out, text);
    out.push('"');
}

/// Whether `text` changes when written inside a JSON string (a control
/// character, `"` or `\`): when not, [`escape_fragment`] returns it as it is.
pub fn needs_escape(text: &str) -> bool {
    text.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\')
}

/// The JSON text of one raw value, typed by the declared types (see the module
/// docs).
pub fn typed_json(raw: &str, types: Option<&[&str]>) -> String {
    let mut out = String::new();
    match types {
        None => push_json_string(&mut out, raw),
        Some(types) => push_typed_json(&mut out, raw, types.iter().copied()),
    }
    out
}

/// Appends the JSON text of one raw value, typed by the declared `types` in order
/// (see the module docs; [`typed_json`] with a schema).
pub fn push_typed_json<'t, I>(out: &mut String, raw: &str, types: I)
where
    I: IntoIterator<Item = &'t str>,
    I::IntoIter: Clone,
{
    let trimmed = raw.trim();
    let types = types.into_iter();
    // A declared null takes `null`/`None` before any other type (a nullable
    // string's null is written so).
    if (trimmed == "null" || trimmed == "None") && types.clone().any(|t| t == "null") {
        out.push_str("null");
        return;
    }
    for ty in types.map(canonical) {
        match ty {
            "string" => {}
            "integer" | "number" => match number(trimmed, ty == "integer") {
                Some(digits) => out.push_str(digits),
                None => continue,
            },
            "boolean" if trimmed.eq_ignore_ascii_case("true") => out.push_str("true"),
            "boolean" if trimmed.eq_ignore_ascii_case("false") => out.push_str("false"),
            "null" if trimmed == "null" || trimmed == "None" => out.push_str("null"),
            "object" | "array" => match serde_json::from_str::<Value>(trimmed) {
                Ok(v @ Value::Object(_)) if ty == "object" => out.push_str(&v.to_string()),
                Ok(v @ Value::Array(_)) if ty == "array" => out.push_str(&v.to_string()),
                Ok(_) => continue,
                Err(_) => match python_literal(trimmed, ty == "object") {
                    Some(json) => out.push_str(&json),
                    None => continue,
                },
            },
            _ => continue,
        }
        if ty != "string" {
            return;
        }
        break;
    }
    // `string`, or no declared type takes it: the raw string.
    push_json_string(out, raw);
}

/// The compact JSON text of `text` read as a Python literal (PY-6) when it is a
/// dict (`object`) or a list (not `object`): `{'key': 'value', 'on': True}`.
fn python_literal(text: &str, object: bool) -> Option<String> {
    let open = if object { b'{' } else { b'[' };
    if text.as_bytes().first() != Some(&open) {
        return None;
    }
    let json = super::llama::literal::to_json(text)?;
    // The reader trusts its grammar; here nothing matched the text before, so the
    // JSON it wrote is checked.
    serde_json::from_str::<serde::de::IgnoredAny>(&json).ok()?;
    Some(json)
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
        assert_eq!(typed_json("None", Some(&["string", "null"])), "null");
        assert_eq!(typed_json(" null ", Some(&["string", "null"])), "null");
        assert_eq!(typed_json("null", Some(&["string"])), "\"null\"");
        assert_eq!(typed_json("3.14", Some(&["float"])), "3.14");
        assert_eq!(typed_json("7", Some(&["int"])), "7");
        assert_eq!(typed_json("TRUE", Some(&["bool"])), "true");
        assert_eq!(
            typed_json("{'k': 'v', 'n': None}", Some(&["dict"])),
            "{\"k\":\"v\",\"n\":null}"
        );
        assert_eq!(typed_json("['a', True]", Some(&["array"])), "[\"a\",true]");
        assert_eq!(typed_json("['a' 'b']", Some(&["array"])), "\"['a' 'b']\"");
        assert_eq!(typed_json("[1.2.3]", Some(&["array"])), "\"[1.2.3]\"");
        assert_eq!(typed_json("{'a': 1}", Some(&["array"])), "\"{'a': 1}\"");
        assert_eq!(typed_json("3.14", Some(&["decimal"])), "\"3.14\"");
        assert!(streams_as_string(Some(&["str"])));
        assert_eq!(typed_json("5", None), "\"5\"");
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut every: String = (0u8..0x80).map(char::from).collect();
        every.push_str("é€😀\u{7f}\u{2028}");
        for text in [every.as_str(), "", "plain", "\"", "a\\b", "\u{1}x\u{1f}"] {
            let mut ours = String::new();
            push_json_string(&mut ours, text);
            assert_eq!(
                ours,
                Value::String(text.to_string()).to_string(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn the_schema_table_gives_what_declared_types_gives() {
        let tools: Vec<Tool> = serde_json::from_value(serde_json::json!([
            {"name": "f", "parameters": {"properties": {
                "a": {"type": "integer"}, "b": {"type": ["string", "null"]}, "s": {"type": "string"},
                "c": {"anyOf": [{"type": "number"}, {"type": "boolean"}]}, "d": {}
            }}},
            {"name": "f", "parameters": {"properties": {"a": {"type": "string"}}}},
            {"name": "g"}
        ]))
        .expect("tools");
        let table = SchemaTypes::new(&tools);
        for (name, key) in [
            ("f", "a"),
            ("f", "b"),
            ("f", "c"),
            ("f", "d"),
            ("f", "s"),
            ("f", "x"),
            ("g", "a"),
            ("h", "a"),
        ] {
            let tool = tools.iter().find(|t| t.name == name);
            let expected = declared_types(tool, key);
            let got = table.param(table.tool(name), key);
            assert_eq!(
                got.map(|t| t.iter().map(String::as_str).collect::<Vec<_>>()),
                expected,
                "{name}.{key}"
            );
            // Typed at its close when a type other than `string` is declared.
            let other = expected.is_some_and(|t| t.iter().any(|t| *t != "string"));
            assert_eq!(
                table.typed_at(table.tool(name), key),
                table.param_at(table.tool(name), key).filter(|_| other),
                "{name}.{key}"
            );
        }
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
