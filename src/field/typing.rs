//! Typing the raw values of XML-parameter families by the request's tool schema
//! (spec/field.md FD-6).
//!
//! The text between parameter tags is raw: `5` may be the string or the number.
//! Each parameter's schema is read once, when a machine is made, into a [`Shape`]:
//! what the schema as a whole allows, from `type`, `const`, `enum`, `nullable`,
//! `$ref`, `allOf`, `anyOf` and `oneOf` (every other keyword constrains values
//! without changing how a text is read). A value then has at most two readings,
//! its literal reading (null, a boolean, a number with its digits as written, a
//! JSON or Python object or array) and the raw string; it is the literal reading
//! when the shape allows it, else the raw string. A parameter whose shape can
//! allow no literal reading streams as a string as it arrives.
//!
//! The references of a tool's schema are checked when the options are read
//! ([`check_references`]): one that points outside the schema, at nothing, or
//! around a cycle refuses the options.

use std::collections::HashMap;

use serde_json::{Number, Value};

use super::options::Tool;

/// The kinds of JSON value a schema allows, one bit each. `number` is both
/// [`INTEGER`] and [`FRACTION`], so that an integer is a number and a schema that
/// is both `number` and `integer` allows integers.
type Kinds = u8;
const NULL: Kinds = 1;
const BOOLEAN: Kinds = 1 << 1;
const INTEGER: Kinds = 1 << 2;
/// A number with a fraction or an exponent.
const FRACTION: Kinds = 1 << 3;
const STRING: Kinds = 1 << 4;
const OBJECT: Kinds = 1 << 5;
const ARRAY: Kinds = 1 << 6;
const EVERY_KIND: Kinds = (1 << 7) - 1;

/// The most values one shape lists before it is read as allowing their kinds
/// instead: comparing value lists costs the product of their lengths, and a
/// schema is read in bounded time whatever a user writes (FD-6d).
const MAX_VALUES: usize = 256;

/// The kinds a `type` name allows: JSON Schema's names, and the names that tool
/// definitions written for Python use (`float`, `int`, …, FD-6c). Any other name
/// allows nothing.
fn named_kinds(name: &str) -> Kinds {
    match name {
        "null" => NULL,
        "boolean" | "bool" => BOOLEAN,
        "integer" | "int" => INTEGER,
        "number" | "float" | "double" => INTEGER | FRACTION,
        "string" | "str" => STRING,
        "object" | "dict" => OBJECT,
        "array" | "list" => ARRAY,
        _ => 0,
    }
}

/// The kind of a JSON value (a number without a fraction, `1.0` too, is an
/// integer, as JSON Schema counts it).
fn kind_of(value: &Value) -> Kinds {
    match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() != 0.0) => FRACTION,
        Value::Number(_) => INTEGER,
        Value::String(_) => STRING,
        Value::Array(_) => ARRAY,
        Value::Object(_) => OBJECT,
    }
}

/// Whether two JSON values are the same value as JSON Schema's `const` and `enum`
/// compare them: numbers by value (`1` is `1.0`), objects as unordered maps.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => same_number(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| same(a, b)))
        }
        _ => a == b,
    }
}

/// Numbers by value: exactly as 64-bit integers, else as doubles.
fn same_number(x: &Number, y: &Number) -> bool {
    if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (x.as_u64(), y.as_u64()) {
        return a == b;
    }
    x.as_f64() == y.as_f64()
}

/// What a schema allows, as far as reading a raw text goes (FD-6c): the union of
/// three parts. `any` is a branch that says nothing of the type (it allows only
/// the raw string, but it is the identity of an intersection: `allOf` of
/// `{"type": "integer"}` and `{"minimum": 0}` allows integers); `kinds` the
/// kinds of value allowed; `values` the values a `const` or `enum` allows beyond
/// those kinds.
///
/// A union of branches folds into one shape without loss: a reading is allowed
/// by the union exactly when some branch allows it, and a branch allows a
/// reading by its kind or by its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    any: bool,
    kinds: Kinds,
    values: Vec<Value>,
}

impl Shape {
    /// A schema that says nothing of the type (`true`, `{}`, `{"minimum": 0}`).
    const ANY: Shape = Shape {
        any: true,
        kinds: 0,
        values: Vec::new(),
    };

    /// A schema that allows nothing (`false`, `anyOf: []`).
    const NOTHING: Shape = Shape {
        any: false,
        kinds: 0,
        values: Vec::new(),
    };

    fn kinds(kinds: Kinds) -> Shape {
        Shape {
            kinds,
            ..Shape::NOTHING
        }
    }

    fn values(values: &[Value]) -> Shape {
        let mut shape = Shape::NOTHING;
        for value in values {
            shape.add_value(value);
        }
        shape.bound();
        shape
    }

    /// Adds `value` unless it is listed already (so that a union of unions does
    /// not grow).
    fn add_value(&mut self, value: &Value) {
        if !self.values.iter().any(|v| same(v, value)) {
            self.values.push(value.clone());
        }
    }

