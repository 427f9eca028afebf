//! Complete tags taken apart: names and attributes (KX-6, KX-9, KX-10).
//!
//! The probe delimits a tag and recognizes it exactly; [`scan_start`] then reads
//! the parts of the window it accepted with the semantics of the `start_tag` rule
//! of grammar/kindaxml.pest. The pest rule stays the oracle: the tests check that
//! both take every window apart the same way.

use compact_str::CompactString;
use schemars::JsonSchema;

use super::options::{is_name_byte, DuplicateAttrs};
use crate::attrs::KeyIndex;

/// An attribute value: a string, `true` for a bare key, or every value of a
/// repeated key under `duplicate_attrs: "keep_list"`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, JsonSchema)]
#[serde(untagged)]
pub enum AttrValue {
    /// A quoted or unquoted value, raw.
    Text(#[schemars(with = "String")] CompactString),
    /// A key without `=` (always `true`).
    Flag(bool),
    /// All values of a repeated key, in source order.
    List(Vec<AttrValue>),
}

/// The attributes of a tag, in source order, each key once (duplicates resolved
/// by `duplicate_attrs`). Serialized as a JSON object.
pub type Attrs = crate::attrs::AttrList<AttrValue>;

/// A parsed start or self-closing tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StartTag<'a> {
    pub name: &'a str,
    pub attrs: Attrs,
    pub self_closing: bool,
}

fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn is_key_byte(b: u8) -> bool {
    !is_ws(b) && !matches!(b, b'=' | b'>' | b'/' | b'"' | b'\'' | b'<' | b'\n')
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && is_ws(bytes[i]) {
        i += 1;
    }
    i
}

/// Takes apart a start or self-closing tag window exactly as the `start_tag` rule
/// would; `None` where that rule refuses the window. `scratch` is working space
/// (left empty).
///
/// The rule is a PEG: `(ws+ attribute)*` stops at the first attribute that does
/// not match, a key takes every byte it can, a quoted value runs to its quote or
/// to the window's final `>` or `/>` (KX-8), and an unquoted one to whitespace,
/// `>` or `/>`. All delimiters are ASCII, so reading bytes reads characters.
pub(crate) fn scan_start<'a>(
    window: &'a str,
    duplicates: DuplicateAttrs,
    scratch: &mut Vec<(CompactString, AttrValue)>,
) -> Option<StartTag<'a>> {
    scratch.clear();
    let mut index = KeyIndex::default();
    let b = window.as_bytes();
    let n = b.len();
    if n < 3 || b[0] != b'<' || !b[1].is_ascii_alphabetic() || b[n - 1] != b'>' {
        return None;
    }
    let last = n - 1;
    // Where a quoted value left open ends: at the window's final `/>` or `>`.
    let window_end = if b[last - 1] == b'/' { last - 1 } else { last };
    let mut i = 2;
    while i < n && is_name_byte(b[i]) {
        i += 1;
    }
    let name = &window[1..i];
    loop {
        let key_start = skip_ws(b, i);
        if key_start == i {
            break;
        }
        let mut key_end = key_start;
        while key_end < n && is_key_byte(b[key_end]) {
            key_end += 1;
        }
        if key_end == key_start {
            break;
        }
        let key = &window[key_start..key_end];
        let eq = skip_ws(b, key_end);
        let value = if eq < n && b[eq] == b'=' {
            let v = skip_ws(b, eq + 1);
            match b.get(v) {
                Some(&q @ (b'"' | b'\'')) => {
                    let mut p = v + 1;
                    while p < n && b[p] != q && p != window_end {
                        p += 1;
                    }
                    let text = &window[v + 1..p];
                    // A closing quote is taken; a window end is only looked at.
                    i = if p < n && b[p] == q { p + 1 } else { p };
                    AttrValue::Text(CompactString::from(text))
                }
                _ => {
                    let mut p = v;
                    while p < n
                        && !is_ws(b[p])
                        && b[p] != b'>'
                        && !(b[p] == b'/' && b.get(p + 1) == Some(&b'>'))
                    {
                        p += 1;
                    }
                    i = p;
                    AttrValue::Text(CompactString::from(&window[v..p]))
                }
            }
        } else {
            i = key_end;
            AttrValue::Flag(true)
        };
        insert(scratch, &mut index, key, value, duplicates);
    }
    i = skip_ws(b, i);
    let self_closing = b[i] == b'/';
    if self_closing {
        i += 1;
    }
    if i != last {
        scratch.clear();
        return None;
    }
    Some(StartTag {
        name,
        attrs: Attrs::take(scratch),
        self_closing,
    })
}

fn insert(
    attrs: &mut Vec<(CompactString, AttrValue)>,
    index: &mut KeyIndex,
    key: &str,
    value: AttrValue,
    duplicates: DuplicateAttrs,
) {
    match index.find(attrs, key).map(|at| &mut attrs[at].1) {
        None => attrs.push((CompactString::from(key), value)),
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

/// The pest oracle for [`scan_start`]: the `start_tag` rule's pairs, read off as
/// the dialect has always read them.
#[cfg(test)]
pub(crate) fn parse_start(window: &str, duplicates: DuplicateAttrs) -> Option<StartTag<'_>> {
    use super::grammar::{KindaxmlGrammar, Rule};
    use pest::Parser as _;

    /// The value of an attribute pest found no value in, from what follows its
    /// key: `true` for a bare key, the empty string for `key=` with nothing after.
    fn attribute_value(after_key: &str) -> AttrValue {
        if after_key.trim_start_matches([' ', '\t']).starts_with('=') {
            AttrValue::Text(CompactString::default())
        } else {
            AttrValue::Flag(true)
        }
    }

    let tag = KindaxmlGrammar::parse(Rule::start_tag, window)
        .ok()?
        .next()?;
    let mut name = "";
    let mut attrs = Vec::new();
    let mut index = KeyIndex::default();
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
                insert(&mut attrs, &mut index, key.as_str(), value, duplicates);
            }
            _ => {}
        }
    }
    Some(StartTag {
        name,
        attrs: Attrs::take(&mut attrs),
        self_closing,
    })
}

/// Parses an end tag window and returns its name; `None` if pest refuses it. The
/// machine takes the name from the probe, which recognizes end tags exactly; the
/// tests check that pest agrees.
#[cfg(test)]
pub(crate) fn parse_end(window: &str) -> Option<&str> {
    use super::grammar::{KindaxmlGrammar, Rule};
    use pest::Parser as _;

    let tag = KindaxmlGrammar::parse(Rule::end_tag, window).ok()?.next()?;
    tag.into_inner()
        .find(|p| p.as_rule() == Rule::name)
        .map(|p| p.as_str())
}
