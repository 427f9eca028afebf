//! The mistral family: `[TOOL_CALLS]` followed, by tokenizer version, by a JSON array
//! of `{"name", "arguments", "id"?}` (v3, v7), `NAME[CALL_ID]ID[ARGS]{json}` (v11) or
//! `NAME[ARGS]{json}` (v13); reasoning in `[THINK]…[/THINK]` (Magistral). Rules:
//! spec/mistral.md, spec/field-json-arguments.md.
//!
//! The family is grammar/mistral.pest and grammar/mistral.family.json, run by the
//! engine ([`crate::field::families::family`]`("mistral")`); this module renders it.
//!
//! ```
//! use idiolect::field::{families, Item};
//! let mistral = families::family("mistral").expect("a built-in family");
//! let text = "[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"city\": \"Paris\"}";
//! let doc = mistral.parse(text, &Default::default()).unwrap();
//! assert!(matches!(&doc.items[0], Item::ToolCall { id: Some(id), .. } if id == "a1b2c3d4e"));
//! ```

mod options;
mod render;

pub use options::{Options, TokenizerVersion};
pub use render::{render_calls, render_results, render_turn};

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
