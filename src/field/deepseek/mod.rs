//! The DeepSeek families: `deepseek-v3` (DeepSeek-V3, V3-0324, R1-0528 and the R1
//! distillations: a type word, a name and a fenced JSON object per call) and
//! `deepseek-v3.1` (V3.1, V3.2-Exp: name and JSON object only), both inside
//! `<｜tool▁calls▁begin｜>…<｜tool▁calls▁end｜>` with reasoning in `<think>…</think>`.
//! Rules: spec/deepseek-v3.md, spec/deepseek-v3.1.md, spec/field-json-arguments.md.
//!
//! ```
//! use idiolect::field::{deepseek, Item};
//! let text = "Let me look.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather\
//!             <｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
//! let doc = deepseek::parse(deepseek::Variant::V31, text, &deepseek::Options::default());
//! assert!(matches!(&doc.items[1], Item::ToolCall { name, complete: true, .. } if name == "get_weather"));
//! ```

mod machine;
mod render;

pub use machine::DeepseekMachine;
pub use render::{render_calls, render_results, render_turn};

use crate::field::reasoning::spelling;
use crate::field::{Document, DocumentFolder, Event};
use crate::fold::Fold;
use crate::reentry::Stream;

/// Which DeepSeek call syntax a parser reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `deepseek-v3`: `function<｜tool▁sep｜>NAME`, newline, a fenced JSON object.
    V3,
    /// `deepseek-v3.1`: `NAME<｜tool▁sep｜>{json}`.
    V31,
}

family_options!(
    "deepseek-v3 and deepseek-v3.1",
    "`[\"think\"]`",
    spelling::family_default()
);

/// The streaming parser: feed chunks, get [`Event`]s.
pub type Parser = Stream<DeepseekMachine>;

impl Stream<DeepseekMachine> {
    /// A streaming DeepSeek parser for `variant`.
    pub fn with_options(variant: Variant, options: &Options) -> Self {
        Stream::new(DeepseekMachine::new(variant, options))
    }
}

/// Parses a whole document (the streaming machinery, fed once).
pub fn parse(variant: Variant, input: &str, options: &Options) -> Document {
    crate::field::parse_owned(Parser::with_options(variant, options), input)
}

/// Parses a whole document and also returns its events.
pub fn parse_events(variant: Variant, input: &str, options: &Options) -> (Document, Vec<Event>) {
    let mut parser = Parser::with_options(variant, options);
    let mut events: Vec<Event> = parser.feed(input.as_bytes()).collect();
    events.extend(parser.finish());
    let mut folder = DocumentFolder::new(false);
    events.iter().for_each(|e| folder.push(e));
    (folder.into_document(), events)
}

/// How the registry (`crate::session`) renders deepseek-v3 from JSON.
pub(crate) use render::render_v3 as render_v3_json;
/// How the registry (`crate::session`) renders deepseek-v3.1 from JSON.
pub(crate) use render::render_v31 as render_v31_json;