    /// The values of `values` that `kinds` allow, added.
    fn add_values_of(&mut self, values: &[Value], kinds: Kinds) {
        for value in values.iter().filter(|v| kind_of(v) & kinds != 0) {
            self.add_value(value);
        }
    }

    /// Too many values are read as their kinds (see [`MAX_VALUES`]).
    fn bound(&mut self) {
        if self.values.len() > MAX_VALUES {
            self.kinds |= self.values.iter().map(kind_of).fold(0, |a, b| a | b);
            self.values.clear();
        }
    }

    /// What both shapes allow (`allOf`): the union of the intersections of their
    /// parts, where `any` intersected with a part is that part.
    fn intersect(&self, other: &Shape) -> Shape {
        let mut out = Shape {
            any: self.any && other.any,
            kinds: self.kinds & other.kinds,
            values: Vec::new(),
        };
        if self.any {
            out.kinds |= other.kinds;
            out.add_values_of(&other.values, EVERY_KIND);
        }
        if other.any {
            out.kinds |= self.kinds;
            out.add_values_of(&self.values, EVERY_KIND);
        }
        out.add_values_of(&other.values, self.kinds);
        out.add_values_of(&self.values, other.kinds);
        for value in &self.values {
            if other.values.iter().any(|v| same(v, value)) {
                out.add_value(value);
            }
        }
        out.bound();
        out
    }

    /// Adds what `other` allows (`anyOf`, `oneOf`).
    fn union(&mut self, other: &Shape) {
        self.any |= other.any;
        self.kinds |= other.kinds;
        self.add_values_of(&other.values, EVERY_KIND);
        self.bound();
    }

    /// Whether the shape can allow no literal reading, so that the value is the
    /// raw string whatever it is and may stream as it arrives (FD-6f): no kind but
    /// `string`, no value but strings.
    pub fn streams_as_string(&self) -> bool {
        self.kinds & !STRING == 0 && self.values.iter().all(Value::is_string)
    }

    /// Whether the shape allows `literal`.
    fn allows(&self, literal: &Literal) -> bool {
        if self.kinds & literal.kind() != 0 {
            return true;
        }
        !self.values.is_empty()
            && literal
                .value()
                .is_some_and(|value| self.values.iter().any(|v| same(v, &value)))
    }

    /// Appends the JSON text of the raw value `raw` as this shape types it: its
    /// literal reading when allowed, else the raw string (FD-6d).
    pub fn push_typed(&self, out: &mut String, raw: &str) {
        match Literal::read(raw.trim(), self) {
            Some(literal) if self.allows(&literal) => literal.push(out),
            _ => push_json_string(out, raw),
        }
    }

    /// The shape of `schema`, a schema inside the tool's `parameters` document
    /// `parameters` (its references point into that document).
    pub fn of(parameters: &Value, schema: &Value) -> Result<Shape, ReferenceError> {
        Reader::new(parameters).schema(schema)
    }
}

/// Appends the JSON text of `raw`, a value the markup calls JSON (CF-20), as
/// `shape` (its parameter's, where the schema lists it) types it: its JSON reading
/// (or FD-6d's literal reading where it is no JSON), or the raw string where it has
/// none; where the shape says something of the type, the first of the two it
/// allows, and the JSON reading when it allows neither.
pub fn push_json_typed(out: &mut String, raw: &str, shape: Option<&Shape>) {
    /// Every kind, so that the reading is made whatever the schema allows.
    const READ_ALL: Shape = Shape {
        any: false,
        kinds: EVERY_KIND,
        values: Vec::new(),
    };
    let text = raw.trim();
    let string = text
        .starts_with('"')
        .then(|| serde_json::from_str::<String>(text).ok())
        .flatten();
    let literal = match string {
        Some(_) => None,
        None => Literal::read(text, &READ_ALL),
    };
    let says_something = shape.filter(|s| !(s.any && s.kinds == 0 && s.values.is_empty()));
    if let Some(shape) = says_something {
        let allows_string = |s: &str| {
            shape.any
                || shape.kinds & STRING != 0
                || shape.values.iter().any(|v| v.as_str() == Some(s))
        };
        let json_allowed = match (&string, &literal) {
            (Some(s), _) => allows_string(s),
            (None, Some(literal)) => shape.allows(literal),
            (None, None) => false,
        };
        if !json_allowed && allows_string(raw) {
            push_json_string(out, raw);
            return;
        }
    }
    match (string, literal) {
        (Some(s), _) => push_json_string(out, &s),
        (None, Some(literal)) => literal.push(out),
        (None, None) => push_json_string(out, raw),
    }
}

/// The literal reading of a trimmed text (FD-6d).
enum Literal<'t> {
    Null,
    Bool(bool),
    /// A JSON number, as written; `integer` without fraction or exponent.
    Number {
        text: &'t str,
        integer: bool,
    },
    /// A JSON or Python object or array, as compact JSON text.
    Composite {
        json: String,
        object: bool,
    },
}

