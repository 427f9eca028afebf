//! The llama3-json family (Llama 3.1/3.2/3.3): an optional `<|python_tag|>`, then
//! `{"name": …, "parameters": {…}}` (or `arguments`) calls or built-in
//! `brave_search.call(query="…")` calls, several joined by `;`. Rules:
//! spec/llama3-json.md.
//!
//! ```
//! use idiolect::field::{llama3_json, Item};
//! let text = "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}";
//! let doc = llama3_json::parse(text, &llama3_json::Options::default());
//! assert!(matches!(&doc.items[0], Item::ToolCall { name, .. } if name == "get_weather"));
//! ```

use crate::field::llama::machine::LlamaMachine;
use crate::field::llama::render;
use crate::field::reasoning::spelling;
use crate::field::{Document, DocumentFolder, Event};
use crate::reentry::Machine;

pub use render::{render_llama3_calls as render_calls, render_llama3_turn as render_turn};

family_options!(
    "llama3-json",
    "`[\"think\"]`",
    spelling::family_default(),
    /// Whether a call object (or built-in call) at the start of the answer is a
    /// call without `<|python_tag|>` (default true; LJ-5).
    bare_json_calls: bool = true,
);

/// The llama3-json state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct Llama3JsonMachine(LlamaMachine);

impl Llama3JsonMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        Llama3JsonMachine(LlamaMachine::new(
            options.start_in_reasoning,
            options.bare_json_calls,
            &options.reasoning_markers,
        ))
    }
}

impl Machine for Llama3JsonMachine {
    type Event = Event;

    #[inline]
    fn release(events: &mut Vec<Event>) {
        Event::release(events)
    }

    #[inline]
    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        self.0.advance(pending, base, eof, out)
    }
}

family_glue!(Llama3JsonMachine, "llama3-json");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render_llama3 as render_json;
