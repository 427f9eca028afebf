//! Options of the kindaxml dialect (spec KX-26), and their checked, compiled form.

use compact_str::CompactString;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Default for [`Options::max_tag_bytes`].
pub const DEFAULT_MAX_TAG_BYTES: usize = 4096;

/// What a well-formed tag with an unknown name does (KX-14).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnknownMode {
    /// The tag disappears; the text around and inside it stays.
    #[default]
    Strip,
    /// The tag stays in the output text as written.
    Passthrough,
    /// Its `<` is text; it is never parsed as a tag.
    TreatAsText,
}

/// How an unclosed tag chooses the text it annotates (KX-16).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// The text before the tag on its output line, back to the retro anchor.
    #[default]
    RetroLine,
    /// From the tag to the tag start that auto-closed it, or the end of input.
    ForwardUntilTag,
    /// From the tag to the next newline.
    ForwardUntilNewline,
    /// The first token after the tag.
    ForwardNextToken,
    /// No text: a marker at the tag.
    Noop,
}

/// What a recognized end tag that closes nothing does (KX-21).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StrayEndTagPolicy {
    /// It is removed.
    #[default]
    Drop,
    /// It stays in the output text.
    Passthrough,
}

/// Which value a repeated attribute key keeps (KX-10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DuplicateAttrs {
    /// The last value, at the position of the first occurrence.
    #[default]
    LastWins,
    /// The first value.
    FirstWins,
    /// An array of every value, in source order.
    KeepList,
}

/// What a recognized self-closing tag annotates (KX-19).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SelfClosingTarget {
    /// Nothing: it is a marker at its position.
    #[default]
    Marker,
    /// The next token, as `forward_next_token`.
    NextToken,
    /// Up to the next newline, as `forward_until_newline`.
    UntilNewline,
}

/// Where an unterminated literal block ends (KX-11).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CdataUnclosed {
    /// At the end of input.
    #[default]
    ToEnd,
    /// Right before the first newline inside the block.
    ToLineEnd,
}

/// Options of the kindaxml dialect, as given in JSON; every key is optional.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Options {
    /// The tag names that annotate.
    pub recognized_tags: Vec<String>,
    /// What unknown tags do.
    pub unknown_mode: UnknownMode,
    /// Whether unknown start and self-closing tags auto-close the open tag too.
    pub autoclose_on_any_tag: bool,
    /// The recovery strategy per recognized tag; others use `retro_line`.
    pub per_tag_recovery_strategy: IndexMap<String, Strategy>,
    /// Whether recovered spans lose leading and trailing whitespace and punctuation.
    pub trim_punctuation: bool,
    /// Whether tag names compare byte for byte (else ASCII case-insensitively).
    pub case_sensitive_tags: bool,
    /// What stray recognized end tags do.
    pub stray_end_tag_policy: StrayEndTagPolicy,
    /// Which value a repeated attribute keeps.
    pub duplicate_attrs: DuplicateAttrs,
    /// Whether annotations say how their span was chosen.
    pub recovery_metadata: bool,
    /// What recognized self-closing tags annotate.
    pub self_closing_target: SelfClosingTarget,
    /// The longest a tag may be, `<` to `>` inclusive; it also bounds hold-back.
    pub max_tag_bytes: usize,
    /// Whether `<![CDATA[ … ]]>` literal blocks are recognized.
    pub cdata: bool,
    /// Where an unterminated literal block ends.
    pub cdata_unclosed: CdataUnclosed,
    /// Whether `\<` and `\>` are literal `<` and `>`.
    pub backslash_escapes: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            recognized_tags: ["cite", "claim", "note", "todo", "metric", "risk", "label"]
                .iter()
                .map(|t| t.to_string())
                .collect(),
            unknown_mode: UnknownMode::Strip,
            autoclose_on_any_tag: false,
            per_tag_recovery_strategy: IndexMap::new(),
            trim_punctuation: true,
            case_sensitive_tags: true,
            stray_end_tag_policy: StrayEndTagPolicy::Drop,
            duplicate_attrs: DuplicateAttrs::LastWins,
            recovery_metadata: false,
            self_closing_target: SelfClosingTarget::Marker,
            max_tag_bytes: DEFAULT_MAX_TAG_BYTES,
            cdata: true,
            cdata_unclosed: CdataUnclosed::ToEnd,
            backslash_escapes: false,
        }
    }
}