impl<'t> Literal<'t> {
    /// The literal reading of `text`, when it has one. The shape spares the
    /// parse of an object or an array it cannot allow.
    fn read(text: &'t str, shape: &Shape) -> Option<Literal<'t>> {
        match text.as_bytes().first()? {
            b'n' | b'N' => (text == "null" || text == "None").then_some(Literal::Null),
            b't' | b'T' if text.eq_ignore_ascii_case("true") => Some(Literal::Bool(true)),
            b'f' | b'F' if text.eq_ignore_ascii_case("false") => Some(Literal::Bool(false)),
            b'-' | b'0'..=b'9' => number(text),
            &open @ (b'{' | b'[') => {
                let object = open == b'{';
                let kind = if object { OBJECT } else { ARRAY };
                if shape.kinds & kind == 0 && !shape.values.iter().any(|v| kind_of(v) == kind) {
                    return None;
                }
                let json = match serde_json::from_str::<Value>(text) {
                    Ok(value) => value.to_string(),
                    Err(_) => python_literal(text)?,
                };
                Some(Literal::Composite { json, object })
            }
            _ => None,
        }
    }

    fn kind(&self) -> Kinds {
        match self {
            Literal::Null => NULL,
            Literal::Bool(_) => BOOLEAN,
            Literal::Number { integer: true, .. } => INTEGER,
            Literal::Number { .. } => FRACTION,
            Literal::Composite { object: true, .. } => OBJECT,
            Literal::Composite { .. } => ARRAY,
        }
    }

    /// The reading as a JSON value, to compare with a `const` or `enum` (a number
    /// beyond a double's range has none).
    fn value(&self) -> Option<Value> {
        match self {
            Literal::Null => Some(Value::Null),
            Literal::Bool(b) => Some(Value::Bool(*b)),
            Literal::Number { text, .. } => {
                serde_json::from_str::<Number>(text).ok().map(Value::Number)
            }
            Literal::Composite { json, .. } => serde_json::from_str(json).ok(),
        }
    }

    fn push(&self, out: &mut String) {
        match self {
            Literal::Null => out.push_str("null"),
            Literal::Bool(true) => out.push_str("true"),
            Literal::Bool(false) => out.push_str("false"),
            Literal::Number { text, .. } => out.push_str(text),
            Literal::Composite { json, .. } => out.push_str(json),
        }
    }
}

/// The compact JSON text of `text` read as a Python literal (PY-6), a dict or a
/// list: `{'key': 'value', 'on': True}`.
fn python_literal(text: &str) -> Option<String> {
    let json = super::custom::literal::python::to_json(text)?;
    // The reader trusts its grammar; here nothing matched the text before, so the
    // JSON it wrote is checked.
    serde_json::from_str::<serde::de::IgnoredAny>(&json).ok()?;
    Some(json)
}

/// `text` read as a JSON number: an integer's digits are taken as they are
/// (however many), a fraction or an exponent must read as a double.
fn number(text: &str) -> Option<Literal<'_>> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let int_part = digits.split(['.', 'e', 'E']).next().unwrap_or("");
    let shape_ok = !int_part.is_empty()
        && int_part.bytes().all(|b| b.is_ascii_digit())
        && (int_part == "0" || !int_part.starts_with('0'));
    if !shape_ok {
        return None;
    }
    let integer = digits.len() == int_part.len();
    if !integer {
        serde_json::from_str::<Number>(text).ok()?;
    }
    Some(Literal::Number { text, integer })
}

/// What is wrong with a `$ref` (FD-6b).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferenceProblem {
    /// Not a JSON Pointer into the tool's `parameters` (another document, an
    /// anchor, a bad percent-escape).
    NotLocal,
    /// The pointer reaches no value.
    Missing,
    /// The pointer reaches a value that is not a schema (an object or a boolean).
    NotSchema,
    /// The reference comes back to a schema it is part of through `$ref`,
    /// `allOf`, `anyOf` and `oneOf` alone.
    Cycle,
}

/// A `$ref` that cannot be read: the reference as written and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceError {
    /// The `$ref` as the schema writes it.
    pub reference: String,
    /// What is wrong with it.
    pub problem: ReferenceProblem,
}

/// A tool whose schema has a `$ref` that cannot be read: the options are refused
/// (FD-6b). Displayed as one line naming the tool and the reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// The tool's name.
    pub tool: String,
    /// The reference and what is wrong with it.
    pub error: ReferenceError,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.error.problem {
            ReferenceProblem::NotLocal => "is not a JSON Pointer into the tool's parameters",
            ReferenceProblem::Missing => "points at nothing",
            ReferenceProblem::NotSchema => "points at a value that is not a schema",
            ReferenceProblem::Cycle => {
                "refers back to itself through $ref, allOf, anyOf and oneOf alone"
            }
        };
        let mut tool = String::new();
        push_json_string(&mut tool, &self.tool);
        let mut reference = String::new();
        push_json_string(&mut reference, &self.error.reference);
        write!(f, "tool {tool}: $ref {reference} {what}")
    }
}

impl std::error::Error for SchemaError {}

