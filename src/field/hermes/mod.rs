//! The hermes family (Hermes 2 Pro/3, Qwen2.5, QwQ, Qwen3 hybrid and 2507):
//! `<tool_call>` + `{"name": …, "arguments": {…}}` + `</tool_call>`, reasoning in
//! `<think>…</think>`. Rules: spec/hermes.md.
//!
//! ```
//! use idiolect::field::{hermes, Item};
//! let text = "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \
//!             \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
//! let doc = hermes::parse(text, &hermes::Options::default());
//! assert!(matches!(&doc.items[1], Item::ToolCall { arguments, .. } if arguments == "{\"city\": \"Paris\"}"));
//! ```

mod machine;
mod render;

pub use machine::HermesMachine;
pub use render::{render_calls, render_results, render_turn};

use crate::field::reasoning::spelling;
use crate::field::{Document, DocumentFolder, Event};

family_options!("hermes", "`[\"think\"]`", spelling::family_default());

family_glue!(HermesMachine, "hermes");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