/// Why a set of options cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionsProblem {
    /// A recognized tag is not a valid tag name (KX-4).
    BadName(String),
    /// The same tag is recognized twice (under the case rule).
    Duplicate(String),
    /// A recovery strategy is given for a tag that is not recognized.
    StrategyForUnknownTag(String),
    /// `max_tag_bytes` is below the 3 bytes of the shortest tag `<a>`.
    TagBoundTooSmall(usize),
}

impl std::fmt::Display for OptionsProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionsProblem::BadName(n) => {
                write!(f, "tag name {n:?} must match [A-Za-z][A-Za-z0-9_\\-:.]*")
            }
            OptionsProblem::Duplicate(n) => write!(f, "tag {n:?} is recognized twice"),
            OptionsProblem::StrategyForUnknownTag(n) => {
                write!(
                    f,
                    "per_tag_recovery_strategy names {n:?}, which is not a recognized tag"
                )
            }
            OptionsProblem::TagBoundTooSmall(n) => {
                write!(f, "max_tag_bytes is {n}; it must be at least 3")
            }
        }
    }
}

impl std::error::Error for OptionsProblem {}

/// Whether `b` may follow the first letter of a tag name.
pub(crate) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':' | b'.')
}

fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.first().is_some_and(u8::is_ascii_alphabetic) && bytes.iter().all(|&b| is_name_byte(b))
}

/// The options as the machine uses them: names checked, strategies resolved.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    /// Recognized names as configured, with their strategies.
    pub tags: Vec<(CompactString, Strategy)>,
    pub case_sensitive: bool,
    pub unknown_mode: UnknownMode,
    pub autoclose_on_any_tag: bool,
    pub trim: bool,
    pub stray: StrayEndTagPolicy,
    pub duplicates: DuplicateAttrs,
    pub metadata: bool,
    pub self_closing: SelfClosingTarget,
    pub max_tag_bytes: usize,
    pub cdata: bool,
    pub cdata_unclosed: CdataUnclosed,
    pub escapes: bool,
}

impl Config {
    pub fn new(options: &Options) -> Result<Self, OptionsProblem> {
        if options.max_tag_bytes < 3 {
            return Err(OptionsProblem::TagBoundTooSmall(options.max_tag_bytes));
        }
        let mut config = Config {
            tags: Vec::new(),
            case_sensitive: options.case_sensitive_tags,
            unknown_mode: options.unknown_mode,
            autoclose_on_any_tag: options.autoclose_on_any_tag,
            trim: options.trim_punctuation,
            stray: options.stray_end_tag_policy,
            duplicates: options.duplicate_attrs,
            metadata: options.recovery_metadata,
            self_closing: options.self_closing_target,
            max_tag_bytes: options.max_tag_bytes.min(crate::reentry::MAX_SIZE_OPTION),
            cdata: options.cdata,
            cdata_unclosed: options.cdata_unclosed,
            escapes: options.backslash_escapes,
        };
        for name in &options.recognized_tags {
            if !valid_name(name) {
                return Err(OptionsProblem::BadName(name.clone()));
            }
            if config.lookup(name.as_bytes()).is_some() {
                return Err(OptionsProblem::Duplicate(name.clone()));
            }
            config
                .tags
                .push((CompactString::from(name.as_str()), Strategy::RetroLine));
        }
        for (name, strategy) in &options.per_tag_recovery_strategy {
            match config.lookup(name.as_bytes()) {
                Some(i) => config.tags[i].1 = *strategy,
                None => return Err(OptionsProblem::StrategyForUnknownTag(name.clone())),
            }
        }
        Ok(config)
    }

    fn same(&self, a: &[u8], b: &[u8]) -> bool {
        if self.case_sensitive {
            a == b
        } else {
            a.eq_ignore_ascii_case(b)
        }
    }

    /// The recognized tag `name` spells, if any.
    pub fn lookup(&self, name: &[u8]) -> Option<usize> {
        self.tags
            .iter()
            .position(|(t, _)| self.same(t.as_bytes(), name))
    }

    /// Whether `prefix` begins some recognized name.
    pub fn is_prefix(&self, prefix: &[u8]) -> bool {
        self.tags.iter().any(|(t, _)| {
            t.len() >= prefix.len() && self.same(&t.as_bytes()[..prefix.len()], prefix)
        })
    }
}
