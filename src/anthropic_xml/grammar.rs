//! The pest parser generated from grammar/anthropic-xml.pest,
//! and the typed view of one parsed tag.
// Generated code: pest adds an undocumented `EOI` variant and `Rule::all_rules`.
#![allow(missing_docs)]

use pest::Parser as _;
use pest_derive::Parser;

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
    /// Attributes in source order, values entity-decoded (see [`Tag::attr`]).
    pub attrs: Vec<(String, String)>,
    /// `<... />`.
    pub self_closing: bool,
}

impl Tag {
    /// The value of attribute `key`; of several, the last wins (AX-3).
    pub fn attr(&self, key: &str) -> Option<&str> {
        attr_value(&self.attrs, key)
    }
}

/// Parses the attribute list of an opener (everything after its name, `>`
/// included) with pest: the attributes, entity-decoded, and whether it self-closes.
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
pub type Attributes = Option<(Vec<(String, String)>, bool)>;

/// How many attribute lists [`AttributeMemo`] remembers, and the longest it keeps.
const MEMO_ENTRIES: usize = 16;
const MEMO_MAX_BYTES: usize = 256;

/// Remembers the last few attribute lists pest parsed. Model output repeats the same
/// tags (`<parameter name="path">` in every call) and a list's parse depends on its
/// text alone, so a repeated list is answered without running pest on it again.
/// Bounded: at most 16 lists of at most 256 bytes.
#[derive(Clone, Debug, Default)]
pub struct AttributeMemo {
    entries: Vec<(String, Attributes)>,
    next: usize,
    /// The parse of the last list too long to remember.
    last: Attributes,
}

impl AttributeMemo {
    /// [`parse_attributes`], remembered; the answer is borrowed from the memo.
    pub fn parse(&mut self, text: &str) -> Option<(&[(String, String)], bool)> {
        let slot = match self.entries.iter().position(|(t, _)| t == text) {
            Some(i) => &self.entries[i].1,
            None => {
                let parsed = parse_attributes(text);
                if text.len() > MEMO_MAX_BYTES {
                    self.last = parsed;
                    &self.last
                } else if self.entries.len() < MEMO_ENTRIES {
                    self.entries.push((text.to_string(), parsed));
                    &self.entries[self.entries.len() - 1].1
                } else {
                    let i = self.next;
                    self.entries[i] = (text.to_string(), parsed);
                    self.next = (i + 1) % MEMO_ENTRIES;
                    &self.entries[i].1
                }
            }
        };
        slot.as_ref()
            .map(|(attrs, closing)| (attrs.as_slice(), *closing))
    }
}

/// The value of attribute `key` in a list; of several, the last wins (AX-3).
pub fn attr_value<'a>(attrs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

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

/// Parses a complete tag with pest; `None` when it is not one.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_attribute_lists_parse_as_pest_parses_them() {
        let mut memo = AttributeMemo::default();
        let lists: Vec<String> = (0..40)
            .map(|i| {
                format!(
                    " name=\"p{}\" id='&amp;'{}>",
                    i % 20,
                    if i % 3 == 0 { "/" } else { "" }
                )
            })
            .chain([
                " name=>".to_string(),
                format!(" name=\"{}\">", "x".repeat(300)),
            ])
            .collect();
        for _ in 0..2 {
            for list in &lists {
                let expected = parse_attributes(list);
                let expected = expected.as_ref().map(|(a, c)| (a.as_slice(), *c));
                assert_eq!(memo.parse(list), expected, "{list}");
            }
        }
        assert!(memo.entries.len() <= MEMO_ENTRIES);
    }
}