/// Checks every `$ref` of `tool`'s parameters, in every place that holds a schema,
/// as reading the options does (FD-6b).
pub fn check_references(tool: &Tool) -> Result<(), SchemaError> {
    let Some(parameters) = tool.parameters.as_ref() else {
        return Ok(());
    };
    Reader::new(parameters)
        .check(parameters)
        .map_err(|error| SchemaError {
            tool: tool.name.clone(),
            error,
        })
}

/// The keywords whose value is a map of names to schemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// The keywords whose value is a schema or a list of schemas.
const SCHEMA_PLACES: &[&str] = &[
    "items",
    "prefixItems",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "contentSchema",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
];

/// Reads the schemas of one `parameters` document: references resolved into it,
/// each target's shape read once.
struct Reader<'a> {
    root: &'a Value,
    /// The shapes of the reference targets read so far, by the target's address
    /// (two spellings of one pointer are one target).
    done: HashMap<*const Value, Shape>,
    /// The targets being read: a reference to one of them is a cycle.
    open: Vec<*const Value>,
}

impl<'a> Reader<'a> {
    fn new(root: &'a Value) -> Self {
        Reader {
            root,
            done: HashMap::new(),
            open: Vec::new(),
        }
    }

    /// The value `reference` points at in the document.
    fn resolve(&self, reference: &str) -> Result<&'a Value, ReferenceError> {
        let fail = |problem| ReferenceError {
            reference: reference.to_string(),
            problem,
        };
        let fragment = reference
            .strip_prefix('#')
            .and_then(percent_decoded)
            .ok_or(fail(ReferenceProblem::NotLocal))?;
        let mut at = self.root;
        if !fragment.is_empty() {
            let path = fragment
                .strip_prefix('/')
                .ok_or(fail(ReferenceProblem::NotLocal))?;
            for token in path.split('/') {
                let token = token.replace("~1", "/").replace("~0", "~");
                let next = match at {
                    Value::Object(map) => map.get(&token),
                    Value::Array(list) => token.parse::<usize>().ok().and_then(|i| list.get(i)),
                    _ => None,
                };
                at = next.ok_or(fail(ReferenceProblem::Missing))?;
            }
        }
        match at {
            Value::Object(_) | Value::Bool(_) => Ok(at),
            _ => Err(fail(ReferenceProblem::NotSchema)),
        }
    }

    /// The shape of the schema `reference` points at.
    fn reference(&mut self, reference: &str) -> Result<Shape, ReferenceError> {
        let target = self.resolve(reference)?;
        let key: *const Value = target;
        if let Some(shape) = self.done.get(&key) {
            return Ok(shape.clone());
        }
        if self.open.contains(&key) {
            return Err(ReferenceError {
                reference: reference.to_string(),
                problem: ReferenceProblem::Cycle,
            });
        }
        self.open.push(key);
        let shape = self.schema(target);
        self.open.pop();
        let shape = shape?;
        self.done.insert(key, shape.clone());
        Ok(shape)
    }

    /// The shape of `schema` (FD-6c).
    fn schema(&mut self, schema: &'a Value) -> Result<Shape, ReferenceError> {
        // A chain of references may be as long as the document is: the stack
        // grows with it rather than overflowing.
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.schema_here(schema))
    }

    fn schema_here(&mut self, schema: &'a Value) -> Result<Shape, ReferenceError> {
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(false) => return Ok(Shape::NOTHING),
            // `true`, and a value that is no schema where a schema should be, say
            // nothing.
            _ => return Ok(Shape::ANY),
        };
        let mut shape = Shape::ANY;
        match map.get("type") {
            Some(Value::String(name)) => shape = Shape::kinds(named_kinds(name)),
            Some(Value::Array(names)) => {
                let kinds = names
                    .iter()
                    .filter_map(Value::as_str)
                    .fold(0, |k, name| k | named_kinds(name));
                shape = Shape::kinds(kinds);
            }
            _ => {}
        }
        if let Some(value) = map.get("const") {
            shape = shape.intersect(&Shape::values(std::slice::from_ref(value)));
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            shape = shape.intersect(&Shape::values(values));
        }
        if let Some(Value::String(reference)) = map.get("$ref") {
            shape = shape.intersect(&self.reference(reference)?);
        }
        if let Some(Value::Array(branches)) = map.get("allOf") {
            for branch in branches {
                shape = shape.intersect(&self.schema(branch)?);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = map.get(key) {
                let mut union = Shape::NOTHING;
                for branch in branches {
                    union.union(&self.schema(branch)?);
                }
                shape = shape.intersect(&union);
            }
        }
        if map.get("nullable") == Some(&Value::Bool(true)) {
            shape.union(&Shape::kinds(NULL));
        }
        Ok(shape)
    }

    /// Checks every reference in `schema` and the schemas inside it.
    fn check(&mut self, schema: &'a Value) -> Result<(), ReferenceError> {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.check_here(schema))
    }

    fn check_here(&mut self, schema: &'a Value) -> Result<(), ReferenceError> {
        let Value::Object(map) = schema else {
            return Ok(());
        };
        for (key, value) in map {
            if key == "$ref" {
                if let Value::String(reference) = value {
                    self.reference(reference)?;
                }
            } else if SCHEMA_MAPS.contains(&key.as_str()) {
                if let Value::Object(schemas) = value {
                    for schema in schemas.values() {
                        self.check(schema)?;
                    }
                }
            } else if SCHEMA_PLACES.contains(&key.as_str()) {
                match value {
                    Value::Array(schemas) => {
                        for schema in schemas {
                            self.check(schema)?;
                        }
                    }
                    schema => self.check(schema)?,
                }
            }
        }
        Ok(())
    }

    /// The parameters' schemas, by key, sorted (FD-6a): the `properties` of the
    /// document, and of the schemas its `$ref` and its `allOf` branches reach; a
    /// key listed in several places is read as all of them at once.
    fn parameters(&mut self) -> Result<Vec<(String, Shape)>, ReferenceError> {
        let mut found: Vec<(&'a String, &'a Value)> = Vec::new();
        let mut seen: Vec<*const Value> = Vec::new();
        self.properties(self.root, &mut found, &mut seen)?;
        // Stable: the places of one key keep their order.
        found.sort_by(|a, b| a.0.cmp(b.0));
        let mut out: Vec<(String, Shape)> = Vec::new();
        for (key, schema) in found {
            let shape = self.schema(schema)?;
            match out.last_mut() {
                Some((last, both)) if last == key => *both = both.intersect(&shape),
                _ => out.push((key.clone(), shape)),
            }
        }
        Ok(out)
    }

    fn properties(
        &mut self,
        schema: &'a Value,
        found: &mut Vec<(&'a String, &'a Value)>,
        seen: &mut Vec<*const Value>,
    ) -> Result<(), ReferenceError> {
        let key: *const Value = schema;
        // A place reached twice adds nothing (and a reference back to the root,
        // refused by the check, cannot loop here).
        if seen.contains(&key) {
            return Ok(());
        }
        seen.push(key);
        if let Some(Value::Object(properties)) = schema.get("properties") {
            found.extend(properties.iter());
        }
        if let Some(Value::String(reference)) = schema.get("$ref") {
            let target = self.resolve(reference)?;
            self.properties(target, found, seen)?;
        }
        if let Some(Value::Array(branches)) = schema.get("allOf") {
            for branch in branches {
                self.properties(branch, found, seen)?;
            }
        }
        Ok(())
    }
}

