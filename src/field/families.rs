//! The one table of the field families. A family run by the engine
//! (spec/custom-family.md) is its grammar `grammar/<name>.pest` and its description
//! `grammar/<name>.family.json`, compiled once per process from the same files a
//! user passes to `--grammar`/`--family`; the registry, the CLI's `dialects`, the
//! Python package and the benchmarks read this table, so the order and the set of
//! families are said once.
//!
//! ```
//! use idiolect::field::{families, Item};
//! let qwen = families::family("qwen3-coder").expect("a built-in family");
//! let text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n\
//!             </parameter>\n</function>\n</tool_call>";
//! let doc = qwen.parse(text, &Default::default()).unwrap();
//! assert!(matches!(&doc.items[0], Item::ToolCall { arguments, complete: true, .. }
//!     if arguments == "{\"city\":\"Paris\"}"));
//! ```

use std::sync::OnceLock;

use serde_json::Value;

use super::custom::{Description, Family};

/// Renders JSON into a family's text (`idiolect render`) where its description
/// cannot say how (CF-26): `what` selects among its renderings.
pub type RenderFn =
    fn(what: Option<&str>, input: &Value, options: &Value) -> Result<String, String>;

/// One field family of the table: a grammar and a description, run by the engine.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The family's name: its dialect name, its corpus folder, its files' stem.
    pub name: &'static str,
    /// The stem of its grammar's file, `grammar/<stem>.pest`: the family's name, or
    /// the name of a grammar several descriptions share (deepseek).
    pub grammar_file: &'static str,
    /// The text of `grammar/<grammar_file>.pest`.
    pub grammar: &'static str,
    /// The text of `grammar/<name>.family.json`.
    pub description: &'static str,
    /// A renderer of its own in Rust, for an engine family whose rendering its
    /// description cannot say (mistral's varies with `tokenizer_version`, MI-17).
    pub render: Option<RenderFn>,
}

/// An engine family's entry: its files in grammar/ by name (the grammar's by the
/// stem given after the name, where it is shared).
macro_rules! engine {
    ($name:literal) => {
        engine!($name, $name, None)
    };
    ($name:literal, render = $render:expr) => {
        engine!($name, $name, Some($render))
    };
    ($name:literal, $grammar:literal) => {
        engine!($name, $grammar, None)
    };
    ($name:literal, $grammar:literal, $render:expr) => {
        Entry {
            name: $name,
            grammar_file: $grammar,
            grammar: include_str!(concat!("../../grammar/", $grammar, ".pest")),
            description: include_str!(concat!("../../grammar/", $name, ".family.json")),
            render: $render,
        }
    };
}

/// Every field family, in the order the registry lists them.
pub const TABLE: &[Entry] = &[
    engine!("hermes"),
    engine!("qwen3-coder"),
    engine!("deepseek-v3", "deepseek"),
    engine!("deepseek-v3.1", "deepseek"),
    engine!("harmony"),
    engine!("mistral"),
    engine!("llama3-json"),
    engine!("pythonic", render = super::pythonic::render_json),
    engine!("reasoning", "reasoning-dialect"),
    engine!("kimi-k2"),
    engine!("minimax-m2"),
    engine!("glm"),
    engine!("seed-oss"),
    engine!("deepseek-dsml"),
    engine!("gigachat-gcml"),
    engine!("step3"),
    engine!("hunyuan"),
    engine!("hunyuan-a13b"),
    engine!("kimi-k3"),
    engine!("gemma4"),
    engine!("function-gemma"),
    engine!("granite"),
    engine!("cohere"),
    engine!("jamba", "hunyuan-a13b"),
    engine!("internlm"),
    engine!("nemotron"),
    engine!("apertus"),
];

/// The names of the field families, in the table's order.
pub fn names() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|e| e.name)
}

/// Whether `name` is a field family.
pub fn is_family(name: &str) -> bool {
    TABLE.iter().any(|e| e.name == name)
}

/// The description of the family called `name`, read at first use from its file
/// without compiling its grammar (`None` for a name that is not a family of the
/// table): what the registry lists before any family is built.
pub fn description(name: &str) -> Option<&'static Description> {
    static READ: [OnceLock<Description>; TABLE.len()] = [const { OnceLock::new() }; TABLE.len()];
    let index = TABLE.iter().position(|e| e.name == name)?;
    let description = TABLE[index].description;
    Some(READ[index].get_or_init(|| {
        serde_json::from_str(description)
            .unwrap_or_else(|e| panic!("grammar/{name}.family.json reads (tested): {e}"))
    }))
}

/// What the model table says of a model name (CF-35): the family that reads its
/// output and the options its chat template implies.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelFamily {
    /// The family's name, a dialect of the registry.
    pub family: &'static str,
    /// The pattern of the family's description that matched.
    pub pattern: &'static str,
    /// The family's options the model's template implies (may be empty).
    pub options: &'static serde_json::Map<String, Value>,
    /// What the options cannot say, where the description says it.
    pub note: Option<&'static str>,
}

/// The family of the model called `name`, as servers and hubs spell it
/// (`Qwen/Qwen3-Coder-30B-A3B-Instruct`), from the `models` of the families'
/// descriptions (CF-35); `None` when no pattern matches: the model is not known.
///
/// ```
/// let found = idiolect::field::families::for_model("deepseek-ai/DeepSeek-R1-0528").unwrap();
/// assert_eq!(found.family, "deepseek-v3");
/// assert_eq!(found.options["start_in_reasoning"], true);
/// assert!(idiolect::field::families::for_model("my-own-model").is_none());
/// ```
pub fn for_model(name: &str) -> Option<ModelFamily> {
    let lowered = name.trim().to_lowercase();
    let last = lowered.rsplit('/').next().unwrap_or_default();
    let mut best: Option<(usize, ModelFamily)> = None;
    for entry in TABLE {
        let Some(described) = description(entry.name) else {
            continue;
        };
        for model in described.models.iter().filter(|m| m.matches(last)) {
            if best
                .as_ref()
                .is_some_and(|(s, _)| *s >= model.specificity())
            {
                continue;
            }
            let found = ModelFamily {
                family: entry.name,
                pattern: &model.name,
                options: &model.options,
                note: model.note.as_deref(),
            };
            best = Some((model.specificity(), found));
        }
    }
    best.map(|(_, found)| found)
}

/// The family called `name`, built at first use from its files (`None` for a name
/// that is not a family of the table).
pub fn family(name: &str) -> Option<&'static Family> {
    static BUILT: [OnceLock<Family>; TABLE.len()] = [const { OnceLock::new() }; TABLE.len()];
    let index = TABLE.iter().position(|e| e.name == name)?;
    let Entry {
        grammar,
        description,
        ..
    } = TABLE[index];
    Some(BUILT[index].get_or_init(|| {
        Family::new(grammar, description).unwrap_or_else(|e| {
            panic!("grammar/{name}.pest and grammar/{name}.family.json build (tested): {e}")
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every family builds from its files, and its description carries its name
    /// and a summary (the registry's one line).
    #[test]
    fn every_family_builds_and_names_itself() {
        for entry in TABLE {
            let family = family(entry.name).expect("a family of the table");
            assert_eq!(family.description().name, entry.name);
            assert!(family.description().summary.is_some(), "{}", entry.name);
        }
    }
}
