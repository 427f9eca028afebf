//! Field families defined at run time: a user's pest grammar, compiled onto the
//! parsing machine when the program runs, and a small JSON description that maps
//! its rules onto the chat-turn model (which entry rule runs in which mode, which
//! captured rule is a call's name, its id, a parameter's key, a reasoning marker).
//! The result parses like a built-in family: the same events, document, options,
//! delta projection and streaming contract. Rules: spec/custom-family.md (CF-n);
//! the description's JSON Schema: spec/custom-family.schema.json.
//!
//! ```
//! use idiolect::field::{custom::{Family, Options}, Item};
//! let grammar = r#"
//! call_open = { "<call " ~ name ~ ">" ~ &"{" }
//! name = { (ASCII_ALPHANUMERIC | "_")+ }
//! marker = _{ call_open }
//! end = _{ "</call>" }
//! "#;
//! let description = r#"{
//!   "name": "tiny", "include_json_grammar": true,
//!   "entries": {"text": "marker", "arguments_end": "end"},
//!   "captures": {"name": "name"},
//!   "arguments": {"encoding": "json", "object": "json_object"}
//! }"#;
//! let family = Family::new(grammar, description).unwrap();
//! let doc = family.parse("Hi <call f>{\"x\": 1}</call>", &Options::default()).unwrap();
//! assert!(matches!(&doc.items[1], Item::ToolCall { name, complete: true, .. } if name == "f"));
//! ```

mod description;
mod keywords;
pub(crate) mod literal;
mod machine;
mod render;
mod value_type;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use indexmap::IndexMap;
use serde_json::Value;

pub use description::{
    Arguments, CallObjectKeys, Captures, ConstrainedAnswer, Description, EndInBlock, Entries,
    FamilyOption, Literals, Model, NameCleaning, ObjectStart, ObjectStop, ObjectValues,
    OptionValue, ReasoningMarkers,
};
pub use machine::CustomMachine;
pub use render::Render;

use crate::field::grammars::{FIELD_JSON, PYTHON_CALL, REASONING};
use crate::field::reasoning::Spelling;
use crate::field::render_input::{CallSpec, ResultSpec};
use crate::field::{Document, DocumentFolder, Event, Tool, ToolChoice};
use crate::fold::Fold;
use crate::machine::{compile_capturing, CompileError, Program, RuleId};
use crate::reentry::Stream;
use keywords::LiteralSyntax;
use machine::{Compiled, Entry, Roles, Settings, Wrapping};
use render::Renderer;
use value_type::ValueTypes;

/// A family's options, as given in JSON (CF-4, CF-19, CF-22): the keys of every
/// field family (FD-3), `reasoning_markers` for a family whose description has the
/// key of CF-19, and the options its description declares. A key left out takes
/// the description's default; a key the family does not have is refused when the
/// family reads the options.
#[derive(
    Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(default)]
pub struct Options {
    /// Whether the output starts inside reasoning: the chat template ended the
    /// prompt with the reasoning opener (default: the description's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_in_reasoning: Option<bool>,
    /// The tools of the request, with their JSON Schemas.
    pub tools: Vec<Tool>,
    /// What the request's `tool_choice` asked (FD-10; default `"auto"`).
    #[serde(skip_serializing_if = "ToolChoice::is_auto")]
    pub tool_choice: ToolChoice,
    /// The accepted reasoning wrappers (RS-11): `think`, `bracket`, `triangle`;
    /// empty for none (default: the description's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_markers: Option<Vec<Spelling>>,
    /// The family's own options (CF-22), and any other key given (refused by a
    /// family that does not declare it).
    #[serde(flatten)]
    pub family: IndexMap<String, Value>,
}

/// The shape of [`Options`] as a schema states it: every key with its default
/// (written in by [`Family::options_schema`]).
#[derive(schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Options")]
#[allow(dead_code, reason = "only its schema is used")]
struct OptionsSchema {
    /// Whether the output starts inside reasoning: the chat template ended the
    /// prompt with the reasoning opener.
    #[serde(default)]
    start_in_reasoning: bool,
    /// The tools of the request, with their JSON Schemas.
    #[serde(default)]
    tools: Vec<Tool>,
    /// What the request's `tool_choice` asked (FD-10).
    #[serde(default)]
    tool_choice: ToolChoice,
    /// The accepted reasoning wrappers (RS-11): `think`, `bracket`, `triangle`;
    /// empty for none.
    #[serde(default)]
    reasoning_markers: Vec<Spelling>,
}

impl From<crate::field::Options> for Options {
    /// FD-3's options, as given (their `start_in_reasoning` included).
    fn from(options: crate::field::Options) -> Options {
        Options {
            start_in_reasoning: Some(options.start_in_reasoning),
            tools: options.tools,
            tool_choice: options.tool_choice,
            reasoning_markers: None,
            family: IndexMap::new(),
        }
    }
}

/// The streaming parser of a custom family: feed chunks, get [`Event`]s.
pub type Parser = Stream<CustomMachine>;

