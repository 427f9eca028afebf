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

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::field::llama::machine::{Family, LlamaMachine};
use crate::field::llama::render;
use crate::field::reasoning::spelling::{self, Spelling};
use crate::field::{Document, DocumentFolder, Event, Tool};
use crate::reentry::Machine;

pub use render::{render_llama3_calls as render_calls, render_llama3_turn as render_turn};

/// The llama3-json options, as given in JSON (spec/llama3-json.md LJ-2; FD-3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// Whether the output starts inside reasoning (the prompt ended with `<think>`).
    pub start_in_reasoning: bool,
    /// The tools of the request (accepted; JSON arguments need no schema).
    pub tools: Vec<Tool>,
    /// Whether a call object (or built-in call) at the start of the answer is a
    /// call without `<|python_tag|>` (default true; LJ-5).
    pub bare_json_calls: bool,
    /// The accepted reasoning wrappers (RS-11): `think` (default), `bracket`,
    /// `triangle`; empty for none.
    pub reasoning_markers: Vec<Spelling>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            start_in_reasoning: false,
            tools: Vec::new(),
            bare_json_calls: true,
            reasoning_markers: spelling::family_default(),
        }
    }
}

/// The llama3-json state machine, driven by the re-entry layer.
#[derive(Clone, Debug)]
pub struct Llama3JsonMachine(LlamaMachine);

impl Llama3JsonMachine {
    /// A machine for these options.
    pub fn new(options: &Options) -> Self {
        Llama3JsonMachine(LlamaMachine::new(
            Family::Llama3Json,
            options.start_in_reasoning,
            options.bare_json_calls,
            &options.reasoning_markers,
        ))
    }
}

impl Machine for Llama3JsonMachine {
    type Event = Event;

    fn advance(&mut self, pending: &str, base: usize, eof: bool, out: &mut Vec<Event>) -> usize {
        self.0.advance(pending, base, eof, out)
    }
}

family_glue!(Llama3JsonMachine, "llama3-json");

/// How the registry (`crate::session`) renders this family from JSON.
pub(crate) use render::render_llama3 as render_json;
