//! The minimax-m2 family (MiniMax-M2): a call block `<minimax:tool_call>` holding
//! `<invoke name="N">` elements with `<parameter name="K">V</parameter>` children,
//! values raw and typed by the request's tool schema (FD-6), argument order kept;
//! reasoning in `<think>…</think>`, and the output starts inside it by default.
//! Rules: spec/minimax-m2.md.
//!
//! ```
//! use idiolect::field::{minimax_m2, Item};
//! let text = "Paris is in France.</think><minimax:tool_call>\n<invoke name=\"get_weather\">\n\
//!             <parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>";
//! let doc = minimax_m2::parse(text, &minimax_m2::Options::default());
//! assert!(matches!(&doc.items[0], Item::Reasoning { closed: true, .. }));
//! assert!(matches!(&doc.items[1], Item::ToolCall { arguments, complete: true, .. }
//!     if arguments == "{\"city\":\"Paris\"}"));
//! ```

mod machine;
mod render;

pub use machine::MinimaxM2Machine;
pub use render::{render_calls, render_results, render_turn};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::field::reasoning::spelling::{self, Spelling};
use crate::field::{Document, DocumentFolder, Event, Tool};

/// The minimax-m2 options (MM-1): the two keys of every field family, with
/// `start_in_reasoning` true by default, and `reasoning_markers` (MM-16).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Whether the output starts inside reasoning. Default `true`: MiniMax-M2's
    /// chat template ends every generation prompt with `<think>` (MM-1).
    pub start_in_reasoning: bool,
    /// The tools of the request, with their JSON Schemas (they type the values).
    pub tools: Vec<Tool>,
    /// The accepted reasoning wrappers (RS-11, MM-16): `think`, `bracket`,
    /// `triangle`; empty for none (default `["think"]`).
    pub reasoning_markers: Vec<Spelling>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            start_in_reasoning: true,
            tools: Vec::new(),
            reasoning_markers: spelling::family_default(),
        }
    }
}

family_glue!(MinimaxM2Machine, "minimax-m2");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
