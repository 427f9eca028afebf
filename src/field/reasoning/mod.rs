//! The `reasoning` dialect: models that reason but call no tools, in any of the
//! three wrapper spellings `<think>…</think>`, `[THINK]…[/THINK]` and
//! `◁think▷…◁/think▷`; and those spellings as the `reasoning_markers` option
//! some field families honour. Rules: spec/reasoning.md.
//!
//! ```
//! use idiolect::field::{reasoning, Item};
//! let doc = reasoning::parse("[THINK]Two and two.[/THINK]Four.", &reasoning::Options::default());
//! assert!(matches!(&doc.items[0], Item::Reasoning { text, closed: true, .. } if text == "Two and two."));
//! ```

pub mod family;
mod machine;
mod render;
pub mod spelling;

pub use machine::ReasoningMachine;
pub use render::render_turn;
pub use spelling::Spelling;

use crate::field::{Document, DocumentFolder, Event};

family_options!(
    "reasoning",
    "all three, `[\"think\", \"bracket\", \"triangle\"]`",
    spelling::all()
);

impl ReasoningMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        ReasoningMachine::with_spellings(options.start_in_reasoning, &options.reasoning_markers)
    }
}

family_glue!(ReasoningMachine, "reasoning");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render as render_json;
