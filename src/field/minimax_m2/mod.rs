//! The minimax-m2 family (MiniMax-M2): a call block `<minimax:tool_call>` holding
//! `<invoke name="N">` elements with `<parameter name="K">V</parameter>` children,
//! values raw and typed by the request's tool schema (FD-6), argument order kept;
//! reasoning in `<think>…</think>`, and the output starts inside it by default.
//! Rules: spec/minimax-m2.md.
//!
//! The family is grammar/minimax-m2.pest and grammar/minimax-m2.family.json, run by the
//! engine ([`crate::field::families::family`]`("minimax-m2")`); this module renders it.

mod render;

pub use render::{render_calls, render_results, render_turn};

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
