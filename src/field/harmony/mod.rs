//! The harmony family (gpt-oss): messages `<|start|>ROLE<|channel|>CHANNEL<|message|>…`
//! ended by `<|end|>`, `<|call|>` or `<|return|>`; the analysis channel is reasoning,
//! a recipient (`to=functions.NAME`) makes the message a tool call whose content is
//! the JSON arguments. Rules: spec/harmony.md, spec/field-json-arguments.md.
//!
//! ```
//! use idiolect::field::{harmony, Item};
//! let text = "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant\
//!             <|channel|>commentary to=functions.get_weather <|constrain|>json\
//!             <|message|>{\"city\":\"Paris\"}";
//! let doc = harmony::parse(text, &harmony::Options::default());
//! assert!(matches!(&doc.items[0], Item::Reasoning { closed: true, .. }));
//! assert!(matches!(&doc.items[1], Item::ToolCall { name, complete: true, .. } if name == "get_weather"));
//! ```

mod machine;
mod render;

pub use machine::HarmonyMachine;
pub use render::{render_calls, render_results, render_turn};

use crate::field::{Document, DocumentFolder, Event};

family_options!(
    "harmony",
    "`[]`: the analysis channel is harmony's reasoning, HA-19",
    Vec::new()
);

family_glue!(HarmonyMachine, "harmony");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
