//! A start tag's attributes (KX-9, KX-10): read off the captures of the `start_rest`
//! rule of grammar/kindaxml.pest, in source order, duplicates resolved by
//! `duplicate_attrs`.

use compact_str::CompactString;
use schemars::JsonSchema;

use super::grammar::TagRules;
use super::options::DuplicateAttrs;
use crate::attrs::KeyIndex;
use crate::machine::Capture;

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

/// What a start tag's captures say: its attributes and whether it self-closes.
pub(crate) struct StartParts {
    pub attrs: Attrs,
    pub self_closing: bool,
}

/// Reads the captures of a `start_rest` match over `rest` (the tag from where its
/// name ends). `scratch` is working space (left empty).
///
/// An `attribute` capture comes before its key's and its value's. An attribute
/// without a value capture has the empty string as its value when it reaches past
/// its key (it holds a `=`), else `true`.
pub(crate) fn read_start(
    rest: &str,
    captures: &[Capture],
    duplicates: DuplicateAttrs,
    scratch: &mut Vec<(CompactString, AttrValue)>,
) -> StartParts {
    let rules = TagRules::get();
    scratch.clear();
    let mut index = KeyIndex::default();
    let mut self_closing = false;
    // The attribute being read: its key, its value so far, and where it ends.
    let mut pending: Option<(&str, AttrValue)> = None;
    let mut attribute_end = 0;
    for c in captures {
        let text = &rest[c.start..c.end];
        if c.rule == rules.attribute {
            if let Some((key, value)) = pending.take() {
                insert(scratch, &mut index, key, value, duplicates);
            }
            attribute_end = c.end;
        } else if c.rule == rules.key {
            let value = if attribute_end > c.end {
                AttrValue::Text(CompactString::default())
            } else {
                AttrValue::Flag(true)
            };
            pending = Some((text, value));
        } else if rules.values.contains(&c.rule) {
            if let Some((_, value)) = pending.as_mut() {
                *value = AttrValue::Text(CompactString::from(text));
            }
        } else if c.rule == rules.self_close {
            self_closing = true;
        }
    }
    if let Some((key, value)) = pending {
        insert(scratch, &mut index, key, value, duplicates);
    }
    StartParts {
        attrs: Attrs::take(scratch),
        self_closing,
    }
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
