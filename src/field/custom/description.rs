//! The family description: the JSON file that maps a user grammar's rules onto the
//! chat-turn model (spec/custom-family.md, CF-n). Unknown keys are refused at every
//! level, so a misspelt key is an error naming it, never a silently ignored setting.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::field::reasoning::Spelling;

/// A family description, as read from its JSON file (CF-3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Description {
    /// The family's name, used in messages (kebab-case by convention).
    pub name: String,
    /// One line saying what the family is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The default of the `start_in_reasoning` option for this family (CF-4).
    #[serde(default)]
    pub start_in_reasoning: bool,
    /// Appends idiolect's JSON grammar (grammar/field-json.pest, entry rule
    /// `json_object`) to the family's grammar before compiling it (CF-2).
    #[serde(default)]
    pub include_json_grammar: bool,
    /// The entry rule the parsing machine runs in each mode (CF-5).
    pub entries: Entries,
    /// The rules whose captures mean something to the chat-turn model (CF-6).
    pub captures: Captures,
    /// How a call's arguments are written (CF-8, CF-9); without it the family
    /// has no calls (CF-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Arguments>,
    /// How captured names and parameter keys are cleaned (CF-7).
    #[serde(default)]
    pub names: NameCleaning,
    /// Whether a call that breaks out of reasoning leaves the reasoning state, so
    /// that prose after the call is answer text (CF-11).
    #[serde(default)]
    pub calls_end_reasoning: bool,
    /// What the bytes of a block of calls cut short by the end of input are
    /// (CF-12): `text` (the default) or `markup`.
    #[serde(default)]
    pub end_of_input_in_block: EndInBlock,
    /// The family honours the `reasoning_markers` option (CF-19): its reasoning is
    /// spelt by the wrappers of spec/reasoning.md.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_markers: Option<ReasoningMarkers>,
    /// How the family renders calls, results and turns (CF-26); without it the
    /// family does not render.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render: Option<super::render::Render>,
    /// Options of the family's own, by name: each chooses entry rules by its value
    /// (CF-22).
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub options: IndexMap<String, FamilyOption>,
    /// With `captures.value_type`: the type texts that mean a raw string; any other
    /// type text means JSON (CF-20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string_types: Option<Vec<String>>,
    /// How the family reads the answer of a request whose `tool_choice` is
    /// `"required"` or names a function (FD-10, CF-36).
    #[serde(default, skip_serializing_if = "ConstrainedAnswer::is_payload")]
    pub tool_choice: ConstrainedAnswer,
    /// The models whose output the family reads, with the options their chat
    /// templates imply (CF-35).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<Model>,
}

/// How a family reads a constrained answer (FD-10, CF-36).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConstrainedAnswer {
    /// After any reasoning, the answer is the JSON payload the server constrained
    /// it to (FD-10c, FD-10d).
    #[default]
    Payload,
    /// The server constrains the family's own call markup, which the family reads
    /// as with `tool_choice` `"auto"` (FD-10e).
    Markup,
}

impl ConstrainedAnswer {
    /// Whether it is the default, `payload`.
    pub fn is_payload(&self) -> bool {
        *self == ConstrainedAnswer::Payload
    }
}

/// Models whose output a family reads (CF-35).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The models' names: lower case, `*` for any run of characters, matched
    /// against a name's last path segment.
    pub name: String,
    /// The family's options the models' chat templates imply.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub options: serde_json::Map<String, serde_json::Value>,
    /// What the options cannot say (a per-request switch, a variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Model {
    /// Whether the pattern matches all of `name` (already lowered and cut to its
    /// last path segment, CF-35 step 1).
    pub fn matches(&self, name: &str) -> bool {
        let mut parts = self.name.split('*');
        let first = parts.next().unwrap_or_default();
        let Some(mut rest) = name.strip_prefix(first) else {
            return false;
        };
        let parts: Vec<&str> = parts.collect();
        let Some((last, middle)) = parts.split_last() else {
            // No `*`: the whole name.
            return rest.is_empty();
        };
        for part in middle {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        rest.len() >= last.len() && rest.ends_with(last)
    }

    /// How specific the pattern is: its characters other than `*` (CF-35 step 3).
    pub fn specificity(&self) -> usize {
        self.name.chars().filter(|&c| c != '*').count()
    }
}

