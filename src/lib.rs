//! idiolect turns the dialects language models write into structured JSON, as it
//! streams.
//!
//! Each dialect is a pest grammar plus a small state machine; the shared
//! re-entry layer (the machinery behind [`Stream`]) feeds it chunk by chunk and resumes at safe boundaries, so
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
//! Every dialect has the same shape: `Options`, `Parser` (`Parser::with_options`,
//! then `feed(&[u8])` and `finish()`), `Event`, `Document`, `parse(&str, &Options)`,
//! and `render` where the dialect renders. The traits behind that shape live in
//! [`fold`], beside the re-entry layer that drives every [`Machine`].
//!
//! The [`session`] module is the registry above the dialects: it drives any
//! dialect by name with JSON options and writes typed events and documents as
//! JSON; the CLI is built on it. The conformance harness is behind the
//! `conformance` feature (on with the default `cli` feature).
//!
//! The [`machine`] module compiles the grammars into programs for a resumable parsing
//! machine, which stops when the bytes run out and continues with the next chunk.
#![warn(missing_docs)]

pub mod anthropic_xml;
pub mod attrs;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod field;
pub mod fold;
pub mod kindaxml;
pub mod machine;
pub mod plurnk;
mod reentry;
pub mod sections;
pub mod session;
pub mod span;
pub mod transcript;

pub use fold::{DialectMachine, Fold, Layout};
pub use reentry::{Machine, Stream};
pub use session::{dialect, dialects, Dialect, Session};
pub use span::Span;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