/// `text` with its percent-escapes decoded (a URI fragment), when they are
/// whole and decode to UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The shapes of every typed parameter of every tool, read once when a machine is
/// made rather than from the schema per value: per tool (the first of a name, as
/// `Options::tool` finds it), the parameters that do not stream as strings, sorted
/// by key (a few comparisons find one, with no hashing).
#[derive(Clone, Debug, Default)]
pub struct SchemaTypes {
    /// Per tool, its parameters, sorted by key.
    tools: Vec<(String, Vec<ParamShape>)>,
}

/// One parameter of a tool's schema.
#[derive(Clone, Debug)]
struct ParamShape {
    key: String,
    shape: Shape,
    /// Whether the value is typed at its close (does not stream as a string).
    typed: bool,
}

impl SchemaTypes {
    /// The shapes of the tools' parameters. A tool whose references cannot be read
    /// (options built in Rust rather than read, which would refuse it) types none
    /// of its parameters.
    pub fn new(tools: &[Tool]) -> Self {
        let mut out: Vec<(String, Vec<ParamShape>)> = Vec::new();
        for tool in tools {
            if out.iter().any(|(name, _)| *name == tool.name) {
                continue;
            }
            let params = tool
                .parameters
                .as_ref()
                .and_then(|p| Reader::new(p).parameters().ok())
                .unwrap_or_default()
                .into_iter()
                .map(|(key, shape)| ParamShape {
                    typed: !shape.streams_as_string(),
                    key,
                    shape,
                })
                .collect();
            out.push((tool.name.clone(), params));
        }
        SchemaTypes { tools: out }
    }

    /// The tool called `name` (its position, for [`Self::typed_at`]).
    pub fn tool(&self, name: &str) -> Option<usize> {
        self.tools.iter().position(|(n, _)| n == name)
    }

    /// Where parameter `key` of the tool at `tool` is when it is typed at its
    /// close rather than streamed (FD-6f); [`Self::shape`] gives its shape.
    pub fn typed_at(&self, tool: Option<usize>, key: &str) -> Option<usize> {
        let at = self.param_at(tool, key)?;
        let (_, params) = self.tools.get(tool?)?;
        params[at].typed.then_some(at)
    }

    /// Where parameter `key` of the tool at `tool` is, when the tool's schema
    /// lists it, whether or not it is typed at its close (CF-20 reads every
    /// shape); [`Self::shape`] gives its shape.
    pub fn param_at(&self, tool: Option<usize>, key: &str) -> Option<usize> {
        let (_, params) = self.tools.get(tool?)?;
        params.binary_search_by(|p| p.key.as_str().cmp(key)).ok()
    }