/// An option of the family's own (CF-22): a string among `values`, each value
/// choosing entry rules.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FamilyOption {
    /// What the option says, for its schema.
    pub description: String,
    /// The value when the options do not give one (one of `values`).
    pub default: String,
    /// The values, in the order the schema lists them.
    pub values: IndexMap<String, OptionValue>,
}

impl FamilyOption {
    /// Whether the option's values are exactly `true` and `false`: it is then
    /// given as a JSON boolean (CF-34).
    pub fn is_boolean(&self) -> bool {
        self.values.len() == 2
            && self.values.contains_key("true")
            && self.values.contains_key("false")
    }
}

/// One value of a family's option (CF-22).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionValue {
    /// What the value means, for the schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The entry rules it replaces while chosen: description key (`entries.text`,
    /// `reasoning_markers.plain`, …) to rule.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub rules: IndexMap<String, String>,
    /// The render templates while chosen, in place of the description's `render`
    /// (CF-22, CF-26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render: Option<super::render::Render>,
}

/// The description keys whose rule an option's value may replace (CF-22): the
/// entry rules.
pub const REPLACEABLE: [&str; 14] = [
    "entries.text",
    "entries.start",
    "entries.answer_start",
    "entries.reasoning",
    "entries.call_body",
    "entries.value_end",
    "entries.value_nested",
    "entries.arguments_end",
    "entries.object_end",
    "entries.after_call",
    "entries.skip",
    "reasoning_markers.plain",
    "arguments.object",
    "arguments.special_marker",
];

/// The options every field family has (FD-3, CF-19): no family option takes
/// their names.
pub const FIELD_OPTIONS: [&str; 3] = ["start_in_reasoning", "tools", "reasoning_markers"];

/// How a family reads the reasoning wrappers of the `reasoning_markers` option
/// (CF-19).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReasoningMarkers {
    /// The option's default: the spellings the family accepts when the options do
    /// not say.
    pub default: Vec<Spelling>,
    /// The spelling whose markers `entries.text` and `entries.reasoning` read
    /// beside the family's own, at its first byte.
    pub spelling: Spelling,
    /// The rule of the family's markers alone, run where that spelling does not
    /// apply.
    pub plain: String,
    /// Whether an accepted closer in answer text is markup (a stray closer, RS-13).
    #[serde(default)]
    pub stray_closers: bool,
}

/// What the undecided bytes of a block of calls cut by the end of input are (CF-12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndInBlock {
    /// The entry rule decides at the end of input, as pest would (`EOI`); a
    /// candidate it does not match is prose.
    #[default]
    Text,
    /// Markup: dropped, starting nothing.
    Markup,
}

/// The entry rules, one per mode (CF-5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Entries {
    /// Run at each candidate byte in answer text (required).
    pub text: String,
    /// Run at each candidate byte in reasoning (default: `text`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Run once at offset 0 when the output does not start in reasoning (CF-30;
    /// default: none, text is scanned from there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// Run where the answer starts: at offset 0 when the output does not start in
    /// reasoning, and right after a reasoning closer when no answer text and no
    /// call came before it (CF-28; default: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_start: Option<String>,
    /// Parameters encoding: run where a call's body continues (after the call
    /// starts and after each value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_body: Option<String>,
    /// Parameters encoding: run at each candidate byte inside a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_end: Option<String>,
    /// Parameters encoding: run at each candidate byte inside a value while it
    /// quotes an open nested opener (CF-17; default: none, values do not nest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_nested: Option<String>,
    /// JSON encoding: run where the arguments object ends (or, when no `{`
    /// follows the call's start, where it would begin), and at each candidate byte
    /// of malformed arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_end: Option<String>,
    /// Call objects: run after a call object (CF-16, CF-23; default:
    /// `arguments_end`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_end: Option<String>,
    /// Run right after a call ended complete (default: none, prose follows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_call: Option<String>,
    /// Run at each candidate byte after a malformed call (default: none, prose
    /// follows at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<String>,
}

