//! Typing a complete statement: its header is taken apart once, then each slot and the body
//! get their per-OP meaning (PL-9 to PL-13). The first problem, in input order, becomes the
//! statement's one error (PL-16, PL-17).

use std::ops::Range;

use indexmap::map::Entry;
use indexmap::IndexMap;

use super::grammar;
use super::model::{
    Body, LineMarker, Matcher, Op, ParamValue, ParseError, Path, Position, Signal, Source,
    Statement, UrlPath,
};
use crate::machine::{Outcome, ParsingMachine, RuleId};

/// The largest magnitude an integer may have: what JavaScript holds exactly (PL-10).
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// How deep a matcher's brackets may nest before it is refused (PL-13).
pub const MAX_MATCHER_NESTING: usize = 64;

/// The longest xpath, regex or jsonpath matcher that is checked (PL-13); a longer one is
/// refused, so that the stack its check may need stays bounded.
pub const MAX_MATCHER_BYTES: usize = 16 * 1024;

/// A problem at a byte offset of the statement, with its source and text.
pub type Problem = (usize, Source, String);

/// One slot of a header, as the grammar's `header_step` read it: the offsets of its
/// contents in the statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// `[text]`: the text.
    Signal(Range<usize>),
    /// `(text)`: the text.
    Path(Range<usize>),
    /// `<first>` or `<first-last>`: the integers as written.
    Marker(Range<usize>, Option<Range<usize>>),
}

/// A header read step by step: the OP, the end of the suffix, the slots in order,
/// the first structural error (PL-14, PL-15) and where the body starts.
#[derive(Clone, Debug)]
pub struct Header {
    /// The OP.
    pub op: Op,
    /// Where `OPsuffix` ends (it starts at 2, after `<<`).
    pub tag_end: usize,
    /// The slots in source order.
    pub slots: Vec<Slot>,
    /// The first structural error, reported when the statement ends.
    pub deferred: Option<Problem>,
    /// Where the body starts (after the header's `:`), once it does.
    pub body_start: usize,
}

/// Complete pieces of a statement read by rules of grammar/plurnk.pest: the parsing
/// machine finished on each piece at once.
#[derive(Clone, Debug)]
pub struct Pieces {
    machine: ParsingMachine<'static>,
}

impl Pieces {
    /// A reader of pieces.
    pub fn new() -> Self {
        Pieces {
            machine: ParsingMachine::new(grammar::program()),
        }
    }

    /// Whether `rule` matches the whole `text` (every rule read here starts at `SOI`
    /// and ends at `EOI`, or is a prefix test).
    fn accepts(&mut self, rule: RuleId, text: &str) -> bool {
        self.machine.start(rule);
        matches!(
            self.machine.finish(text.as_bytes()),
            Outcome::Matched { .. }
        )
    }

    /// The text of every capture of `rule` in the last match.
    fn captured<'t>(&self, rule: RuleId, text: &'t str) -> Vec<&'t str> {
        self.machine
            .captures()
            .iter()
            .filter(|c| c.rule == rule)
            .map(|c| &text[c.start..c.end])
            .collect()
    }

    /// The tags of a signal (`tag_list`): split on commas, spaces and tabs, empty
    /// entries dropped.
    pub fn tags<'t>(&mut self, content: &'t str) -> Vec<&'t str> {
        let rules = grammar::rules();
        if !self.accepts(rules.tag_list, content) {
            // Every text is a tag list (tested against pest).
            return Vec::new();
        }
        self.captured(rules.tag, content)
    }

    /// Whether `entry` is an integer (`int_entry`).
    pub fn is_int_entry(&mut self, entry: &str) -> bool {
        self.accepts(grammar::rules().int_entry, entry)
    }

    /// Whether `entry` is a runtime tag (`runtime_entry`).
    pub fn is_runtime_entry(&mut self, entry: &str) -> bool {
        self.accepts(grammar::rules().runtime_entry, entry)
    }

    /// Whether `text` starts with a URL scheme and `://` (`url_prefix`).
    pub fn has_url_prefix(&mut self, text: &str) -> bool {
        // A prefix test: the rule has no `EOI`, so the match may end anywhere.
        self.accepts(grammar::rules().url_prefix, text)
    }

    /// A regex body's pattern and flags (`regex_literal`).
    pub fn regex<'t>(&mut self, raw: &'t str) -> Option<(&'t str, &'t str)> {
        let rules = grammar::rules();
        if !self.accepts(rules.regex_literal, raw) {
            return None;
        }
        let pattern = self.captured(rules.regex_pattern, raw).first().copied();
        let flags = self.captured(rules.regex_flags, raw).first().copied();
        let (pattern, flags) = (pattern.unwrap_or(""), flags.unwrap_or(""));
        Some((pattern, flags))
    }
}

impl Default for Pieces {
    fn default() -> Self {
        Self::new()
    }
}

