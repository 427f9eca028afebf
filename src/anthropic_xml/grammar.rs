//! The pest parser generated from grammar/anthropic-xml.pest,
//! and the typed view of one parsed tag.
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

#[cfg(test)]
use pest::Parser as _;
use pest_derive::Parser;

#[cfg(test)]
use super::entities::decode;

/// Parses one complete structural tag (rule `tag`).
#[derive(Parser)]
#[grammar = "grammar/anthropic-xml.pest"]
pub struct AnthropicXmlGrammar;

/// A structural name (AX-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Name {
    Thinking,
    FunctionCalls,
    FunctionResults,
    Invoke,
    Parameter,
    Result,
    Error,
}

impl Name {
    /// Every name with its spelling.
    #[cfg(test)]
    pub const ALL: [(Name, &'static str); 7] = [
        (Name::Thinking, "thinking"),
        (Name::FunctionCalls, "function_calls"),
        (Name::FunctionResults, "function_results"),
        (Name::Invoke, "invoke"),
        (Name::Parameter, "parameter"),
        (Name::Result, "result"),
        (Name::Error, "error"),
    ];

    /// The name spelled `text`, if it is one.
    #[cfg(test)]
    pub fn from_spelling(text: &str) -> Option<Name> {
        Name::ALL.iter().find(|(_, s)| *s == text).map(|(n, _)| *n)
    }

    /// The spelling of this name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Name::Thinking => "thinking",
            Name::FunctionCalls => "function_calls",
            Name::FunctionResults => "function_results",
            Name::Invoke => "invoke",
            Name::Parameter => "parameter",
            Name::Result => "result",
            Name::Error => "error",
        }
    }
}

/// One complete tag, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    /// `</...>` rather than `<...>`.
    pub closing: bool,
    /// The structural name.
    pub name: Name,
    /// Attributes in source order, values entity-decoded (none in a probe's
    /// reading: an opener with attributes is read as [`super::probe::Probed::Element`]).
    pub attrs: Vec<(String, String)>,
    /// `<... />`.
    pub self_closing: bool,
}

/// Parses the attribute list of an opener (everything after its name, `>`
/// included) with pest: the attributes, entity-decoded, and whether it self-closes.
/// The oracle the probe's own reading of attributes is tested against.
#[cfg(test)]
pub fn parse_attributes(text: &str) -> Attributes {
    let pairs = AnthropicXmlGrammar::parse(Rule::attribute_list, text).ok()?;
    let mut attrs = Vec::new();
    let mut self_closing = false;
    for part in pairs {
        match part.as_rule() {
            Rule::self_close => self_closing = true,
            Rule::xml_attribute => {
                let (key, value) = attribute(part)?;
                attrs.push((key, value));
            }
            _ => {}
        }
    }
    Some((attrs, self_closing))
}

/// What pest made of one attribute list.
#[cfg(test)]
pub type Attributes = Option<(Vec<(String, String)>, bool)>;

#[cfg(test)]
fn attribute(pair: pest::iterators::Pair<'_, Rule>) -> Option<(String, String)> {
    let mut inner = pair.into_inner();
    let key = inner.next()?.as_str().to_string();
    let value = inner
        .next()?
        .into_inner()
        .next()
        .map(|v| v.as_str())
        .unwrap_or("");
    Some((key, decode(value).into_owned()))
}

/// Parses a complete tag with pest; `None` when it is not one. The oracle the
/// probe's reading of tags is tested against.
#[cfg(test)]
pub fn parse_tag(text: &str) -> Option<Tag> {
    let pair = AnthropicXmlGrammar::parse(Rule::tag, text).ok()?.next()?;
    let closing = pair.as_rule() == Rule::closer;
    let mut tag = Tag {
        closing,
        name: Name::Thinking,
        attrs: Vec::new(),
        self_closing: false,
    };
    for part in pair.into_inner() {
        match part.as_rule() {
            Rule::name => tag.name = Name::from_spelling(part.as_str())?,
            Rule::self_close => tag.self_closing = true,
            Rule::xml_attribute => tag.attrs.push(attribute(part)?),
            _ => {}
        }
    }
    Some(tag)
}