/// The captured rules and what they mean (CF-6).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Captures {
    /// The tool's name; a match that captures it starts a call (required, except
    /// with the `json_call_object` encoding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `json_call_object` encoding: the call's opener; a match holding it is
    /// followed by the call object (required with that encoding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_open: Option<String>,
    /// The call's id, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The reasoning opener.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_open: Option<String>,
    /// The reasoning closer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_close: Option<String>,
    /// The opener of a block of calls: a match holding it ends open reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_open: Option<String>,
    /// Parameters encoding: a parameter's key; a `call_body` match holding it
    /// opens a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// Parameters encoding: the call's closer; a `call_body` match holding it ends
    /// the call complete and runs `after_call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_close: Option<String>,
    /// Parameters encoding: an opener quoted inside a value; a `value_end` or
    /// `value_nested` match holding it is value text one level down (CF-17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_open: Option<String>,
    /// Parameters encoding: a closer quoted inside a value; a `value_nested` match
    /// holding it is value text one level up (CF-17).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_close: Option<String>,
    /// A marker cut by the end of input: a match holding it is markup and starts
    /// nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
    /// Parameters encoding: a value's type as the markup writes it; a `call_body`
    /// match holding it with `parameter` reads the value as a raw string or as JSON
    /// (CF-20, with `string_types`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_type: Option<String>,
    /// Keywords encoding: an argument's value, a literal; a `call_body` match
    /// holding it with `parameter` is one argument (CF-27).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// How a call's arguments are written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "encoding", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arguments {
    /// One JSON object, kept as the model wrote it (CF-8).
    Json {
        /// The rule that matches the object from its `{` to its `}`.
        object: String,
        /// The rule that matches one of the family's special-token markers: where
        /// it matches inside the arguments, they end there (CF-18).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        special_marker: Option<String>,
        /// Call objects beside the named calls: a match holding
        /// `captures.call_open` is followed by one (CF-23).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_object: Option<CallObjectKeys>,
    },
    /// One JSON object holding the name and the arguments (CF-16), as hermes and
    /// llama3-json write `{"name": ..., "arguments": {...}}`.
    JsonCallObject {
        /// The keys whose string value is the tool's name (the first that occurs
        /// counts).
        #[serde(default = "default_name_keys")]
        name_keys: Vec<String>,
        /// The keys whose value is the arguments (the first that occurs counts).
        #[serde(default = "default_arguments_keys")]
        arguments_keys: Vec<String>,
        /// The keys whose string value is the call's id (CF-23; default none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        id_keys: Vec<String>,
        /// How the members are read (CF-24).
        #[serde(default)]
        values: ObjectValues,
        /// When the call starts (CF-33).
        #[serde(default)]
        starts: ObjectStart,
        /// What the character that stops an object without a call is (CF-33).
        #[serde(default)]
        stop: ObjectStop,
    },
    /// Keyword arguments whose values are literals of a language, each converted
    /// to JSON by the literal syntax named (CF-27), as pythonic writes
    /// `[f(a=1, b="x")]`.
    Keywords {
        /// The literal syntax of the values.
        literals: Literals,
        /// Call objects beside the keyword calls: a match holding
        /// `captures.call_open` is followed by one (CF-23).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_object: Option<CallObjectKeys>,
        /// The token that quotes strings (CF-38: required with `gemma`, refused
        /// with `python`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quote: Option<String>,
    },
    /// Key/value parameters, typed by the tools' schemas (CF-9).
    Parameters {
        /// Strip one newline right after a parameter's opener and one right before
        /// its closer (the qwen3-coder template's newlines).
        #[serde(default)]
        strip_newlines: bool,
    },
}

/// The keys of call objects read beside named calls (CF-23): those of the
/// `json_call_object` encoding, with its defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallObjectKeys {
    /// The keys whose string value is the tool's name (the first that occurs
    /// counts).
    #[serde(default = "default_name_keys")]
    pub name_keys: Vec<String>,
    /// The keys whose value is the arguments (the first that occurs counts).
    #[serde(default = "default_arguments_keys")]
    pub arguments_keys: Vec<String>,
    /// The keys whose string value is the call's id (default none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub id_keys: Vec<String>,
    /// How the members are read (CF-24).
    #[serde(default)]
    pub values: ObjectValues,
    /// When the call starts (CF-33).
    #[serde(default)]
    pub starts: ObjectStart,
    /// What the character that stops an object without a call is (CF-33).
    #[serde(default)]
    pub stop: ObjectStop,
}

/// When a call object's call starts (CF-33).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ObjectStart {
    /// When its name has arrived (and its id is decided, with `id_keys`); an object
    /// without arguments gives `{}` (CF-16).
    #[default]
    Name,
    /// When both its name and its arguments member are known: an object without
    /// arguments is no call (llama3-json's LJ-6).
    NameAndArguments,
    /// When the value of its first member begins: that member's key is the name
    /// and its value the arguments (CF-39, Apertus).
    Key,
}

