//! The qwen3-coder family (Qwen3-Coder, Qwen3.5 and later, Nemotron-3):
//! `<tool_call>`, `<function=NAME>`, per argument `<parameter=KEY>` raw value
//! `</parameter>`, then `</function>`, `</tool_call>`; reasoning in `<think>`.
//! Values are typed by the request's tool schema (FD-6). Rules:
//! spec/qwen3-coder.md.
//!
//! ```
//! use idiolect::field::{qwen3_coder, Item};
//! let text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n\
//!             </parameter>\n</function>\n</tool_call>";
//! let doc = qwen3_coder::parse(text, &qwen3_coder::Options::default());
//! assert!(matches!(&doc.items[0], Item::ToolCall { arguments, complete: true, .. }
//!     if arguments == "{\"city\":\"Paris\"}"));
//! ```

mod machine;
mod render;

pub use machine::Qwen3CoderMachine;
pub use render::{render_calls, render_results, render_turn};

use crate::field::reasoning::spelling;
use crate::field::{Document, DocumentFolder, Event};

family_options!("qwen3-coder", "`[\"think\"]`", spelling::family_default());

family_glue!(Qwen3CoderMachine, "qwen3-coder");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
