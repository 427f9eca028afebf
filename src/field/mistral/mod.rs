//! The mistral family: `[TOOL_CALLS]` followed, by tokenizer version, by a JSON array
//! of `{"name", "arguments", "id"?}` (v3, v7), `NAME[CALL_ID]ID[ARGS]{json}` (v11) or
//! `NAME[ARGS]{json}` (v13); reasoning in `[THINK]…[/THINK]` (Magistral). Rules:
//! spec/mistral.md, spec/field-json-arguments.md.
//!
//! ```
//! use idiolect::field::{mistral, Item};
//! let text = "[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"city\": \"Paris\"}";
//! let doc = mistral::parse(text, &mistral::Options::default());
//! assert!(matches!(&doc.items[0], Item::ToolCall { id: Some(id), .. } if id == "a1b2c3d4e"));
//! ```

mod machine;
mod options;
mod render;

pub use machine::MistralMachine;
pub use options::{Options, TokenizerVersion};
pub use render::{render_calls, render_results, render_turn};

use crate::field::{Document, DocumentFolder, Event};

family_glue!(MistralMachine, "mistral");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