/// What the character that cannot continue an object is, when no call started
/// (CF-33).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ObjectStop {
    /// Prose with the object's bytes before it (CF-16).
    #[default]
    Prose,
    /// Scanned again: the object's bytes before it are prose, and the mode's rule
    /// runs at it (llama3-json's LJ-8).
    Scanned,
}

/// The literal syntax of keyword arguments' values (CF-27): one piece of the
/// engine per syntax, with its grammar and its conversion to JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Literals {
    /// Python's literals (spec/pythonic.md PY-6), grammar/python-call.pest's
    /// `py_value`.
    Python,
    /// Gemma's literals (spec/gemma4.md G4-7, CF-38), grammar/gemma-call.pest's
    /// `gm_value`, strings between the description's `quote` tokens.
    Gemma,
}

/// How a call object's members are read (CF-24).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ObjectValues {
    /// Values read for their extent (hermes' HE-7); a string holding an object
    /// stands for that object.
    #[default]
    Loose,
    /// JSON as written, read with idiolect's JSON grammar; arguments are the value
    /// as written.
    Json,
}

fn default_name_keys() -> Vec<String> {
    vec!["name".to_string()]
}

fn default_arguments_keys() -> Vec<String> {
    vec!["arguments".to_string(), "parameters".to_string()]
}

/// How captured names and keys are cleaned (CF-7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NameCleaning {
    /// As captured.
    #[default]
    Verbatim,
    /// Surrounding whitespace removed, then one pair of matching `"` or `'`.
    TrimQuotes,
    /// Surrounding spaces and tabs removed (nothing else).
    TrimBlanks,
}

impl NameCleaning {
    /// `raw` cleaned.
    pub fn clean(self, raw: &str) -> String {
        match self {
            NameCleaning::Verbatim => raw.to_string(),
            NameCleaning::TrimQuotes => {
                let name = raw.trim();
                for q in ['"', '\''] {
                    if let Some(inner) = name.strip_prefix(q).and_then(|n| n.strip_suffix(q)) {
                        return inner.to_string();
                    }
                }
                name.to_string()
            }
            NameCleaning::TrimBlanks => raw.trim_matches([' ', '\t']).to_string(),
        }
    }
}

impl Arguments {
    /// The encoding's name, as the description writes it.
    pub fn encoding(&self) -> &'static str {
        match self {
            Arguments::Json { .. } => "json",
            Arguments::JsonCallObject { .. } => "json_call_object",
            Arguments::Keywords { .. } => "keywords",
            Arguments::Parameters { .. } => "parameters",
        }
    }
}