/// Why a family could not be built (CF-13). Each message is one line and names the
/// key or the rule at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FamilyError {
    /// The description is not valid JSON, or has an unknown, missing or mistyped key.
    Description(String),
    /// The description names a rule the grammar does not have.
    UnknownRule {
        /// The description's key (`captures.name`).
        key: String,
        /// The rule it names.
        rule: String,
    },
    /// The grammar does not compile: pest refused it, or it uses a construct the
    /// parsing machine does not support.
    Grammar(String),
    /// Options the family does not have (`reasoning_markers` without CF-19's key).
    Options(String),
}

impl std::fmt::Display for FamilyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FamilyError::Description(message) => write!(f, "family description: {message}"),
            FamilyError::UnknownRule { key, rule } => write!(
                f,
                "family description: key `{key}` names rule `{rule}`, which the grammar does not have"
            ),
            FamilyError::Grammar(message) => write!(f, "family grammar: {message}"),
            FamilyError::Options(message) => write!(f, "family options: {message}"),
        }
    }
}

impl std::error::Error for FamilyError {}

/// A pest error message on one line: its position and what it says.
fn one_line(message: &str) -> String {
    let at = message
        .lines()
        .find_map(|l| l.trim().strip_prefix("-->").map(str::trim));
    let what = message
        .lines()
        .find_map(|l| l.trim().strip_prefix("= ").map(str::trim))
        .unwrap_or_else(|| message.lines().next().unwrap_or("").trim());
    match at {
        Some(at) => format!("at {at}: {what}"),
        None => what.to_string(),
    }
}

fn grammar_error(e: CompileError) -> FamilyError {
    match e {
        CompileError::Pest(messages) => FamilyError::Grammar(format!(
            "pest refused it: {}",
            messages
                .iter()
                .map(|m| one_line(m))
                .collect::<Vec<_>>()
                .join("; ")
        )),
        other => FamilyError::Grammar(other.to_string()),
    }
}

/// Compiled programs by grammar text and captures. A program lives as long as the
/// process (the parsing machine borrows it for `'static`); interning bounds that to
/// one copy per distinct grammar, however many families are built from it.
fn intern(grammar: &str, captures: &[&str]) -> Result<&'static Program, CompileError> {
    type Key = (String, Vec<String>);
    static PROGRAMS: OnceLock<Mutex<HashMap<Key, &'static Program>>> = OnceLock::new();
    let key = (
        grammar.to_string(),
        captures.iter().map(|c| c.to_string()).collect(),
    );
    let programs = PROGRAMS.get_or_init(Default::default);
    if let Some(program) = programs.lock().ok().and_then(|p| p.get(&key).copied()) {
        return Ok(program);
    }
    let program: &'static Program = Box::leak(Box::new(compile_capturing(grammar, captures)?));
    if let Ok(mut p) = programs.lock() {
        p.insert(key, program);
    }
    Ok(program)
}

/// The rules of grammar/reasoning.pest whose captures are the wrappers' markers.
const WRAPPER_RULES: [&str; 6] = [
    "rs_think_open",
    "rs_bracket_open",
    "rs_triangle_open",
    "rs_think_close",
    "rs_bracket_close",
    "rs_triangle_close",
];

/// The JSON Schema (draft 2020-12) of a family description, as committed in
/// spec/custom-family.schema.json.
pub fn description_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(Description)).unwrap_or(Value::Null)
}

/// A field family built at run time from a grammar and a description.
#[derive(Clone, Debug)]
pub struct Family {
    description: Description,
    compiled: Arc<Compiled>,
    renderer: Option<Arc<Renderer>>,
    /// The renderers that option values choose (CF-22): option index, value
    /// index, renderer.
    chosen_renderers: Vec<(usize, usize, Arc<Renderer>)>,
    variants: Arc<Variants>,
}

/// The family's own options (CF-22): per option its values and the rules each
/// replaces, and the families compiled for the choices made so far.
#[derive(Debug, Default)]
struct Variants {
    options: Vec<OptionVariants>,
    /// The compiled family per choice (one value index per option) other than the
    /// defaults, built at first use.
    built: Mutex<Vec<(Vec<usize>, Arc<Compiled>)>>,
}

/// One option of the family's own (CF-22).
#[derive(Debug)]
struct OptionVariants {
    name: String,
    /// Whether its values are `true` and `false`, given as a JSON boolean (CF-34).
    boolean: bool,
    default: usize,
    /// Per value: its name and the rules it replaces (description key, rule).
    values: Vec<(String, Vec<(String, RuleId)>)>,
}

impl Family {
    /// Builds a family from pest grammar text and the JSON text of its description.
    pub fn new(grammar: &str, description: &str) -> Result<Family, FamilyError> {
        let description: Description = serde_json::from_str(description)
            .map_err(|e| FamilyError::Description(e.to_string()))?;
        Family::from_description(grammar, description)
    }

