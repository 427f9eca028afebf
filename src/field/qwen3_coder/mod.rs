//! The qwen3-coder family (Qwen3-Coder, Qwen3.5 and later, Nemotron-3):
//! `<tool_call>`, `<function=NAME>`, per argument `<parameter=KEY>` raw value
//! `</parameter>`, then `</function>`, `</tool_call>`; reasoning in `<think>`.
//! Values are typed by the request's tool schema (FD-6). Rules:
//! spec/qwen3-coder.md.
//!
//! The family is grammar/qwen3-coder.pest and grammar/qwen3-coder.family.json, run by the
//! engine ([`crate::field::families::family`]`("qwen3-coder")`); this module renders it.

mod render;

pub use render::{render_calls, render_results, render_turn};

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