/// Builds the statement `unit[..body_end]` (header and body, without the close tag).
pub fn build(
    unit: &str,
    header: &Header,
    body_end: usize,
    position: Position,
    pieces: &mut Pieces,
) -> Result<Statement, ParseError> {
    type_statement(unit, header, body_end, position, pieces)
        .map_err(|(at, source, text)| ParseError::new(position.after(&unit[..at]), source, &text))
}

fn type_statement(
    unit: &str,
    header: &Header,
    body_end: usize,
    position: Position,
    pieces: &mut Pieces,
) -> Result<Statement, Problem> {
    if let Some(problem) = &header.deferred {
        return Err(problem.clone());
    }
    let op = header.op;
    let mut statement = Statement {
        op,
        suffix: unit[6..header.tag_end].to_string(),
        signal: None,
        path: None,
        line_marker: None,
        body: None,
        position,
    };
    for slot in &header.slots {
        match slot {
            Slot::Signal(text) => {
                statement.signal = signal(op, &unit[text.clone()], text.start, pieces)?
            }
            Slot::Path(text) => {
                statement.path = path(&unit[text.clone()], "path", pieces)
                    .map_err(|e| (text.start, Source::Visitor, e))?
            }
            Slot::Marker(first, last) => {
                let int = |at: &Range<usize>| {
                    integer(&unit[at.clone()])
                        .ok_or_else(|| out_of_range(at.start, &unit[at.clone()]))
                };
                statement.line_marker = Some(LineMarker {
                    first: int(first)?,
                    last: last.as_ref().map(int).transpose()?,
                });
            }
        }
    }
    let body_start = header.body_start;
    let body = &unit[body_start..body_end];
    if !body.is_empty() {
        statement.body = Some(
            self::body(op, body, pieces).map_err(|(source, text)| (body_start, source, text))?,
        );
    }
    Ok(statement)
}

/// A signed integer as written, within the safe range.
fn integer(digits: &str) -> Option<i64> {
    let (negative, magnitude) = match digits.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, digits),
    };
    let magnitude = magnitude.trim_start_matches('0');
    if magnitude.len() > 16 {
        return None;
    }
    let value: i64 = if magnitude.is_empty() {
        0
    } else {
        magnitude.parse().ok()?
    };
    (value <= MAX_SAFE_INTEGER).then_some(if negative { -value } else { value })
}

fn out_of_range(at: usize, digits: &str) -> Problem {
    (
        at,
        Source::Visitor,
        format!("integer {digits} is out of range"),
    )
}

fn signal(
    op: Op,
    content: &str,
    at: usize,
    pieces: &mut Pieces,
) -> Result<Option<Signal>, Problem> {
    let entries: Vec<&str> = pieces.tags(content);
    let number = |entry: &str| {
        integer(entry)
            .map(Signal::Number)
            .ok_or_else(|| out_of_range(at, entry))
    };
    let wrong = |what: &str| {
        Err((
            at,
            Source::Lexer,
            format!("expected {what} signal; got '{content}'"),
        ))
    };
    match op {
        Op::SEND | Op::HIDE | Op::EXEC if entries.is_empty() => Ok(None),
        Op::SEND => match entries.as_slice() {
            [one] if pieces.is_int_entry(one) => number(one).map(Some),
            _ => wrong("integer for SEND"),
        },
        Op::EXEC => match entries.as_slice() {
            [one] if pieces.is_runtime_entry(one) => Ok(Some(Signal::Runtime(one.to_string()))),
            _ => wrong("Runtime Tag for EXEC"),
        },
        Op::HIDE => {
            let integers = entries.iter().filter(|e| pieces.is_int_entry(e)).count();
            match (integers, entries.as_slice()) {
                (0, _) => Ok(Some(Signal::Tags(
                    entries.iter().map(|e| e.to_string()).collect(),
                ))),
                (1, [one]) => number(one).map(Some),
                _ => wrong("one integer or tags for HIDE"),
            }
        }
        _ => Ok(Some(Signal::Tags(
            entries.iter().map(|e| e.to_string()).collect(),
        ))),
    }
}

/// Reads a path slot's text (PL-11): `None` when empty.
fn path(text: &str, what: &str, pieces: &mut Pieces) -> Result<Option<Path>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    parse_path(text, what, pieces).map(Some)
}

/// Reads a non-empty path text as local or URL (PL-11); `what` names the place for errors.
pub fn parse_path(text: &str, what: &str, pieces: &mut Pieces) -> Result<Path, String> {
    if !pieces.has_url_prefix(text) {
        return Ok(Path::Local {
            raw: text.to_string(),
        });
    }
    let url = url::Url::parse(text).map_err(|_| format!("invalid URI in {what}"))?;
    let mut params: IndexMap<String, ParamValue> = IndexMap::new();
    for (key, value) in url.query_pairs() {
        let value = value.into_owned();
        match params.entry(key.into_owned()) {
            Entry::Vacant(slot) => {
                slot.insert(ParamValue::One(value));
            }
            Entry::Occupied(mut slot) => {
                let existing = slot.get_mut();
                match existing {
                    ParamValue::Many(values) => values.push(value),
                    ParamValue::One(first) => {
                        let first = std::mem::take(first);
                        *existing = ParamValue::Many(vec![first, value]);
                    }
                }
            }
        }
    }
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_string());
    Ok(Path::Url(Box::new(UrlPath {
        raw: text.to_string(),
        scheme: url.scheme().to_string(),
        username: non_empty(url.username()),
        password: url.password().and_then(non_empty),
        hostname: url.host_str().and_then(non_empty),
        port: url.port(),
        pathname: url.path().to_string(),
        params,
        fragment: url.fragment().and_then(non_empty),
    })))
}

