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

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::field::reasoning::spelling::{self, Spelling};
use crate::field::{Document, DocumentFolder, Event, Tool};

/// The hermes options, as given in JSON (spec/hermes.md HE-1; FD-3, RS-11).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Whether the output starts inside reasoning (the prompt ended with `<think>`).
    pub start_in_reasoning: bool,
    /// The tools of the request (accepted; JSON arguments need no schema).
    pub tools: Vec<Tool>,
    /// The accepted reasoning wrappers (RS-11): `think` (default), `bracket`,
    /// `triangle`; empty for none.
    pub reasoning_markers: Vec<Spelling>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            start_in_reasoning: false,
            tools: Vec::new(),
            reasoning_markers: spelling::family_default(),
        }
    }
}

family_glue!(HermesMachine, "hermes");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