    /// Builds a family from pest grammar text and a parsed description.
    pub fn from_description(
        grammar: &str,
        description: Description,
    ) -> Result<Family, FamilyError> {
        let named = description.rules().map_err(FamilyError::Description)?;
        let option_rules = description
            .option_rules(&named)
            .map_err(FamilyError::Description)?;
        let mut text = grammar.to_string();
        if description.include_json_grammar {
            text = format!("{text}\n{FIELD_JSON}");
        }
        if let Some(Arguments::Keywords {
            literals, quote, ..
        }) = &description.arguments
        {
            // The literal syntax's grammar (CF-27, CF-38).
            let literal_grammar = match literals {
                Literals::Python => PYTHON_CALL.to_string(),
                Literals::Gemma => literal::gemma::grammar(quote.as_deref().unwrap_or_default()),
            };
            text = format!("{text}\n{literal_grammar}");
        }
        if description.reasoning_markers.is_some() {
            text = format!("{text}\n{REASONING}");
        }
        // Check the names first, so that a wrong name is reported as the key's.
        let all = intern(&text, &[]).map_err(grammar_error)?;
        let every = named
            .iter()
            .map(|(k, r)| (k.to_string(), *r))
            .chain(option_rules.iter().map(|(k, r)| (k.clone(), *r)));
        for (key, rule) in every {
            if all.rule(rule).is_none() {
                return Err(FamilyError::UnknownRule {
                    key,
                    rule: rule.to_string(),
                });
            }
        }
        let captured_names: Vec<&str> = named
            .iter()
            .filter(|(k, _)| k.starts_with("captures."))
            .map(|(_, r)| *r)
            .collect();
        let mut captured_names = captured_names;
        if description.reasoning_markers.is_some() {
            // The wrappers' markers (CF-19), read by their captures.
            captured_names.extend(WRAPPER_RULES);
        }
        let program = intern(&text, &captured_names).map_err(grammar_error)?;
        let rule = |name: &str| -> RuleId {
            program
                .rule(name)
                .expect("every named rule was checked against the grammar")
        };
        let opt = |name: &Option<String>| name.as_deref().map(rule);
        let entry = |name: &str| Entry::new(program, rule(name));
        let e = &description.entries;
        let c = &description.captures;
        let roles = Roles {
            name: opt(&c.name),
            call_open: opt(&c.call_open),
            id: opt(&c.id),
            reasoning_open: opt(&c.reasoning_open),
            reasoning_close: opt(&c.reasoning_close),
            block_open: opt(&c.block_open),
            parameter: opt(&c.parameter),
            call_close: opt(&c.call_close),
            cut: opt(&c.cut),
            nested_open: opt(&c.nested_open),
            nested_close: opt(&c.nested_close),
            value: opt(&c.value),
        };
        let captured = [
            roles.name,
            roles.call_open,
            roles.id,
            roles.reasoning_open,
            roles.reasoning_close,
            roles.block_open,
            roles.parameter,
            roles.call_close,
            roles.cut,
            roles.nested_open,
            roles.nested_close,
            roles.value,
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
        // The type text beside a parameter's key (CF-20).
        let value_types = c.value_type.as_deref().map(|r| {
            ValueTypes::new(
                rule(r),
                description.string_types.clone().unwrap_or_default(),
            )
        });
        let captured = captured
            .into_iter()
            .chain(value_types.as_ref().map(|v| v.rule))
            .collect();
        let (object, strip_newlines) = match &description.arguments {
            Some(Arguments::Json { object, .. }) => (Some(rule(object)), false),
            Some(Arguments::Parameters { strip_newlines }) => (None, *strip_newlines),
            Some(Arguments::JsonCallObject { .. } | Arguments::Keywords { .. }) | None => {
                (None, false)
            }
        };
        let special_marker = match &description.arguments {
            Some(Arguments::Json {
                special_marker: Some(special),
                ..
            }) => Some(entry(special)),
            _ => None,
        };
        let call_object = match &description.arguments {
            Some(Arguments::JsonCallObject {
                name_keys,
                arguments_keys,
                id_keys,
                values,
                starts,
                stop,
            }) => Some(CallObjectKeys {
                name_keys: name_keys.clone(),
                arguments_keys: arguments_keys.clone(),
                id_keys: id_keys.clone(),
                values: *values,
                starts: *starts,
                stop: *stop,
            }),
            Some(
                Arguments::Json {
                    call_object: Some(keys),
                    ..
                }
                | Arguments::Keywords {
                    call_object: Some(keys),
                    ..
                },
            ) => Some(keys.clone()),
            _ => None,
        }
        .map(|keys| crate::field::call_object::ObjectKeys {
            name: keys.name_keys,
            arguments: keys.arguments_keys,
            id: keys.id_keys,
            json: keys.values == ObjectValues::Json,
            needs_arguments: keys.starts == ObjectStart::NameAndArguments,
            rescan: keys.stop == ObjectStop::Scanned,
            name_is_key: keys.starts == ObjectStart::Key,
        });
        let wrapping = description.reasoning_markers.as_ref().map(|r| Wrapping {
            default: r.default.clone(),
            spelling: r.spelling,
            plain: entry(&r.plain),
            stray_closers: r.stray_closers,
        });
        let compiled = Compiled {
            program,
            text: entry(&e.text),
            reasoning: entry(e.reasoning.as_deref().unwrap_or(&e.text)),
            start: e.start.as_deref().map(entry),
            answer_start: e.answer_start.as_deref().map(entry),
            call_body: e.call_body.as_deref().map(entry),
            value_end: e.value_end.as_deref().map(entry),
            value_nested: e.value_nested.as_deref().map(entry),
            arguments_end: e.arguments_end.as_deref().map(entry),
            object_end: e.object_end.as_deref().map(entry),
            after_call: e.after_call.as_deref().map(entry),
            skip: e.skip.as_deref().map(entry),
            object,
            special_marker,
            call_object,
            strip_newlines,
            roles,
            captured,
            names: description.names,
            calls_end_reasoning: description.calls_end_reasoning,
            end_in_block_markup: description.end_of_input_in_block == EndInBlock::Markup,
            start_in_reasoning: description.start_in_reasoning,
            wrapping,
            value_types,
            keywords: match &description.arguments {
                Some(Arguments::Keywords {
                    literals, quote, ..
                }) => Some(LiteralSyntax::new(*literals, quote.as_deref())),
                _ => None,
            },
        };
        let options = description
            .options
            .iter()
            .map(|(name, option)| OptionVariants {
                name: name.clone(),
                boolean: option.is_boolean(),
                default: option
                    .values
                    .get_index_of(&option.default)
                    .unwrap_or_default(),
                values: option
                    .values
                    .iter()
                    .map(|(value, chosen)| {
                        let rules = chosen
                            .rules
                            .iter()
                            .map(|(key, r)| (key.clone(), rule(r)))
                            .collect();
                        (value.clone(), rules)
                    })
                    .collect(),
            })
            .collect();
        let compiled = Arc::new(compiled);
        let renderer = description
            .render
            .as_ref()
            .map(|r| Renderer::new(&description.name, r).map(Arc::new))
            .transpose()
            .map_err(FamilyError::Description)?;
        let mut chosen_renderers = Vec::new();
        for (o, (option_name, option)) in description.options.iter().enumerate() {
            for (v, (value, chosen)) in option.values.iter().enumerate() {
                if let Some(render) = &chosen.render {
                    let renderer = Renderer::new(&description.name, render).map_err(|e| {
                        FamilyError::Description(e.replacen(
                            "key `render.",
                            &format!("key `options.{option_name}.values.{value}.render."),
                            1,
                        ))
                    })?;
                    chosen_renderers.push((o, v, Arc::new(renderer)));
                }
            }
        }
        let family = Family {
            description,
            compiled,
            renderer,
            chosen_renderers,
            variants: Arc::new(Variants {
                options,
                built: Mutex::default(),
            }),
        };
        // The options a model implies are the family's options (CF-35).
        for (n, model) in family.description.models.iter().enumerate() {
            serde_json::from_value(Value::Object(model.options.clone()))
                .map_err(|e| e.to_string())
                .and_then(|options| match family.settings(&options) {
                    Ok(_) => Ok(()),
                    Err(FamilyError::Options(message)) => Err(message),
                    Err(other) => Err(other.to_string()),
                })
                .map_err(|e| FamilyError::Description(format!("key `models[{n}].options`: {e}")))?;
        }
        Ok(family)
    }

    /// The family compiled for `choice` (one value index per option of its own,
    /// CF-22): the default one, or one whose chosen values replace entry rules,
    /// built at its first use and kept.
    fn compiled_for(&self, choice: &[usize]) -> Arc<Compiled> {
        let options = &self.variants.options;
        let replaced: Vec<&(String, RuleId)> = options
            .iter()
            .zip(choice)
            .flat_map(|(o, &v)| o.values[v].1.iter())
            .collect();
        if replaced.is_empty() {
            return self.compiled.clone();
        }
        let mut built = match self.variants.built.lock() {
            Ok(built) => built,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some((_, compiled)) = built.iter().find(|(c, _)| c == choice) {
            return compiled.clone();
        }
        let mut compiled = (*self.compiled).clone();
        for (key, rule) in replaced {
            compiled.replace(key, *rule);
        }
        let compiled = Arc::new(compiled);
        built.push((choice.to_vec(), compiled.clone()));
        compiled
    }

    /// The family's description.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The JSON Schema (draft 2020-12) of the family's options as given in JSON:
    /// FD-3's keys with the description's defaults, and `reasoning_markers` where
    /// the family honours it (CF-4, CF-19).
    pub fn options_schema(&self) -> Value {
        let mut schema = serde_json::to_value(
            schemars::generate::SchemaSettings::draft2020_12()
                .for_deserialize()
                .into_generator()
                .into_root_schema_for::<OptionsSchema>(),
        )
        .unwrap_or(Value::Null);
        let name = &self.description.name;
        if let Some(object) = schema.as_object_mut() {
            object.insert(
                "description".into(),
                format!("The {name} options, as given in JSON (FD-3; RS-11).").into(),
            );
        }
        if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            if let Some(start) = properties.get_mut("start_in_reasoning") {
                start["default"] = self.compiled.start_in_reasoning.into();
            }
            for (name, option) in &self.description.options {
                if option.is_boolean() {
                    properties.insert(
                        name.clone(),
                        serde_json::json!({
                            "type": "boolean",
                            "description": option.description,
                            "default": option.default == "true",
                        }),
                    );
                    continue;
                }
                let values: Vec<Value> = option
                    .values
                    .iter()
                    .map(|(value, chosen)| {
                        let mut one = serde_json::json!({"type": "string", "const": value});
                        if let Some(doc) = &chosen.description {
                            one["description"] = doc.as_str().into();
                        }
                        one
                    })
                    .collect();
                properties.insert(
                    name.clone(),
                    serde_json::json!({
                        "oneOf": values,
                        "description": option.description,
                        "default": option.default,
                    }),
                );
            }
            if let Some(markers) = properties.shift_remove("reasoning_markers") {
                // Last, as the built-in families list it.
                properties.insert("reasoning_markers".into(), markers);
            }
            match &self.compiled.wrapping {
                Some(w) => {
                    if let Some(markers) = properties.get_mut("reasoning_markers") {
                        markers["default"] = serde_json::to_value(&w.default).unwrap_or_default();
                    }
                }
                None => {
                    properties.remove("reasoning_markers");
                    if let Some(defs) = schema.get_mut("$defs").and_then(Value::as_object_mut) {
                        defs.remove("Spelling");
                    }
                }
            }
        }
        schema
    }

    /// Whether the family honours the `reasoning_markers` option (CF-19).
    pub fn has_reasoning_markers(&self) -> bool {
        self.compiled.wrapping.is_some()
    }

    /// Whether the family has an option of its own called `name` (CF-22).
    pub fn has_option(&self, name: &str) -> bool {
        self.description.options.contains_key(name)
    }

    /// The options resolved against the description's defaults (CF-4, CF-19):
    /// `reasoning_markers` is refused by a family without CF-19's key, with the
    /// message serde gives an unknown key.
    fn settings(&self, options: &Options) -> Result<Settings, FamilyError> {
        let mut choice: Vec<usize> = self.variants.options.iter().map(|o| o.default).collect();
        for (key, given) in &options.family {
            let Some(at) = self.variants.options.iter().position(|o| &o.name == key) else {
                let mut expected: Vec<String> = ["start_in_reasoning", "tools"]
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect();
                if self.compiled.wrapping.is_some() {
                    expected.push("`reasoning_markers`".into());
                }
                expected.extend(
                    self.variants
                        .options
                        .iter()
                        .map(|o| format!("`{}`", o.name)),
                );
                return Err(FamilyError::Options(format!(
                    "unknown field `{key}`, expected one of {}",
                    expected.join(", ")
                )));
            };
            let option = &self.variants.options[at];
            // A boolean option is given as a JSON boolean (CF-34).
            let given_text = match given {
                Value::Bool(b) if option.boolean => Some(if *b { "true" } else { "false" }),
                Value::String(v) if !option.boolean => Some(v.as_str()),
                _ => None,
            };
            let value =
                given_text.and_then(|v| option.values.iter().position(|(name, _)| name == v));
            let Some(value) = value else {
                if option.boolean {
                    return Err(FamilyError::Options(format!(
                        "option `{key}`: invalid type {given}, expected a boolean"
                    )));
                }
                let values: Vec<String> = option
                    .values
                    .iter()
                    .map(|(v, _)| format!("`{v}`"))
                    .collect();
                return Err(FamilyError::Options(format!(
                    "option `{key}`: unknown variant {given}, expected one of {}",
                    values.join(", ")
                )));
            };
            choice[at] = value;
        }
        let spellings =
            match (&self.compiled.wrapping, &options.reasoning_markers) {
                (None, Some(_)) => return Err(FamilyError::Options(
                    "unknown field `reasoning_markers`, expected `start_in_reasoning` or `tools`"
                        .to_string(),
                )),
                (None, None) => Vec::new(),
                (Some(w), given) => given.clone().unwrap_or_else(|| w.default.clone()),
            };
        Ok(Settings {
            start_in_reasoning: options
                .start_in_reasoning
                .unwrap_or(self.compiled.start_in_reasoning),
            tools: options.tools.clone(),
            spellings,
            choice,
            tool_choice: match &options.tool_choice {
                // A family whose constrained answer keeps its markup reads it as
                // `auto` does (FD-10e).
                ToolChoice::Required | ToolChoice::Function(_)
                    if self.description.tool_choice == ConstrainedAnswer::Markup =>
                {
                    ToolChoice::Auto
                }
                given => given.clone(),
            },
        })
    }

    /// The state machine for these options, to drive with the re-entry layer.
    pub fn machine(&self, options: &Options) -> Result<CustomMachine, FamilyError> {
        let settings = self.settings(options)?;
        Ok(CustomMachine::new(
            self.compiled_for(&settings.choice),
            &settings,
        ))
    }

    /// A streaming parser for these options.
    pub fn parser(&self, options: &Options) -> Result<Parser, FamilyError> {
        Ok(Stream::new(self.machine(options)?))
    }

    /// Parses a whole document (the streaming machinery, fed once).
    pub fn parse(&self, input: &str, options: &Options) -> Result<Document, FamilyError> {
        // Folded by value, piece by piece: no text is copied into the document.
        Ok(crate::field::parse_owned(self.parser(options)?, input))
    }

    /// Whether the family renders (CF-26: its description has `render`, or an
    /// option's value chooses templates, CF-22).
    pub fn renders(&self) -> bool {
        self.renderer.is_some() || !self.chosen_renderers.is_empty()
    }

    /// The renderer for these options: the first option's chosen value that has
    /// templates (CF-22), else the description's; or the message of a family that
    /// does not render.
    fn renderer(&self, options: &Options) -> Result<&Renderer, String> {
        let settings = self.settings(options).map_err(|e| e.to_string())?;
        self.chosen_renderers
            .iter()
            .find(|(o, v, _)| settings.choice.get(*o) == Some(v))
            .map(|(_, _, r)| r)
            .or(self.renderer.as_ref())
            .map(Arc::as_ref)
            .ok_or_else(|| format!("{} does not render", self.description.name))
    }

    /// Renders JSON into the family's text (`idiolect render`, CF-26): `what` is
    /// `calls`, `results` or `turn`, `input` the JSON to render, `options` the
    /// family's options as JSON (a turn's reasoning follows `reasoning_markers`).
    pub fn render(
        &self,
        what: Option<&str>,
        input: &Value,
        options: &Value,
    ) -> Result<String, String> {
        let options: Options = if options.is_null() {
            Options::default()
        } else {
            serde_json::from_value(options.clone()).map_err(|e| e.to_string())?
        };
        let spellings = self.spellings(&options)?;
        self.renderer(&options)?
            .render(what, input, spellings.as_deref())
    }

    /// Tool calls as the family's template writes them together (CF-26), for
    /// these options (CF-22).
    pub fn render_calls(&self, calls: &[CallSpec], options: &Options) -> Result<String, String> {
        self.renderer(options)?.render_calls(calls)
    }

    /// Tool results as the family's template writes them (CF-26), for these
    /// options (CF-22).
    pub fn render_results(
        &self,
        results: &[ResultSpec],
        options: &Options,
    ) -> Result<String, String> {
        self.renderer(options)?.render_results(results)
    }

    /// A whole turn as the family's template writes it (CF-26): parsing it gives
    /// the turn back when its text and reasoning hold no markers and its calls are
    /// complete.
    pub fn render_turn(&self, doc: &Document, options: &Options) -> Result<String, String> {
        let spellings = self.spellings(options)?;
        self.renderer(options)?
            .render_turn(doc, spellings.as_deref())
    }

    /// The accepted reasoning spellings of CF-19's key (`None` without it).
    fn spellings(&self, options: &Options) -> Result<Option<Vec<Spelling>>, String> {
        let settings = self.settings(options).map_err(|e| e.to_string())?;
        Ok(self.compiled.wrapping.as_ref().map(|_| settings.spellings))
    }

    /// Parses a whole document and also returns its events.
    pub fn parse_events(
        &self,
        input: &str,
        options: &Options,
    ) -> Result<(Document, Vec<Event>), FamilyError> {
        let mut parser = self.parser(options)?;
        let mut events: Vec<Event> = parser.feed(input.as_bytes()).collect();
        events.extend(parser.finish());
        let mut folder = DocumentFolder::new(false);
        events.iter().for_each(|e| folder.push(e));
        Ok((folder.into_document(), events))
    }
}

/// The reader of a constrained answer's payload (spec/field.md FD-10c, FD-10d),
/// from offset `at` of the output: grammar/tool-choice.pest with the description
/// of `"required"`'s array of calls or of a named function's arguments, built at
/// first use; `tools` type the calls.
pub(crate) fn payload_machine(named: bool, tools: Vec<Tool>, at: usize) -> CustomMachine {
    const GRAMMAR: &str = include_str!("../../../grammar/tool-choice.pest");
    static REQUIRED: OnceLock<Family> = OnceLock::new();
    static NAMED: OnceLock<Family> = OnceLock::new();
    let (cell, description) = if named {
        (
            &NAMED,
            include_str!("../../../grammar/tool-choice-named.family.json"),
        )
    } else {
        (
            &REQUIRED,
            include_str!("../../../grammar/tool-choice-required.family.json"),
        )
    };
    let family = cell.get_or_init(|| {
        Family::new(GRAMMAR, description)
            .unwrap_or_else(|e| panic!("grammar/tool-choice.pest builds (tested): {e}"))
    });
    let settings = Settings {
        tools,
        ..Settings::default()
    };
    CustomMachine::new(family.compiled.clone(), &settings).starting_at(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Item;

    const JSON_FAMILY: &str = r#"{
      "name": "t", "include_json_grammar": true,
      "entries": {"text": "text", "arguments_end": "end", "after_call": "after"},
      "captures": {"name": "name", "reasoning_open": "open"},
      "arguments": {"encoding": "json", "object": "json_object"}
    }"#;

    #[test]
    fn rules_that_match_nothing_neither_hang_nor_lose_text() {
        let grammar = r#"
            open = { "<t>" }
            name = { ASCII_ALPHA* }
            text = _{ "<c " ~ name ~ ">" | open? }
            end = _{ "</c>"? }
            after = _{ ("<c " ~ name ~ ">")? }
        "#;
        let family = Family::new(grammar, JSON_FAMILY).expect("the family builds");
        let input = "a <c f>{}</c> b <c >{} c";
        let doc = family.parse(input, &Options::default()).unwrap();
        let text: String = doc
            .items
            .iter()
            .map(|i| match i {
                Item::Text { text, .. } | Item::Reasoning { text, .. } => text.clone(),
                Item::ToolCall { arguments, .. } => format!("[{arguments}]"),
            })
            .collect();
        assert_eq!(text, "a [{}] b [{}] c");
        let calls: Vec<&str> = doc
            .items
            .iter()
            .filter_map(|i| match i {
                Item::ToolCall { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(calls, ["f", ""]);
    }

    #[test]
    fn nesting_keys_go_together_and_only_with_parameters() {
        let grammar = include_str!("../../../grammar/qwen3-coder.pest");
        let description = include_str!("../../../grammar/qwen3-coder.family.json");
        assert!(Family::new(grammar, description).is_ok());
        let without_entry = description.replace("\"value_nested\": \"value_nested\",", "");
        let message = Family::new(grammar, &without_entry)
            .expect_err("refused")
            .to_string();
        assert!(message.contains("go together"), "{message:?}");
        let json_grammar = "open = { \"<t>\" }\nname = { \"n\" }\ntext = _{ open }\nend = _{ \"e\" }\nafter = _{ \"a\" }\n";
        let with_nesting = JSON_FAMILY.replace(
            "\"name\": \"name\"",
            "\"name\": \"name\", \"nested_open\": \"open\"",
        );
        let message = Family::new(json_grammar, &with_nesting)
            .expect_err("refused")
            .to_string();
        assert!(
            message.contains("key `captures.nested_open` does not apply"),
            "{message:?}"
        );
    }

    /// A family with named calls (`<call NAME>{json}`) and call objects, alone
    /// (`<obj>{…}`) or in a block (`<list>{…}, {…}</list>`), with an option that
    /// turns blocks off (CF-22, CF-23, CF-24).
    const BOTH_GRAMMAR: &str = r#"
        name = { ASCII_ALPHA+ }
        item = { &"{" }
        list = { "<list>" ~ json_ws ~ item? }
        text = _{ "<call " ~ name ~ ">" ~ &"{" | list | "<obj>" ~ item }
        text_flat = _{ "<call " ~ name ~ ">" ~ &"{" | "<obj>" ~ item }
        end = _{ &ANY | EOI }
        next = _{ json_ws ~ ("," ~ json_ws ~ item? | "</list>")? }
    "#;
    const BOTH_FAMILY: &str = r#"{
      "name": "both", "include_json_grammar": true,
      "entries": {"text": "text", "arguments_end": "end", "object_end": "next"},
      "captures": {"name": "name", "call_open": "item", "block_open": "list"},
      "arguments": {"encoding": "json", "object": "json_object",
        "call_object": {"id_keys": ["id"], "values": "json"}},
      "options": {"lists": {"description": "whether lists are read", "default": "on",
        "values": {"on": {}, "off": {"rules": {"entries.text": "text_flat"}}}}}
    }"#;

    fn summary(doc: &Document) -> Vec<String> {
        doc.items
            .iter()
            .map(|i| match i {
                Item::Text { text, .. } => format!("text {text}"),
                Item::Reasoning { text, .. } => format!("reasoning {text}"),
                Item::ToolCall {
                    id,
                    name,
                    arguments,
                    complete,
                    ..
                } => format!("call {name} {id:?} {arguments} {complete}"),
            })
            .collect()
    }

    #[test]
    fn named_calls_and_blocks_of_call_objects_in_one_family() {
        let family = Family::new(BOTH_GRAMMAR, BOTH_FAMILY).expect("the family builds");
        let input =
            "a <call f>{\"x\": 1} b <list>{\"arguments\": {}, \"name\": \"g\", \"id\": \"7\"}, \
                     {\"arguments\": {}}, {\"name\": \"h\"}</list> c <obj>{\"arguments\": {}} d \
                     <list>{\"name\": \"s\", \"arguments\": \"{}\"}, {\"x\": tru}</list>";
        let doc = family.parse(input, &Options::default()).unwrap();
        assert_eq!(
            summary(&doc),
            [
                "text a ",
                "call f None {\"x\": 1} true",
                "text  b ",
                "call g Some(\"7\") {} true",
                "call h None {} true",
                "text  c <obj>{\"arguments\": {}} d ",
                "call s None \"{}\" false",
                "text }</list>",
            ]
        );
        // The option's other value replaces the text rule: no blocks.
        let flat: Options = serde_json::from_value(serde_json::json!({"lists": "off"})).unwrap();
        let doc = family
            .parse("<list>{\"name\": \"g\"}</list>", &flat)
            .unwrap();
        assert_eq!(summary(&doc), ["text <list>{\"name\": \"g\"}</list>"]);
    }

    #[test]
    fn a_call_whose_id_is_undecided_starts_where_the_object_stops() {
        let family = Family::new(BOTH_GRAMMAR, BOTH_FAMILY).expect("the family builds");
        let cases = [
            (
                "<list>{\"name\": \"g\", \"arguments\": {\"a\": 1",
                "call g None {\"a\": 1 false",
            ),
            (
                "<list>{\"name\": \"g\", \"arguments\": {\"a\": x}",
                "call g None {\"a\":  false",
            ),
            (
                "<list>{\"name\": \"\", \"name\": \"k\"}",
                "call k None {} true",
            ),
        ];
        for (input, call) in cases {
            let doc = family.parse(input, &Options::default()).unwrap();
            assert_eq!(summary(&doc)[0], call, "{input:?}");
        }
    }

    #[test]
    fn option_values_are_checked_when_the_family_reads_its_options() {
        let family = Family::new(BOTH_GRAMMAR, BOTH_FAMILY).expect("the family builds");
        let cases = [
            (
                serde_json::json!({"lists": "sometimes"}),
                "option `lists`: unknown variant \"sometimes\", expected one of `on`, `off`",
            ),
            (
                serde_json::json!({"lists": 1}),
                "option `lists`: unknown variant 1",
            ),
            (
                serde_json::json!({"nope": "on"}),
                "unknown field `nope`, expected one of `start_in_reasoning`, `tools`, `lists`",
            ),
        ];
        for (options, expected) in cases {
            let options: Options = serde_json::from_value(options).unwrap();
            let message = family.machine(&options).expect_err("refused").to_string();
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
        }
        let schema = family.options_schema();
        assert_eq!(schema["properties"]["lists"]["default"], "on");
        assert_eq!(schema["properties"]["lists"]["oneOf"][1]["const"], "off");
    }

    #[test]
    fn an_option_of_true_and_false_is_given_as_a_boolean() {
        let family = crate::field::families::family("llama3-json").expect("built in");
        let schema = family.options_schema();
        assert_eq!(schema["properties"]["bare_json_calls"]["type"], "boolean");
        assert_eq!(schema["properties"]["bare_json_calls"]["default"], true);
        let with = |value: Value| -> Options {
            serde_json::from_value(serde_json::json!({ "bare_json_calls": value })).unwrap()
        };
        let text = "{\"name\": \"f\", \"parameters\": {}}";
        let off = family.parse(text, &with(false.into())).expect("a boolean");
        assert!(matches!(&off.items[..], [Item::Text { .. }]), "{off:?}");
        let on = family.parse(text, &with(true.into())).expect("a boolean");
        assert!(matches!(&on.items[..], [Item::ToolCall { .. }]), "{on:?}");
        for refused in [Value::from("false"), Value::from(0)] {
            let message = family.machine(&with(refused.clone())).expect_err("refused");
            assert_eq!(
                message.to_string(),
                format!(
                    "family options: option `bare_json_calls`: invalid type {refused}, expected a boolean"
                )
            );
        }
    }

    #[test]
    fn misused_options_and_call_objects_are_refused_in_one_line() {
        let option = |rules: &str| {
            BOTH_FAMILY.replace(
                r#""off": {"rules": {"entries.text": "text_flat"}}"#,
                &format!(r#""off": {{"rules": {rules}}}"#),
            )
        };
        let cases = [
            (option(r#"{"captures.name": "name"}"#), "key `options.lists.values.off.rules.captures.name`: a value replaces entry rules only"),
            (option(r#"{"entries.skip": "end"}"#), "key `options.lists.values.off.rules.entries.skip`: the description does not set `entries.skip`"),
            (option(r#"{"entries.text": "nothing"}"#), "key `options.lists.values.off.rules.entries.text` names rule `nothing`"),
            (BOTH_FAMILY.replace(r#""default": "on""#, r#""default": "maybe""#), "key `options.lists.default`: `maybe` is not one of its values"),
            (BOTH_FAMILY.replace(r#""lists": {"#, r#""tools": {"#), "key `options.tools`: option `tools` is every field family's"),
            (BOTH_FAMILY.replace(r#""call_open": "item", "#, ""), "missing key `captures.call_open` (required with arguments encoding `json`)"),
            (BOTH_FAMILY.replace(r#""call_object": {"id_keys": ["id"], "values": "json"}"#, r#""special_marker": "end""#), "key `captures.call_open` does not apply to arguments encoding `json`"),
            (BOTH_FAMILY.replace(r#""values": "json""#, r#""values": "strict""#), "unknown variant `strict`"),
        ];
        for (description, expected) in cases {
            let message = Family::new(BOTH_GRAMMAR, &description)
                .expect_err("refused")
                .to_string();
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
            assert!(!message.contains('\n'), "{message:?} is one line");
        }
    }

    #[test]
    fn every_error_is_one_line_naming_the_key_or_rule() {
        let grammar = "open = { \"<t>\" }\nname = { \"n\" }\ntext = _{ open }\nend = _{ \"e\" }\nafter = _{ \"a\" }\n";
        assert!(Family::new(grammar, JSON_FAMILY).is_ok());
        let cases = [
            (grammar, "{".to_string(), "family description: EOF"),
            (
                grammar,
                JSON_FAMILY.replace("\"after\"}", "\"after\", \"nope\": \"x\"}"),
                "unknown field `nope`",
            ),
            (
                grammar,
                JSON_FAMILY.replace("\"name\": \"name\"", "\"name\": \"missing\""),
                "key `captures.name` names rule `missing`",
            ),
            (
                grammar,
                JSON_FAMILY.replace("\"arguments_end\": \"end\", ", ""),
                "missing key `entries.arguments_end`",
            ),
            (
                "text = _{ PEEK }\n",
                JSON_FAMILY.to_string(),
                "family grammar: rule `text`",
            ),
            (
                "text = { \"x\" \n",
                JSON_FAMILY.to_string(),
                "family grammar: pest refused it: at ",
            ),
        ];
        for (grammar, description, expected) in cases {
            let message = Family::new(grammar, &description)
                .expect_err("refused")
                .to_string();
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
            assert!(!message.contains('\n'), "{message:?} is one line");
        }
    }
}
