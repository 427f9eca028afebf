//! Typing a complete statement: its header is taken apart once, then each slot and the body
//! get their per-OP meaning (PL-9 to PL-13). The first problem, in input order, becomes the
//! statement's one error (PL-16, PL-17).

use indexmap::map::Entry;
use indexmap::IndexMap;
use pest::Parser as _;

use super::grammar::{PlurnkGrammar, Rule};
use super::model::{
    Body, LineMarker, Matcher, Op, ParamValue, ParseError, Path, Position, Signal, Source,
    Statement, UrlPath,
};
use super::probe::StatementProbe;
use super::scan::{self, Header, Slot};

/// The largest magnitude an integer may have: what JavaScript holds exactly (PL-10).
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// How deep a matcher's brackets may nest before it is refused (PL-13).
pub const MAX_MATCHER_NESTING: usize = 64;

/// The longest xpath, regex or jsonpath matcher that is checked (PL-13); a longer one is
/// refused, so that the stack its check may need stays bounded.
pub const MAX_MATCHER_BYTES: usize = 16 * 1024;

/// A problem at a byte offset of the statement, with its source and text.
type Problem = (usize, Source, String);

/// Builds the statement `unit[..body_end]` (header and body, without the close tag).
pub fn build(
    unit: &str,
    probe: &StatementProbe,
    body_end: usize,
    position: Position,
) -> Result<Statement, ParseError> {
    type_statement(unit, probe, body_end, position)
        .map_err(|(at, source, text)| ParseError::new(position.after(&unit[..at]), source, &text))
}

fn type_statement(
    unit: &str,
    probe: &StatementProbe,
    body_end: usize,
    position: Position,
) -> Result<Statement, Problem> {
    if let Some(problem) = probe.deferred() {
        return Err(problem.clone());
    }
    let body_start = probe.body_start();
    // The probe recognizes the `header` rule exactly, and the scanner takes apart what
    // that rule accepts (the tests check both against pest).
    let header = Header::scan(&unit[..body_start])
        .ok_or_else(|| (0, Source::Lexer, "malformed statement header".to_string()))?;
    let op = header.op;
    let mut statement = Statement {
        op,
        suffix: header.suffix.to_string(),
        signal: None,
        path: None,
        line_marker: None,
        body: None,
        position,
    };
    for slot in header.slots() {
        match slot {
            Slot::Signal { at, text } => statement.signal = signal(op, text, at)?,
            Slot::Path { at, text } => {
                statement.path = path(text, "path").map_err(|e| (at, Source::Visitor, e))?
            }
            Slot::Marker { first, last } => statement.line_marker = Some(line_marker(first, last)?),
        }
    }
    let body = &unit[body_start..body_end];
    if !body.is_empty() {
        statement.body =
            Some(self::body(op, body).map_err(|(source, text)| (body_start, source, text))?);
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

fn signal(op: Op, content: &str, at: usize) -> Result<Option<Signal>, Problem> {
    let entries: Vec<&str> = scan::tags(content).collect();
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
            [one] if scan::is_int_entry(one) => number(one).map(Some),
            _ => wrong("integer for SEND"),
        },
        Op::EXEC => match entries.as_slice() {
            [one] if scan::is_runtime_entry(one) => Ok(Some(Signal::Runtime(one.to_string()))),
            _ => wrong("Runtime Tag for EXEC"),
        },
        Op::HIDE => {
            let integers = entries.iter().filter(|e| scan::is_int_entry(e)).count();
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

fn line_marker(first: (usize, &str), last: Option<(usize, &str)>) -> Result<LineMarker, Problem> {
    let int = |(at, digits): (usize, &str)| integer(digits).ok_or_else(|| out_of_range(at, digits));
    Ok(LineMarker {
        first: int(first)?,
        last: last.map(int).transpose()?,
    })
}

/// Reads a path slot's text (PL-11): `None` when empty.
fn path(text: &str, what: &str) -> Result<Option<Path>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    parse_path(text, what).map(Some)
}

/// Reads a non-empty path text as local or URL (PL-11); `what` names the place for errors.
pub fn parse_path(text: &str, what: &str) -> Result<Path, String> {
    if !scan::has_url_prefix(text) {
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

fn body(op: Op, raw: &str) -> Result<Body, (Source, String)> {
    Ok(match op {
        Op::EDIT | Op::EXEC => Body::Raw(raw.to_string()),
        Op::COPY | Op::MOVE => {
            Body::Path(parse_path(raw, "body").map_err(|e| (Source::Visitor, e))?)
        }
        Op::SEND => Body::Send {
            raw: raw.to_string(),
            json: serde_json::from_str(raw).unwrap_or(serde_json::Value::Null),
        },
        Op::FIND | Op::READ | Op::SHOW | Op::HIDE => {
            Body::Matcher(matcher(raw).map_err(|text| (Source::Visitor, text))?)
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

fn matcher(raw: &str) -> Result<Matcher, String> {
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
        return check_matcher(raw);
    }
    // The validators recurse on more than brackets (a run of unary minus in XPath, a long
    // alternation in a regex), at most a few frames per byte: a long matcher is checked on
    // a stack segment sized for its length, whatever stack the caller has left.
    stacker::grow(STACK_BASE + STACK_PER_BYTE * raw.len(), || {
        check_matcher(raw)
    })
}

/// Matchers up to this length are checked on the caller's stack.
const SMALL_MATCHER_BYTES: usize = 256;
/// Stack for checking a longer matcher: a base plus a share per byte.
const STACK_BASE: usize = 1 << 20;
const STACK_PER_BYTE: usize = 4096;

fn check_matcher(raw: &str) -> Result<Matcher, String> {
    if raw.starts_with("//") {
        return match sxd_xpath::Factory::new().build(raw) {
            Ok(Some(_)) => Ok(Matcher::Xpath {
                raw: raw.to_string(),
            }),
            _ => Err("invalid xpath".into()),
        };
    }
    if raw.starts_with('/') {
        let literal = PlurnkGrammar::parse(Rule::regex_literal, raw)
            .ok()
            .and_then(|mut pairs| pairs.next())
            .ok_or_else(|| "regex body missing closing /".to_string())?;
        let mut parts = literal.into_inner();
        let pattern = parts.next().map(|p| p.as_str()).unwrap_or("");
        let flags = parts.next().map(|p| p.as_str()).unwrap_or("");
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
