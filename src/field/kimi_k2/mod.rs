//! The kimi-k2 family (Kimi-K2 Instruct, 0905, Thinking): a section
//! `<|tool_calls_section_begin|>…<|tool_calls_section_end|>` (or the singular
//! `tool_call_section` spelling) of calls
//! `<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>`;
//! the written id is the call id; reasoning in `<think>…</think>`, out of which a
//! tool section breaks (reasoning resumes after it, as in every family: FD-2). Rules: spec/kimi-k2.md,
//! spec/field-json-arguments.md.
//!
//! ```
//! use idiolect::field::{kimi_k2, Item};
//! let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0\
//!             <|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>\
//!             <|tool_calls_section_end|>";
//! let doc = kimi_k2::parse(text, &kimi_k2::Options::default());
//! assert!(matches!(&doc.items[0], Item::ToolCall { id: Some(id), name, complete: true, .. }
//!     if id == "functions.get_weather:0" && name == "get_weather"));
//! ```

mod machine;
mod render;

pub use machine::KimiK2Machine;
pub use render::{render_calls, render_results, render_turn};

use crate::field::reasoning::spelling;
use crate::field::{Document, DocumentFolder, Event};

family_options!("kimi-k2", "`[\"think\"]`", spelling::family_default());

family_glue!(KimiK2Machine, "kimi-k2");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
