//! The `reasoning` dialect: models that reason but call no tools, in any of the
//! three wrapper spellings `<think>…</think>`, `[THINK]…[/THINK]` and
//! `◁think▷…◁/think▷`; and those spellings as the `reasoning_markers` option
//! some field families honour. Rules: spec/reasoning.md.
//!
//! The dialect is grammar/reasoning-dialect.pest and grammar/reasoning.family.json,
//! run by the engine ([`crate::field::families::family`]`("reasoning")`); this
//! module holds the wrappers every family shares and renders the dialect.
//!
//! ```
//! use idiolect::field::{families, Item};
//! let reasoning = families::family("reasoning").expect("a built-in family");
//! let doc = reasoning.parse("[THINK]Two and two.[/THINK]Four.", &Default::default()).unwrap();
//! assert!(matches!(&doc.items[0], Item::Reasoning { text, closed: true, .. } if text == "Two and two."));
//! ```

pub mod family;
pub mod spelling;

pub use spelling::Spelling;
