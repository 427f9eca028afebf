//! idiolect turns the dialects language models write into structured JSON, as it
//! streams.
//!
//! Each dialect is a pest grammar plus a small state machine; the shared
//! [`reentry`] layer feeds it chunk by chunk and resumes at safe boundaries, so
//! events come out the moment they are decided. Folding a dialect's events gives
//! its document, which is exactly what parsing the whole input gives.
//!
//! - [`sections`]: `<think>…</think><create-file path="a.ts">…</create-file>`.
//! - [`anthropic_xml`]: prose, `<thinking>`, `<function_calls>` and `<function_results>`.
//! - [`kindaxml`]: `We shipped <cite id=1>`, `<claim>…</claim>`, `<todo/>`: annotations.
//! - [`transcript`]: prompts such as `\n\nHuman: …\n\nAssistant:`, their stop
//!   sequences, and continuations cut at the first stop.
//! - [`field`]: the tool-call and reasoning formats of open-weight models
//!   (hermes, qwen3-coder, …), one chat-turn model and OpenAI-style deltas.
//! - [`plurnk`]: `<<EDIT[tags](known://plan)<2>:body:EDIT` agent statements between prose.
//!
//! The [`session`] module drives any dialect by name with JSON options; the CLI
//! and the conformance runner are built on it.
#![warn(missing_docs)]

pub mod anthropic_xml;
pub mod attrs;
pub mod conformance;
pub mod field;
pub mod kindaxml;
pub mod machine;
pub mod plurnk;
pub mod reentry;
pub mod sections;
pub mod session;
pub mod span;
pub mod transcript;

pub use reentry::{Machine, Stream, Verdict};
pub use session::{dialect, dialects, Dialect, Session};
pub use span::Span;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
