//! The DeepSeek families: `deepseek-v3` (DeepSeek-V3, V3-0324, R1-0528 and the R1
//! distillations: a type word, a name and a fenced JSON object per call) and
//! `deepseek-v3.1` (V3.1, V3.2-Exp: name and JSON object only), both inside
//! `<｜tool▁calls▁begin｜>…<｜tool▁calls▁end｜>` with reasoning in `<think>…</think>`.
//! Rules: spec/deepseek-v3.md, spec/deepseek-v3.1.md, spec/field-json-arguments.md.
//!
//! The families are grammar/deepseek.pest with grammar/deepseek-v3.family.json and
//! grammar/deepseek-v3.1.family.json, run by the engine
//! ([`crate::field::families::family`]`("deepseek-v3")`); this module renders them.
//!
//! ```
//! use idiolect::field::{families, Item};
//! let text = "Let me look.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather\
//!             <｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
//! let family = families::family("deepseek-v3.1").expect("a built-in family");
//! let doc = family.parse(text, &Default::default()).unwrap();
//! assert!(matches!(&doc.items[1], Item::ToolCall { name, complete: true, .. } if name == "get_weather"));
//! ```

mod render;

pub use render::{render_calls, render_results, render_turn};

/// Which DeepSeek call syntax a rendering writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `deepseek-v3`: `function<｜tool▁sep｜>NAME`, newline, a fenced JSON object.
    V3,
    /// `deepseek-v3.1`: `NAME<｜tool▁sep｜>{json}`.
    V31,
}

/// How the registry (`crate::session`) renders deepseek-v3 from JSON.
pub(crate) use render::render_v3 as render_v3_json;
/// How the registry (`crate::session`) renders deepseek-v3.1 from JSON.
pub(crate) use render::render_v31 as render_v31_json;