impl Description {
    /// Every (key, rule) the description names, in a fixed order, with the keys
    /// that the encoding requires checked (CF-3): `Err` names a missing key.
    pub fn rules(&self) -> Result<Vec<(&'static str, &str)>, String> {
        let e = &self.entries;
        let c = &self.captures;
        let mut named: Vec<(&'static str, Option<&str>)> = vec![
            ("entries.text", Some(&e.text)),
            ("entries.reasoning", e.reasoning.as_deref()),
            ("entries.start", e.start.as_deref()),
            ("entries.answer_start", e.answer_start.as_deref()),
            ("entries.after_call", e.after_call.as_deref()),
            ("entries.skip", e.skip.as_deref()),
            ("captures.name", c.name.as_deref()),
            ("captures.call_open", c.call_open.as_deref()),
            ("captures.id", c.id.as_deref()),
            ("captures.reasoning_open", c.reasoning_open.as_deref()),
            ("captures.reasoning_close", c.reasoning_close.as_deref()),
            ("captures.block_open", c.block_open.as_deref()),
            ("captures.cut", c.cut.as_deref()),
            (
                "reasoning_markers.plain",
                self.reasoning_markers.as_ref().map(|r| r.plain.as_str()),
            ),
        ];
        let Some(arguments) = &self.arguments else {
            // A family without calls: no key of a call applies (CF-25).
            let calls = [
                ("entries.call_body", e.call_body.is_some()),
                ("entries.value_end", e.value_end.is_some()),
                ("entries.value_nested", e.value_nested.is_some()),
                ("entries.arguments_end", e.arguments_end.is_some()),
                ("entries.object_end", e.object_end.is_some()),
                ("entries.after_call", e.after_call.is_some()),
                ("entries.skip", e.skip.is_some()),
                ("captures.name", c.name.is_some()),
                ("captures.call_open", c.call_open.is_some()),
                ("captures.id", c.id.is_some()),
                ("captures.block_open", c.block_open.is_some()),
                ("captures.parameter", c.parameter.is_some()),
                ("captures.call_close", c.call_close.is_some()),
                ("captures.nested_open", c.nested_open.is_some()),
                ("captures.nested_close", c.nested_close.is_some()),
                ("captures.value_type", c.value_type.is_some()),
                ("captures.value", c.value.is_some()),
            ];
            if let Some((key, _)) = calls.iter().find(|(_, present)| *present) {
                return Err(format!(
                    "key `{key}` does not apply to a family without calls (no key `arguments`)"
                ));
            }
            return Ok(named
                .into_iter()
                .filter_map(|(k, r)| r.map(|r| (k, r)))
                .collect());
        };
        let required: &[&str] = match arguments {
            Arguments::Json {
                object,
                special_marker,
                call_object,
            } => {
                named.push(("arguments.object", Some(object)));
                named.push(("arguments.special_marker", special_marker.as_deref()));
                named.push(("entries.arguments_end", e.arguments_end.as_deref()));
                if call_object.is_some() {
                    named.push(("entries.object_end", e.object_end.as_deref()));
                    &[
                        "captures.name",
                        "entries.arguments_end",
                        "captures.call_open",
                    ]
                } else {
                    &["captures.name", "entries.arguments_end"]
                }
            }
            Arguments::JsonCallObject { .. } => {
                named.push(("entries.arguments_end", e.arguments_end.as_deref()));
                named.push(("entries.object_end", e.object_end.as_deref()));
                &["captures.call_open", "entries.arguments_end"]
            }
            Arguments::Keywords { call_object, .. } => {
                named.push(("entries.call_body", e.call_body.as_deref()));
                named.push(("entries.value_end", e.value_end.as_deref()));
                named.push(("captures.parameter", c.parameter.as_deref()));
                named.push(("captures.value", c.value.as_deref()));
                named.push(("captures.call_close", c.call_close.as_deref()));
                let required: &[&str] = &[
                    "captures.name",
                    "entries.call_body",
                    "entries.value_end",
                    "captures.parameter",
                    "captures.value",
                    "captures.call_close",
                    // With call objects beside the calls (CF-23).
                    "captures.call_open",
                ];
                if call_object.is_some() {
                    named.push(("entries.object_end", e.object_end.as_deref()));
                    required
                } else {
                    &required[..required.len() - 1]
                }
            }
            Arguments::Parameters { .. } => {
                named.push(("entries.call_body", e.call_body.as_deref()));
                named.push(("entries.value_end", e.value_end.as_deref()));
                named.push(("entries.value_nested", e.value_nested.as_deref()));
                named.push(("captures.parameter", c.parameter.as_deref()));
                named.push(("captures.nested_open", c.nested_open.as_deref()));
                named.push(("captures.nested_close", c.nested_close.as_deref()));
                named.push(("captures.call_close", c.call_close.as_deref()));
                named.push(("captures.value_type", c.value_type.as_deref()));
                &[
                    "captures.name",
                    "entries.call_body",
                    "entries.value_end",
                    "captures.parameter",
                ]
            }
        };
        if let Arguments::Keywords {
            literals, quote, ..
        } = arguments
        {
            // The quote token goes with the `gemma` literals alone (CF-38).
            match (literals, quote.as_deref()) {
                (Literals::Gemma, None | Some("")) => {
                    return Err("missing key `arguments.quote` (a non-empty token, required with literals `gemma`)".to_string());
                }
                (Literals::Python, Some(_)) => {
                    return Err(
                        "key `arguments.quote` does not apply to literals `python`".to_string()
                    );
                }
                _ => {}
            }
        }
        for key in required {
            if named.iter().any(|(k, r)| k == key && r.is_none()) {
                return Err(format!(
                    "missing key `{key}` (required with arguments encoding `{}`)",
                    arguments.encoding()
                ));
            }
        }
        // The keys only the parameters encoding reads.
        let parameters_only = [
            ("entries.call_body", e.call_body.is_some()),
            ("entries.value_end", e.value_end.is_some()),
            ("entries.value_nested", e.value_nested.is_some()),
            ("captures.nested_open", c.nested_open.is_some()),
            ("captures.nested_close", c.nested_close.is_some()),
            ("captures.parameter", c.parameter.is_some()),
            ("captures.call_close", c.call_close.is_some()),
            ("captures.value_type", c.value_type.is_some()),
        ];
        let mut misplaced: Vec<(&str, bool)> = match arguments {
            Arguments::JsonCallObject { .. } => vec![
                ("captures.name", c.name.is_some()),
                ("captures.id", c.id.is_some()),
            ],
            Arguments::Json {
                call_object: Some(_),
                ..
            } => Vec::new(),
            Arguments::Json { .. } => vec![
                ("captures.call_open", c.call_open.is_some()),
                ("entries.object_end", e.object_end.is_some()),
            ],
            Arguments::Parameters { .. } => vec![
                ("entries.arguments_end", e.arguments_end.is_some()),
                ("entries.object_end", e.object_end.is_some()),
                ("captures.call_open", c.call_open.is_some()),
                ("captures.value", c.value.is_some()),
            ],
            Arguments::Keywords { call_object, .. } => vec![
                ("entries.arguments_end", e.arguments_end.is_some()),
                (
                    "entries.object_end",
                    call_object.is_none() && e.object_end.is_some(),
                ),
                (
                    "captures.call_open",
                    call_object.is_none() && c.call_open.is_some(),
                ),
                ("entries.value_nested", e.value_nested.is_some()),
                ("captures.nested_open", c.nested_open.is_some()),
                ("captures.nested_close", c.nested_close.is_some()),
                ("captures.value_type", c.value_type.is_some()),
            ],
        };
        match arguments {
            Arguments::Parameters { .. } | Arguments::Keywords { .. } => {}
            _ => {
                misplaced.extend(parameters_only);
                misplaced.push(("captures.value", c.value.is_some()));
            }
        }
        if let Some((key, _)) = misplaced.iter().find(|(_, present)| *present) {
            return Err(format!(
                "key `{key}` does not apply to arguments encoding `{}`",
                arguments.encoding()
            ));
        }
        // A value's type is read with its string types (CF-20).
        if c.value_type.is_some() != self.string_types.is_some() {
            return Err("keys `captures.value_type` and `string_types` go together".to_string());
        }
        // Nesting is read with all three keys or none (CF-17).
        let nesting = [
            e.value_nested.is_some(),
            c.nested_open.is_some(),
            c.nested_close.is_some(),
        ];
        if nesting.contains(&true) && nesting.contains(&false) {
            return Err(
                "keys `entries.value_nested`, `captures.nested_open` and `captures.nested_close` go together"
                    .to_string(),
            );
        }
        Ok(named
            .into_iter()
            .filter_map(|(k, r)| r.map(|r| (k, r)))
            .collect())
    }