    /// The shape of the parameter at `at` of the tool at `tool`, as
    /// [`Self::typed_at`] found it.
    pub fn shape(&self, tool: Option<usize>, at: usize) -> Option<&Shape> {
        let (_, params) = self.tools.get(tool?)?;
        params.get(at).map(|p| &p.shape)
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

/// The JSON text of one raw value typed by `shape` (FD-6d); the raw string
/// without one.
pub fn typed_json(raw: &str, shape: Option<&Shape>) -> String {
    let mut out = String::new();
    match shape {
        None => push_json_string(&mut out, raw),
        Some(shape) => shape.push_typed(&mut out, raw),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The value of `raw` typed by the parameter schema `schema`, inside an object
    /// schema whose `$defs` are `defs`.
    fn typed(raw: &str, schema: Value, defs: Value) -> String {
        let parameters = json!({"type": "object", "$defs": defs, "properties": {"p": schema}});
        let shape = Shape::of(&parameters, &parameters["properties"]["p"]).expect("a schema");
        typed_json(raw, Some(&shape))
    }

    fn plain(raw: &str, schema: Value) -> String {
        typed(raw, schema, json!({}))
    }

    #[test]
    fn a_single_type_takes_its_literal_reading_or_leaves_the_raw_string() {
        assert_eq!(plain(" 42 ", json!({"type": "integer"})), "42");
        assert_eq!(plain("4.5", json!({"type": "integer"})), "\"4.5\"");
        assert_eq!(plain("4.5", json!({"type": "number"})), "4.5");
        assert_eq!(plain("7", json!({"type": "number"})), "7");
        assert_eq!(plain("True", json!({"type": "boolean"})), "true");
        assert_eq!(plain("None", json!({"type": "string"})), "\"None\"");
        assert_eq!(plain("007", json!({"type": "integer"})), "\"007\"");
        assert_eq!(
            plain("9007199254740993", json!({"type": "integer"})),
            "9007199254740993"
        );
        assert_eq!(plain("[1, 2]", json!({"type": "array"})), "[1,2]");
        assert_eq!(plain("null", json!({"type": "string"})), "\"null\"");
        assert_eq!(
            plain("['a', True]", json!({"type": "array"})),
            "[\"a\",true]"
        );
        assert_eq!(
            plain("['a' 'b']", json!({"type": "array"})),
            "\"['a' 'b']\""
        );
        assert_eq!(plain("[1.2.3]", json!({"type": "array"})), "\"[1.2.3]\"");
        assert_eq!(plain("{'a': 1}", json!({"type": "array"})), "\"{'a': 1}\"");
        assert_eq!(plain("1e400", json!({"type": "number"})), "\"1e400\"");
        assert_eq!(
            plain("\"quoted\"", json!({"type": "string"})),
            "\"\\\"quoted\\\"\""
        );
    }

    #[test]
    fn python_type_names_read_as_json_schemas_and_unknown_names_allow_nothing() {
        assert_eq!(plain("3.14", json!({"type": "float"})), "3.14");
        assert_eq!(plain("3.14", json!({"type": "double"})), "3.14");
        assert_eq!(plain("7", json!({"type": "int"})), "7");
        assert_eq!(plain("TRUE", json!({"type": "bool"})), "true");
        assert_eq!(
            plain("{'k': 'v', 'n': None}", json!({"type": "dict"})),
            "{\"k\":\"v\",\"n\":null}"
        );
        assert_eq!(plain("[1]", json!({"type": "list"})), "[1]");
        assert_eq!(plain("3.14", json!({"type": "decimal"})), "\"3.14\"");
    }

    #[test]
    fn a_literal_reading_wins_over_string_whatever_the_order() {
        for order in [json!(["string", "integer"]), json!(["integer", "string"])] {
            assert_eq!(plain("7", json!({"type": order})), "7");
            assert_eq!(plain("abc", json!({"type": order})), "\"abc\"");
        }
        let branches = json!({"anyOf": [{"type": "string"}, {"type": "boolean"}]});
        assert_eq!(plain("false", branches.clone()), "false");
        assert_eq!(plain("no", branches), "\"no\"");
        assert_eq!(plain("None", json!({"type": ["string", "null"]})), "null");
        assert_eq!(plain(" null ", json!({"type": ["null", "string"]})), "null");
    }

    #[test]
    fn all_of_intersects_and_constraints_do_not_change_the_reading() {
        let counted = json!({"allOf": [{"type": "integer"}, {"minimum": 0}]});
        assert_eq!(plain("-3", counted), "-3");
        let both = json!({"allOf": [{"type": "number"}, {"type": "integer"}]});
        assert_eq!(plain("2", both.clone()), "2");
        assert_eq!(plain("2.5", both), "\"2.5\"");
        let never = json!({"allOf": [{"type": "integer"}, {"type": "string"}]});
        assert_eq!(plain("5", never), "\"5\"");
        assert_eq!(
            plain("150", json!({"type": "integer", "maximum": 100})),
            "150"
        );
    }

    #[test]
    fn const_and_enum_allow_their_values_compared_by_value() {
        assert_eq!(plain("2", json!({"enum": [1, 2]})), "2");
        assert_eq!(plain("2.0", json!({"enum": [1, 2]})), "2.0");
        assert_eq!(plain("1", json!({"enum": [1.0]})), "1");
        assert_eq!(plain("3", json!({"enum": [1, 2]})), "\"3\"");
        assert_eq!(
            plain("true", json!({"enum": ["true", "false"]})),
            "\"true\""
        );
        assert_eq!(plain("null", json!({"const": null})), "null");
        assert_eq!(
            plain(
                "{\"b\": 1, \"a\": [2.0]}",
                json!({"const": {"a": [2], "b": 1}})
            ),
            "{\"b\":1,\"a\":[2.0]}"
        );
        assert_eq!(
            plain("{\"a\": 3}", json!({"const": {"a": 2}})),
            "\"{\\\"a\\\": 3}\""
        );
        // An enum filtered by the type beside it: 1.5 is no integer.
        assert_eq!(
            plain("1.5", json!({"type": "integer", "enum": [1, 1.5]})),
            "\"1.5\""
        );
        let any_null = json!({"anyOf": [{"const": null}, {"type": "string"}]});
        assert_eq!(plain("None", any_null.clone()), "null");
        assert_eq!(plain("text", any_null), "\"text\"");
    }

    #[test]
    fn nullable_adds_null_to_whatever_the_schema_allows() {
        assert_eq!(
            plain("null", json!({"type": "integer", "nullable": true})),
            "null"
        );
        assert_eq!(
            plain("5", json!({"type": "integer", "nullable": true})),
            "5"
        );
        assert_eq!(
            plain("None", json!({"enum": ["a"], "nullable": true})),
            "null"
        );
        assert_eq!(
            plain("null", json!({"type": "integer", "nullable": false})),
            "\"null\""
        );
        let defs = json!({"N": {"type": "integer"}});
        assert_eq!(
            typed("null", json!({"$ref": "#/$defs/N", "nullable": true}), defs),
            "null"
        );
    }

    #[test]
    fn a_branch_saying_nothing_of_the_type_allows_only_the_raw_string() {
        assert_eq!(plain("5", json!(true)), "\"5\"");
        assert_eq!(
            plain("5", json!({"description": "n", "minimum": 1})),
            "\"5\""
        );
        assert_eq!(plain("5", json!(false)), "\"5\"");
        let some = json!({"anyOf": [{"type": "integer"}, {}]});
        assert_eq!(plain("5", some.clone()), "5");
        assert_eq!(plain("x", some), "\"x\"");
    }

    #[test]
    fn references_are_resolved_through_chains_escapes_and_the_root() {
        let defs = json!({"A": {"$ref": "#/$defs/B"}, "B": {"type": "integer"}, "a/b~": {"type": "boolean"},
                          "e f": {"type": "null"}});
        assert_eq!(
            typed("12", json!({"$ref": "#/$defs/A"}), defs.clone()),
            "12"
        );
        assert_eq!(
            typed("True", json!({"$ref": "#/$defs/a~1b~0"}), defs.clone()),
            "true"
        );
        assert_eq!(
            typed("None", json!({"$ref": "#/%24defs/e%20f"}), defs.clone()),
            "null"
        );
        assert_eq!(
            typed("36893488147419103232", json!({"$ref": "#/$defs/B"}), defs),
            "36893488147419103232"
        );
        // `#` is the parameters document, an object schema.
        assert_eq!(plain("{'n': 1}", json!({"$ref": "#"})), "{\"n\":1}");
    }

    #[test]
    fn a_recursive_schema_reads_as_its_outer_kind() {
        let defs = json!({"Node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}});
        assert_eq!(
            typed(
                "{\"children\": [{\"children\": []}]}",
                json!({"$ref": "#/$defs/Node"}),
                defs
            ),
            "{\"children\":[{\"children\":[]}]}"
        );
    }

    /// The error `check_references` gives for a tool with `parameters`.
    fn refused(parameters: Value) -> Option<String> {
        let tool = Tool {
            name: "f".into(),
            description: None,
            parameters: Some(parameters),
        };
        check_references(&tool).err().map(|e| e.to_string())
    }

    #[test]
    fn a_reference_cycle_is_refused_and_recursion_through_properties_is_not() {
        assert_eq!(
            refused(json!({"$defs": {"A": {"$ref": "#/$defs/A"}}, "properties": {}})).as_deref(),
            Some("tool \"f\": $ref \"#/$defs/A\" refers back to itself through $ref, allOf, anyOf and oneOf alone")
        );
        let through_branches = json!({"$defs": {"A": {"allOf": [{"$ref": "#/$defs/B"}]},
                                                "B": {"anyOf": [{"type": "null"}, {"$ref": "#/%24defs/A"}]}},
                                      "properties": {"p": {"$ref": "#/$defs/A"}}});
        assert!(refused(through_branches).is_some_and(|e| e.contains("refers back to itself")));
        assert!(refused(json!({"$ref": "#"})).is_some());
        let tree = json!({"$defs": {"Node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
            "properties": {"root": {"$ref": "#/$defs/Node"}, "again": {"$ref": "#"}}});
        assert_eq!(refused(tree), None);
    }

    #[test]
    fn a_reference_to_nothing_or_outside_the_parameters_is_refused_wherever_it_is() {
        assert_eq!(
            refused(json!({"properties": {"p": {"$ref": "#/$defs/Missing"}}})).as_deref(),
            Some("tool \"f\": $ref \"#/$defs/Missing\" points at nothing")
        );
        // Unused, deep in a definition: still checked.
        let deep = json!({"$defs": {"X": {"type": "array", "items": {"$ref": "#/definitions/Y"}}}});
        assert!(refused(deep).is_some_and(|e| e.ends_with("points at nothing")));
        assert!(
            refused(json!({"properties": {"p": {"$ref": "other.json#/A"}}}))
                .is_some_and(|e| e.ends_with("is not a JSON Pointer into the tool's parameters"))
        );
        assert!(refused(json!({"properties": {"p": {"$ref": "#anchor"}}})).is_some());
        assert!(
            refused(json!({"type": "object", "properties": {"p": {"$ref": "#/type"}}}))
                .is_some_and(|e| e.ends_with("points at a value that is not a schema"))
        );
        // A `$ref` inside a value (a `const`, an `enum`, a `default`) is data.
        let data =
            json!({"properties": {"p": {"const": {"$ref": "#/nowhere"}, "default": {"$ref": 1}}}});
        assert_eq!(refused(data), None);
    }

    #[test]
    fn the_root_may_be_a_reference_or_an_all_of_and_a_key_in_both_places_is_both() {
        let tools: Vec<Tool> = serde_json::from_value(json!([
            {"name": "f", "parameters": {"$ref": "#/$defs/Args",
                "$defs": {"Args": {"type": "object", "properties": {"n": {"type": "integer"}}}}}},
            {"name": "g", "parameters": {"allOf": [
                {"properties": {"n": {"type": "number"}, "s": {"type": "string"}}},
                {"properties": {"n": {"type": "integer"}, "b": {"type": "boolean"}}}]}}
        ]))
        .expect("tools");
        let table = SchemaTypes::new(&tools);
        let value = |tool: &str, key: &str, raw: &str| {
            let t = table.tool(tool);
            typed_json(
                raw,
                table.typed_at(t, key).and_then(|at| table.shape(t, at)),
            )
        };
        assert_eq!(value("f", "n", "5"), "5");
        assert_eq!(value("g", "n", "5"), "5");
        assert_eq!(value("g", "n", "5.5"), "\"5.5\"");
        assert_eq!(value("g", "b", "false"), "false");
        assert_eq!(table.typed_at(table.tool("g"), "s"), None);
    }

    #[test]
    fn only_a_parameter_that_can_have_a_literal_reading_is_typed_at_its_close() {
        let tools: Vec<Tool> = serde_json::from_value(json!([
            {"name": "f", "parameters": {"properties": {
                "a": {"type": "integer"}, "b": {"type": ["string", "null"]}, "s": {"type": "str"},
                "c": {"anyOf": [{"type": "number"}, {"type": "boolean"}]}, "d": {},
                "e": {"enum": ["x", "y"]}, "k": {"enum": ["x", 1]}, "n": {"allOf": [{"type": "integer"}, {"type": "string"}]}
            }}},
            {"name": "f", "parameters": {"properties": {"s": {"type": "integer"}}}},
            {"name": "g"}
        ]))
        .expect("tools");
        let table = SchemaTypes::new(&tools);
        for (name, key, typed) in [
            ("f", "a", true),
            ("f", "b", true),
            ("f", "c", true),
            ("f", "k", true),
            ("f", "d", false),
            ("f", "e", false),
            ("f", "n", false),
            ("f", "s", false),
            ("f", "x", false),
            ("g", "a", false),
            ("h", "a", false),
        ] {
            assert_eq!(
                table.typed_at(table.tool(name), key).is_some(),
                typed,
                "{name}.{key}"
            );
        }
    }

    #[test]
    fn a_tool_built_with_a_broken_reference_types_nothing() {
        let tool = Tool {
            name: "f".into(),
            description: None,
            parameters: Some(
                json!({"properties": {"n": {"type": "integer"}, "m": {"$ref": "#/x"}}}),
            ),
        };
        let table = SchemaTypes::new(&[tool]);
        assert_eq!(table.typed_at(table.tool("f"), "n"), None);
    }

    #[test]
    fn a_long_list_of_values_is_read_as_their_kinds() {
        let many: Vec<i64> = (0..=MAX_VALUES as i64).collect();
        assert_eq!(plain("100000", json!({"enum": many})), "100000");
        let few: Vec<i64> = (0..MAX_VALUES as i64).collect();
        assert_eq!(plain("100000", json!({"enum": few})), "\"100000\"");
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
