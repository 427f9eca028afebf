//! The hermes family (Hermes 2 Pro/3, Qwen2.5, QwQ, Qwen3 hybrid and 2507):
//! `<tool_call>` + `{"name": …, "arguments": {…}}` + `</tool_call>`, reasoning in
//! `<think>…</think>`. Rules: spec/hermes.md.
//!
//! The family is grammar/hermes.pest and grammar/hermes.family.json, run by the
//! engine ([`crate::field::families::family`]`("hermes")`); this module renders it.

mod render;

pub use render::{render_calls, render_results, render_turn};

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
