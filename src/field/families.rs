//! The one table of the field families. A family run by the engine
//! (spec/custom-family.md) is its grammar `grammar/<name>.pest` and its description
//! `grammar/<name>.family.json`, compiled once per process from the same files a
//! user passes to `--grammar`/`--family`; the registry, the CLI's `dialects`, the
//! Python package and the benchmarks read this table. The families whose state
//! machine is still their own are listed here too, by name, so that the order and
//! the set of families are said once.
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

use super::custom::Family;

/// Renders JSON into a family's text (`idiolect render`): `what` selects among
/// its renderings (`calls`, `results`, `turn`).
pub type RenderFn =
    fn(what: Option<&str>, input: &Value, options: &Value) -> Result<String, String>;

/// How a family is defined.
#[derive(Clone, Copy, Debug)]
pub enum Definition {
    /// A grammar and a description, run by the engine.
    Engine {
        /// The text of `grammar/<name>.pest`.
        grammar: &'static str,
        /// The text of `grammar/<name>.family.json`.
        description: &'static str,
    },
    /// A family whose state machine is still its own (src/field/<name>): the
    /// registry's entry of that name.
    Machine,
}

/// One field family of the table.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The family's name: its dialect name, its corpus folder, its files' stem.
    pub name: &'static str,
    /// How it is defined.
    pub definition: Definition,
    /// How `idiolect render` writes it, where it renders.
    pub render: Option<RenderFn>,
}

/// An engine family's entry: its files in grammar/ by name.
macro_rules! engine {
    ($name:literal, $render:expr) => {
        Entry {
            name: $name,
            definition: Definition::Engine {
                grammar: include_str!(concat!("../../grammar/", $name, ".pest")),
                description: include_str!(concat!("../../grammar/", $name, ".family.json")),
            },
            render: $render,
        }
    };
}

/// A family with a state machine of its own.
macro_rules! machine {
    ($name:literal) => {
        Entry {
            name: $name,
            definition: Definition::Machine,
            render: None,
        }
    };
}

/// Every field family, in the order the registry lists them.
pub const TABLE: &[Entry] = &[
    engine!("hermes", Some(super::hermes::render_json)),
    engine!("qwen3-coder", Some(super::qwen3_coder::render_json)),
    machine!("deepseek-v3"),
    machine!("deepseek-v3.1"),
    machine!("harmony"),
    machine!("mistral"),
    machine!("llama3-json"),
    machine!("pythonic"),
    machine!("reasoning"),
    engine!("kimi-k2", Some(super::kimi_k2::render_json)),
    engine!("minimax-m2", Some(super::minimax_m2::render_json)),
    engine!("glm", Some(super::glm::render_json)),
    engine!("seed-oss", None),
    engine!("deepseek-dsml", None),
    engine!("gigachat-gcml", None),
];

/// The names of the field families, in the table's order.
pub fn names() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|e| e.name)
}

/// Whether `name` is a field family.
pub fn is_family(name: &str) -> bool {
    TABLE.iter().any(|e| e.name == name)
}

/// The engine family called `name`, built at first use from its files (`None` for
/// a name that is not an engine family of the table).
pub fn family(name: &str) -> Option<&'static Family> {
    static BUILT: [OnceLock<Family>; TABLE.len()] = [const { OnceLock::new() }; TABLE.len()];
    let index = TABLE.iter().position(|e| e.name == name)?;
    let Definition::Engine {
        grammar,
        description,
    } = TABLE[index].definition
    else {
        return None;
    };
    Some(BUILT[index].get_or_init(|| {
        Family::new(grammar, description).unwrap_or_else(|e| {
            panic!("grammar/{name}.pest and grammar/{name}.family.json build (tested): {e}")
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every engine family builds from its files, and its description carries its
    /// name and a summary (the registry's one line).
    #[test]
    fn every_engine_family_builds_and_names_itself() {
        for entry in TABLE {
            if let Definition::Engine { .. } = entry.definition {
                let family = family(entry.name).expect("an engine family");
                assert_eq!(family.description().name, entry.name);
                assert!(family.description().summary.is_some(), "{}", entry.name);
            }
        }
    }
}
