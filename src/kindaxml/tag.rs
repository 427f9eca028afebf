//! Complete tags, parsed once with pest: names and attributes (KX-6, KX-9, KX-10).

use compact_str::CompactString;
use indexmap::IndexMap;
use pest::Parser as _;
use schemars::JsonSchema;
use serde::Serialize;

use super::grammar::{KindaxmlGrammar, Rule};
use super::options::DuplicateAttrs;

/// An attribute value: a string, `true` for a bare key, or every value of a
/// repeated key under `duplicate_attrs: "keep_list"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum AttrValue {
    /// A quoted or unquoted value, raw.
    Text(#[schemars(with = "String")] CompactString),
    /// A key without `=` (always `true`).
    Flag(bool),
    /// All values of a repeated key, in source order.
    List(Vec<AttrValue>),
}

/// Attributes in source order.
pub type Attrs = IndexMap<CompactString, AttrValue>;

/// A parsed start or self-closing tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StartTag<'a> {
    pub name: &'a str,
    pub attrs: Attrs,
    pub self_closing: bool,
}

/// Parses a start or self-closing tag window; `None` if pest refuses it.
pub(crate) fn parse_start(window: &str, duplicates: DuplicateAttrs) -> Option<StartTag<'_>> {
    let tag = KindaxmlGrammar::parse(Rule::start_tag, window)
        .ok()?
        .next()?;
    let mut name = "";
    let mut attrs = Attrs::new();
    let mut self_closing = false;
    for pair in tag.into_inner() {
        match pair.as_rule() {
            Rule::name => name = pair.as_str(),
            Rule::self_close => self_closing = true,
            Rule::attribute => {
                let text = pair.as_str();
                let mut parts = pair.into_inner();
                let Some(key) = parts.next() else { continue };
                let value = match parts.next() {
                    None => attribute_value(&text[key.as_str().len()..]),
                    Some(v) => match v.as_rule() {
                        Rule::dq_value | Rule::sq_value => AttrValue::Text(
                            v.into_inner()
                                .next()
                                .map(|i| CompactString::from(i.as_str()))
                                .unwrap_or_default(),
                        ),
                        _ => AttrValue::Text(CompactString::from(v.as_str())),
                    },
                };
                insert(&mut attrs, key.as_str(), value, duplicates);
            }
            _ => {}
        }
    }
    Some(StartTag {
        name,
        attrs,
        self_closing,
    })
}

/// The value of an attribute pest found no value in, from what follows its key:
/// `true` for a bare key, the empty string for `key=` with nothing after it.
fn attribute_value(after_key: &str) -> AttrValue {
    if after_key.trim_start_matches([' ', '\t']).starts_with('=') {
        AttrValue::Text(CompactString::default())
    } else {
        AttrValue::Flag(true)
    }
}

fn insert(attrs: &mut Attrs, key: &str, value: AttrValue, duplicates: DuplicateAttrs) {
    match attrs.get_mut(key) {
        None => {
            attrs.insert(CompactString::from(key), value);
        }
        Some(old) => match duplicates {
            DuplicateAttrs::LastWins => *old = value,
            DuplicateAttrs::FirstWins => {}
            DuplicateAttrs::KeepList => match old {
                AttrValue::List(values) => values.push(value),
                _ => {
                    let first = std::mem::replace(old, AttrValue::List(Vec::new()));
                    *old = AttrValue::List(vec![first, value]);
                }
            },
        },
    }
}

/// Parses an end tag window and returns its name; `None` if pest refuses it. The
/// machine takes the name from the probe, which recognizes end tags exactly; the
/// tests check that pest agrees.
#[cfg(test)]
pub(crate) fn parse_end(window: &str) -> Option<&str> {
    let tag = KindaxmlGrammar::parse(Rule::end_tag, window).ok()?.next()?;
    tag.into_inner()
        .find(|p| p.as_rule() == Rule::name)
        .map(|p| p.as_str())
}
