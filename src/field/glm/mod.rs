//! The glm family (GLM-4.5, GLM-4.6, GLM-4.7, GLM-5): `<tool_call>NAME`, pairs
//! `<arg_key>K</arg_key>` `<arg_value>V</arg_value>`, `</tool_call>`, with newlines
//! between them (4.5/4.6) or without (4.7/5); values raw (strings, whitespace
//! significant) or JSON, typed by the request's tool schema (FD-6); reasoning in
//! `<think>…</think>`. Rules: spec/glm.md.
//!
//! ```
//! use idiolect::field::{glm, Item};
//! let text = "<tool_call>get_weather\n<arg_key>city</arg_key>\n\
//!             <arg_value>Paris</arg_value>\n</tool_call>";
//! let doc = glm::parse(text, &glm::Options::default());
//! assert!(matches!(&doc.items[0], Item::ToolCall { arguments, complete: true, .. }
//!     if arguments == "{\"city\":\"Paris\"}"));
//! ```

mod machine;
mod render;

pub use machine::GlmMachine;
pub use render::{render_calls, render_results, render_turn};

use crate::field::reasoning::spelling;
use crate::field::{Document, DocumentFolder, Event};

family_options!("glm", "`[\"think\"]`", spelling::family_default());

family_glue!(GlmMachine, "glm");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
