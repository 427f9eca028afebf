//! Options of the transcript dialect: the prompt format, the mode, the known
//! participants and the stop sequences (spec/transcript.md §1).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Default for [`Options::eot`], the completions end-of-turn token.
pub const DEFAULT_EOT: &str = "<|eot|>";
/// Default for [`Options::max_stop_participants`].
pub const DEFAULT_MAX_STOP_PARTICIPANTS: usize = 10;
/// Default for [`Options::max_name_bytes`].
pub const DEFAULT_MAX_NAME_BYTES: usize = 128;
/// The largest [`Options::max_name_bytes`] accepted: it bounds what is held back.
pub const MAX_NAME_BYTES_LIMIT: usize = 64 * 1024;

/// How a conversation is written as one prompt string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// `\n\nHuman: …\n\nAssistant: …`, ending with an open `\n\nAssistant:`.
    #[default]
    HumanAssistant,
    /// `Name: text` turns joined by `\n`, ending with an open `Name:`.
    Participants,
    /// `Name: text<|eot|>` blocks joined by `\n\n`, ending with an open `Name:`.
    Completions,
    /// `<|im_start|>role\n…<|im_end|>\n`, ending with `<|im_start|>assistant\n`.
    Chatml,
}

/// What a session does with its input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Parse a prompt into system, messages and open turn.
    #[default]
    Parse,
    /// Render a conversation (JSON input) into a prompt and its stop sequences.
    Render,
    /// Cut a model's continuation at the first stop sequence.
    Scan,
    /// Build a provider request from a normalized conversation (JSON input).
    Request,
}

/// Options of the transcript dialect, as given in JSON. Every key is optional.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// The prompt format.
    pub format: Format,
    /// What the session does.
    pub mode: Mode,
    /// Known speaker names (parse) and the participants of derived stop sequences.
    pub participants: Vec<String>,
    /// The speaker of the open turn; `None` means [`Options::assistant_name`]'s default.
    pub assistant: Option<String>,
    /// Scan mode: the stop sequences; `None` derives them from the format (TR-62).
    pub stop: Option<Vec<String>>,
    /// Scan mode: ignore stops inside thinking and function_calls blocks (TR-74).
    pub structure_aware: bool,
    /// Completions: the end-of-turn token.
    pub eot: String,
    /// How many participants get stop sequences (TR-61).
    pub max_stop_participants: usize,
    /// Participants: add `</function_calls>` to the stop sequences.
    pub tools: bool,
    /// Participants render: open the assistant turn with `<thinking>`.
    pub thinking: bool,
    /// The longest speaker name or ChatML role, in bytes.
    pub max_name_bytes: usize,
    /// Request mode: request options that override the input's own, key by key (TR-92).
    pub request: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: Format::default(),
            mode: Mode::default(),
            participants: Vec::new(),
            assistant: None,
            stop: None,
            structure_aware: false,
            eot: DEFAULT_EOT.to_string(),
            max_stop_participants: DEFAULT_MAX_STOP_PARTICIPANTS,
            tools: false,
            thinking: false,
            max_name_bytes: DEFAULT_MAX_NAME_BYTES,
            request: None,
        }
    }
}

/// Why a set of options cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionsProblem {
    /// A participant or assistant name is empty or contains `:` or a newline.
    BadName(String),
    /// The completions end token is empty.
    EmptyEot,
    /// A stop sequence is empty.
    EmptyStop,
    /// `max_name_bytes` is 0 or above [`MAX_NAME_BYTES_LIMIT`].
    NameBound(usize),
}

impl std::fmt::Display for OptionsProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionsProblem::BadName(n) => {
                write!(f, "name {n:?} must be non-empty, without ':' or a newline")
            }
            OptionsProblem::EmptyEot => write!(f, "eot must not be empty"),
            OptionsProblem::EmptyStop => write!(f, "a stop sequence must not be empty"),
            OptionsProblem::NameBound(n) => {
                write!(
                    f,
                    "max_name_bytes is {n}; it must be from 1 to {MAX_NAME_BYTES_LIMIT}"
                )
            }
        }
    }
}

impl std::error::Error for OptionsProblem {}

/// Whether `name` can be a speaker name of a `Name:` header (TR-2).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains([':', '\n'])
}

impl Options {
    /// The assistant's name: the option, or the format's default.
    pub fn assistant_name(&self) -> &str {
        match (&self.assistant, self.format) {
            (Some(name), _) => name,
            (None, Format::Chatml) => "assistant",
            (None, _) => "Assistant",
        }
    }

    /// Checks the options (TR-2).
    pub fn check(&self) -> Result<(), OptionsProblem> {
        for name in self.participants.iter().chain(&self.assistant) {
            if !valid_name(name) {
                return Err(OptionsProblem::BadName(name.clone()));
            }
        }
        if self.eot.is_empty() {
            return Err(OptionsProblem::EmptyEot);
        }
        if self.stop.iter().flatten().any(String::is_empty) {
            return Err(OptionsProblem::EmptyStop);
        }
        if !(1..=MAX_NAME_BYTES_LIMIT).contains(&self.max_name_bytes) {
            return Err(OptionsProblem::NameBound(self.max_name_bytes));
        }
        Ok(())
    }
}
