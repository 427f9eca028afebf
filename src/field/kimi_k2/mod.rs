//! The kimi-k2 family (Kimi-K2 Instruct, 0905, Thinking): a section
//! `<|tool_calls_section_begin|>…<|tool_calls_section_end|>` (or the singular
//! `tool_call_section` spelling) of calls
//! `<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{json}<|tool_call_end|>`;
//! the written id is the call id; reasoning in `<think>…</think>`, out of which a
//! tool section breaks (reasoning resumes after it, as in every family: FD-2). Rules: spec/kimi-k2.md,
//! spec/field-json-arguments.md.
//!
//! The family is grammar/kimi-k2.pest and grammar/kimi-k2.family.json, run by the
//! engine ([`crate::field::families::family`]`("kimi-k2")`); this module renders it.

mod render;

pub use render::{render_calls, render_results, render_turn};

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