fn body(op: Op, raw: &str, pieces: &mut Pieces) -> Result<Body, (Source, String)> {
    Ok(match op {
        Op::EDIT | Op::EXEC => Body::Raw(raw.to_string()),
        Op::COPY | Op::MOVE => {
            Body::Path(parse_path(raw, "body", pieces).map_err(|e| (Source::Visitor, e))?)
        }
        Op::SEND => Body::Send {
            raw: raw.to_string(),
            json: serde_json::from_str(raw).unwrap_or(serde_json::Value::Null),
        },
        Op::FIND | Op::READ | Op::SHOW | Op::HIDE => {
            Body::Matcher(matcher(raw, pieces).map_err(|text| (Source::Visitor, text))?)
        }
    })
}

/// How deep `(`, `[` and `{` nest in `raw`, not counting `\`-escaped ones.
fn nesting(raw: &str) -> usize {
    let (mut depth, mut deepest, mut escaped) = (0usize, 0usize, false);
    for b in raw.bytes() {
        if escaped {
            escaped = false;
            continue;
        }
        match b {
            b'\\' => escaped = true,
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn matcher(raw: &str, pieces: &mut Pieces) -> Result<Matcher, String> {
    let checked = raw.starts_with('/') || raw.starts_with('$');
    if !checked {
        return Ok(Matcher::Glob {
            raw: raw.to_string(),
        });
    }
    if raw.len() > MAX_MATCHER_BYTES {
        return Err(format!("matcher longer than {MAX_MATCHER_BYTES} bytes"));
    }
    if nesting(raw) > MAX_MATCHER_NESTING {
        return Err(format!(
            "matcher nests deeper than {MAX_MATCHER_NESTING} brackets"
        ));
    }
    if raw.len() <= SMALL_MATCHER_BYTES {
        return check_matcher(raw, pieces);
    }
    // The validators recurse on more than brackets (a run of unary minus in XPath, a long
    // alternation in a regex), at most a few frames per byte: a long matcher is checked on
    // a stack segment sized for its length, whatever stack the caller has left.
    stacker::grow(STACK_BASE + STACK_PER_BYTE * raw.len(), || {
        check_matcher(raw, pieces)
    })
}

/// Matchers up to this length are checked on the caller's stack.
const SMALL_MATCHER_BYTES: usize = 256;
/// Stack for checking a longer matcher: a base plus a share per byte.
const STACK_BASE: usize = 1 << 20;
const STACK_PER_BYTE: usize = 4096;

fn check_matcher(raw: &str, pieces: &mut Pieces) -> Result<Matcher, String> {
    if raw.starts_with("//") {
        return match sxd_xpath::Factory::new().build(raw) {
            Ok(Some(_)) => Ok(Matcher::Xpath {
                raw: raw.to_string(),
            }),
            _ => Err("invalid xpath".into()),
        };
    }
    if raw.starts_with('/') {
        let (pattern, flags) = pieces
            .regex(raw)
            .ok_or_else(|| "regex body missing closing /".to_string())?;
        if !valid_flags(flags) {
            return Err(format!("invalid regex flags '{flags}'"));
        }
        // Only validity matters here: of the flags only `u` and `v` change what is valid
        // ECMAScript syntax, and the compiled regex is thrown away, so it is neither
        // case-folded nor optimized.
        let options = regress::Flags {
            unicode: flags.contains('u'),
            unicode_sets: flags.contains('v'),
            no_opt: true,
            ..regress::Flags::default()
        };
        regress::Regex::from_unicode(pattern.chars().map(u32::from), options)
            .map_err(|_| "invalid regex".to_string())?;
        return Ok(Matcher::Regex {
            raw: raw.to_string(),
            pattern: pattern.to_string(),
            flags: flags.to_string(),
        });
    }
    match serde_json_path::JsonPath::parse(raw) {
        Ok(_) => Ok(Matcher::Jsonpath {
            raw: raw.to_string(),
        }),
        Err(_) => Err("invalid jsonpath".into()),
    }
}

/// ECMAScript flags: distinct letters of `dgimsuvy`, never both `u` and `v`.
fn valid_flags(flags: &str) -> bool {
    let mut seen = [false; 128];
    for c in flags.bytes() {
        if !b"dgimsuvy".contains(&c) || seen[c as usize] {
            return false;
        }
        seen[c as usize] = true;
    }
    !(seen[b'u' as usize] && seen[b'v' as usize])
}
