//! Complete tags taken apart: names and attributes (KX-6, KX-9, KX-10).
//!
//! The probe delimits a tag and recognizes it exactly; [`scan_start`] then reads
//! the parts of the window it accepted with the semantics of the `start_tag` rule
//! of grammar/kindaxml.pest. The pest rule stays the oracle: the tests check that
//! both take every window apart the same way.

use compact_str::CompactString;
use schemars::JsonSchema;

use super::options::{is_name_byte, DuplicateAttrs};
use super::probe::{is_key_byte, is_tag_ws};
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

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && is_tag_ws(bytes[i]) {
        i += 1;
    }
    i
}

/// Takes apart a start or self-closing tag window exactly as the `start_tag` rule
/// would; `None` where that rule refuses the window. `scratch` is working space
/// (left empty).
///
/// The rule is a PEG and a simple tokenizer: after the name, whitespace is
/// skipped, a key starts an attribute, a `/` followed only by whitespace and the
/// final `>` makes the tag self-closing, and any other `=`, quote or `/` is junk
/// and skipped. A quoted value runs to its quote on the same line, else to the
/// window's final `>` or `/>` if no other `>` comes first (KX-8), else to the
/// end of its line; failing all three, the value is unquoted after all. All
/// delimiters are ASCII, so reading bytes reads characters.
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
    // Where a quoted value left open may end: at the window's final `/>` or `>`.
    let window_end = if b[last - 1] == b'/' { last - 1 } else { last };
    let mut i = 2;
    while is_name_byte(b[i]) {
        i += 1;
    }
    let name = &window[1..i];
    if !(is_tag_ws(b[i]) || b[i] == b'/' || b[i] == b'>') {
        return None;
    }
    let mut self_closing = false;
    while i < last {
        match b[i] {
            c if is_tag_ws(c) => i += 1,
            b'/' if skip_ws(b, i + 1) == last => {
                self_closing = true;
                i = last;
            }
            b'/' | b'=' | b'"' | b'\'' => i += 1,
            b'>' | b'<' => {
                scratch.clear();
                return None;
            }
            _ => {
                let key_start = i;
                while is_key_byte(b[i]) {
                    i += 1;
                }
                let key = &window[key_start..i];
                let eq = skip_ws(b, i);
                let value = if b[eq] == b'=' {
                    let (value, next) = scan_value(window, skip_ws(b, eq + 1), window_end);
                    i = next;
                    AttrValue::Text(CompactString::from(value))
                } else {
                    AttrValue::Flag(true)
                };
                insert(scratch, &mut index, key, value, duplicates);
            }
        }
    }
    Some(StartTag {
        name,
        attrs: Attrs::take(scratch),
        self_closing,
    })
}

/// The value that starts at `v` (after `=` and whitespace), and where scanning
/// goes on; an absent value is the empty string, and scanning goes on at `v`.
fn scan_value(window: &str, v: usize, window_end: usize) -> (&str, usize) {
    let b = window.as_bytes();
    let n = b.len();
    if let Some(&q @ (b'"' | b'\'')) = b.get(v) {
        let mut p = v + 1;
        while p < n && b[p] != q && b[p] != b'\n' {
            p += 1;
        }
        if p < n && b[p] == q {
            return (&window[v + 1..p], p + 1);
        }
        // No matching quote on the line: closed at the window's end, if no other
        // `>` comes first, else at the newline, if no `>` comes first.
        let mut o = v + 1;
        while o < n && o != window_end && b[o] != q && b[o] != b'\n' && b[o] != b'>' {
            o += 1;
        }
        if o == window_end || (o < n && b[o] == b'\n') {
            return (&window[v + 1..o], o);
        }
    }
    let mut p = v;
    while p < n
        && !is_tag_ws(b[p])
        && b[p] != b'>'
        && !(b[p] == b'/' && b.get(p + 1) == Some(&b'>'))
    {
        p += 1;
    }
    (&window[v..p], p)
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
        if after_key
            .trim_start_matches([' ', '\t', '\r', '\n'])
            .starts_with('=')
        {
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

/// Parses an end tag window with the rule for a `recognized` name or the one for
/// an unknown name, and returns its name; `None` if pest refuses it. The machine
/// takes the name from the probe, which recognizes end tags exactly; the tests
/// check that pest agrees.
#[cfg(test)]
pub(crate) fn parse_end(window: &str, recognized: bool) -> Option<&str> {
    use super::grammar::{KindaxmlGrammar, Rule};
    use pest::Parser as _;

    let rule = if recognized {
        Rule::end_tag
    } else {
        Rule::unknown_end_tag
    };
    let tag = KindaxmlGrammar::parse(rule, window).ok()?.next()?;
    tag.into_inner()
        .find(|p| p.as_rule() == Rule::name)
        .map(|p| p.as_str())
}