    /// The family's options checked (CF-22) against the rules the description
    /// names (`named`, from [`Description::rules`]): `Err` says which key is wrong.
    /// Every rule a value names is returned with its key, for the caller to check
    /// against the grammar.
    pub fn option_rules(
        &self,
        named: &[(&'static str, &str)],
    ) -> Result<Vec<(String, &str)>, String> {
        let mut all = Vec::new();
        let mut replaced: Vec<(&str, &str)> = Vec::new();
        for (name, option) in &self.options {
            let at = format!("options.{name}");
            if FIELD_OPTIONS.contains(&name.as_str()) {
                return Err(format!(
                    "key `{at}`: option `{name}` is every field family's"
                ));
            }
            if option.values.is_empty() {
                return Err(format!(
                    "key `{at}.values`: an option has at least one value"
                ));
            }
            if !option.values.contains_key(&option.default) {
                return Err(format!(
                    "key `{at}.default`: `{}` is not one of its values",
                    option.default
                ));
            }
            for (value, chosen) in &option.values {
                for (key, rule) in &chosen.rules {
                    let here = format!("{at}.values.{value}.rules.{key}");
                    if !REPLACEABLE.contains(&key.as_str()) {
                        return Err(format!(
                            "key `{here}`: a value replaces entry rules only ({})",
                            REPLACEABLE.join(", ")
                        ));
                    }
                    if !named.iter().any(|(k, _)| k == key) {
                        return Err(format!(
                            "key `{here}`: the description does not set `{key}`"
                        ));
                    }
                    if let Some((_, other)) = replaced
                        .iter()
                        .find(|(k, o)| k == key && *o != name.as_str())
                    {
                        return Err(format!(
                            "key `{here}`: option `{other}` replaces `{key}` too"
                        ));
                    }
                    replaced.push((key.as_str(), name.as_str()));
                    all.push((here, rule.as_str()));
                }
            }
        }
        Ok(all)
    }
}
