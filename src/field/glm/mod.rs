//! The glm family (GLM-4.5, GLM-4.6, GLM-4.7, GLM-5): `<tool_call>NAME`, pairs
//! `<arg_key>K</arg_key>` `<arg_value>V</arg_value>`, `</tool_call>`, with newlines
//! between them (4.5/4.6) or without (4.7/5); values raw (strings, whitespace
//! significant) or JSON, typed by the request's tool schema (FD-6); reasoning in
//! `<think>…</think>`. Rules: spec/glm.md.
//!
//! The family is grammar/glm.pest and grammar/glm.family.json, run by the
//! engine ([`crate::field::families::family`]`("glm")`); this module renders it.

mod render;

pub use render::{render_calls, render_results, render_turn};

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
