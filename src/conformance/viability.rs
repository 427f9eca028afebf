//! The promptness check (S4): is a held-back suffix still a viable prefix of markup?
//!
//! After every feed the runner takes the bytes delivered but not yet covered by an
//! event span (the held-back suffix) and asks the dialect's *viability rule*, stated in
//! its spec, whether a markup unit can still begin at the suffix's first byte and be
//! completed by bytes yet to come. A parser that holds text it could already have
//! emitted (everything until `finish`, or one byte more than the unit) fails here,
//! whatever the size of its hold-back bound.
//!
//! The rules are written from the specs, independently of the parsers, and they do
//! not know the parser's mode: each accepts the union over the dialect's modes (a
//! section closer prefix is viable even outside a section). That is looser than the
//! parser needs to be, never stricter, and still rules out every suffix that begins
//! with a byte that cannot start markup. A trailing incomplete UTF-8 character (at
//! most 3 bytes) is always allowed on top (S1).
//!
//! Every field family's rule is data in the corpus, `conformance/<family>.viability.json`
//! ([`data`]: regular expressions a port runs too), read from the corpus the cases
//! come from; a field family of the table without its file fails. The dialects of
//! their own (sections, anthropic-xml, kindaxml, plurnk, transcript) keep their rules
//! in Rust, below: theirs read options that size and name their markup
//! (`max_tag_bytes`, the registered sections, transcript's formats and participants),
//! which a fixed expression cannot say.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

pub mod data;

use data::DataRule;

/// Why a held-back suffix is not viable, for the failure message.
pub type Reason = String;

/// The file of `dialect`'s viability rule in the corpus at `root`.
pub fn rule_file(root: &Path, dialect: &str) -> PathBuf {
    root.join(format!("{dialect}.viability.json"))
}

/// The field families of the table (`field::families`) whose viability rule has no
/// file in the corpus at `root`.
pub fn families_without_rule(root: &Path) -> Vec<&'static str> {
    crate::field::families::names()
        .filter(|name| !rule_file(root, name).is_file())
        .collect()
}

/// A dialect's viability rule as a corpus gives it: its data file, compiled at first
/// use, or (for the dialects of their own) its Rust rule.
#[derive(Debug)]
pub struct Rule {
    dialect: String,
    file: PathBuf,
    compiled: OnceLock<Result<Option<DataRule>, Reason>>,
    /// The payload's rule, for a case whose `tool_choice` asks for one (FD-10c).
    payload: PathBuf,
    payload_compiled: OnceLock<Result<DataRule, Reason>>,
}

impl Rule {
    /// The rule of `dialect` in the corpus at `root` (read when first checked).
    pub fn new(root: &Path, dialect: &str) -> Rule {
        Rule {
            dialect: dialect.to_string(),
            file: rule_file(root, dialect),
            compiled: OnceLock::new(),
            payload: rule_file(root, "tool-choice"),
            payload_compiled: OnceLock::new(),
        }
    }

    /// The data rule, `None` for a dialect of its own without a file.
    fn compiled(&self) -> Result<Option<&DataRule>, Reason> {
        let compiled = self.compiled.get_or_init(|| {
            let shown = self.file.display();
            match std::fs::read_to_string(&self.file) {
                Ok(text) => DataRule::new(&self.dialect, &text)
                    .map(Some)
                    .map_err(|e| format!("{shown}: {e}")),
                Err(_) if !crate::field::families::is_family(&self.dialect) => Ok(None),
                Err(e) => Err(format!(
                    "{shown}: {e} (a field family's viability rule is this file)"
                )),
            }
        });
        compiled.as_ref().map(Option::as_ref).map_err(Clone::clone)
    }

    /// Checks the held-back suffix `held` with `options` (the case's merged
    /// options); `before` is everything emitted before it.
    pub fn check(&self, options: &Value, before: &[u8], held: &[u8]) -> Result<(), Reason> {
        let held = strip_partial_utf8(held);
        if held.is_empty() {
            return Ok(());
        }
        let dialect = self.dialect.as_str();
        let viable = match self.compiled()? {
            Some(rule) if payload_asked(options) => {
                rule.viable(options, before, held) || self.payload()?.viable(options, before, held)
            }
            Some(rule) => rule.viable(options, before, held),
            None => match dialect {
                "sections" => sections(options, held),
                "anthropic-xml" => anthropic_xml(options, held),
                "kindaxml" => kindaxml(options, held),
                "plurnk" => plurnk(options, held),
                "transcript" => transcript(options, before, held),
                _ => return Err(format!("no viability rule for dialect {dialect:?}")),
            },
        };
        if viable {
            Ok(())
        } else {
            Err(format!(
                "{:?} is held back, but no markup unit of {dialect} can begin at its first byte and still complete",
                String::from_utf8_lossy(held)
            ))
        }
    }
}

/// Whether the case's `tool_choice` makes the answer a JSON payload (FD-10c, FD-10d):
/// `"required"` or a function.
fn payload_asked(options: &Value) -> bool {
    match options.get("tool_choice") {
        Some(Value::String(s)) => s == "required",
        Some(Value::Object(_)) => true,
        _ => false,
    }
}

impl Rule {
    /// The payload's rule, `tool-choice.viability.json` (compiled at first use).
    fn payload(&self) -> Result<&DataRule, Reason> {
        let compiled = self.payload_compiled.get_or_init(|| {
            let shown = self.payload.display();
            std::fs::read_to_string(&self.payload)
                .map_err(|e| e.to_string())
                .and_then(|text| DataRule::new("tool-choice", &text))
                .map_err(|e| format!("{shown}: {e}"))
        });
        compiled.as_ref().map_err(Clone::clone)
    }
}

/// `held` without a trailing incomplete UTF-8 sequence (carried to the next chunk).
fn strip_partial_utf8(held: &[u8]) -> &[u8] {
    for back in 1..=3.min(held.len()) {
        let at = held.len() - back;
        let lead = held[at];
        let need = match lead {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            0x80..=0xBF => continue,
            _ => return held,
        };
        return if back < need { &held[..at] } else { held };
    }
    held
}

fn usize_option(options: &Value, key: &str, default: usize) -> usize {
    options
        .get(key)
        .and_then(Value::as_u64)
        .map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0C')
}

fn skip_ws(bytes: &[u8]) -> &[u8] {
    let n = bytes.iter().take_while(|&&b| is_ws(b)).count();
    &bytes[n..]
}

/// How `rest` relates to a name from `names` (ASCII case-insensitive when asked):
/// `None` when it is no prefix of any name and starts with none; `Some(tail)` with
/// the bytes after a complete name (empty `Some` also for a proper prefix).
fn after_name<'a>(rest: &'a [u8], names: &[String], fold_case: bool) -> Option<&'a [u8]> {
    let eq = |a: &[u8], b: &[u8]| {
        if fold_case {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    };
    let name_len = rest
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b':')
        .count();
    let word = &rest[..name_len];
    let tail = &rest[name_len..];
    names.iter().find_map(|name| {
        let name = name.as_bytes();
        if tail.is_empty() && word.len() <= name.len() && eq(word, &name[..word.len()]) {
            Some(&rest[rest.len()..])
        } else if eq(word, name) {
            Some(tail)
        } else {
            None
        }
    })
}

/// SEC-16: a candidate tag from its `<`: a viable prefix of an opener or a closer
/// of a registered spelling, at most `max_tag_bytes` long.
fn sections(options: &Value, held: &[u8]) -> bool {
    let typed: crate::sections::Options =
        crate::session::options_from_json("sections", options).unwrap_or_default();
    if held.len() > typed.max_tag_bytes || held[0] != b'<' {
        return false;
    }
    let names: Vec<String> = typed
        .sections
        .iter()
        .flat_map(|s| std::iter::once(s.name.clone()).chain(s.aliases.iter().cloned()))
        .collect();
    let rest = &held[1..];
    if let Some(closer) = rest.strip_prefix(b"/") {
        // `</` ws* name ws*, before its `>`.
        return match after_name(skip_ws(closer), &names, true) {
            Some(tail) => skip_ws(tail).is_empty(),
            None => skip_ws(closer).is_empty(),
        };
    }
    // `<` name, then attributes up to the tag's `>`.
    match after_name(rest, &names, true) {
        Some(tail) => {
            tail.is_empty() || ((is_ws(tail[0]) || tail[0] == b'/') && !tag_ends(tail, true))
        }
        None => rest.is_empty(),
    }
}

/// Whether the attribute bytes after a tag's name already hold the tag's end: a `>`
/// outside every quoted (`"…"`, `'…'`) and, with `braces`, braced (`{…}`, quotes and
/// backslash escapes inside) value. Once the end has arrived the tag is decided, so
/// nothing from its `<` may still be held back. An unfinished value leaves it open.
fn tag_ends(attrs: &[u8], braces: bool) -> bool {
    let mut at = 0;
    while at < attrs.len() {
        match attrs[at] {
            b'>' => return true,
            quote @ (b'"' | b'\'') => match memchr::memchr(quote, &attrs[at + 1..]) {
                Some(k) => at += k + 2,
                None => return false,
            },
            b'{' if braces => match braced_end(&attrs[at..]) {
                Some(k) => at += k,
                None => return false,
            },
            _ => at += 1,
        }
    }
    false
}

/// The length of the balanced `{…}` value at the start of `bytes`, if it is complete.
fn braced_end(bytes: &[u8]) -> Option<usize> {
    let (mut depth, mut at, mut quote) = (0usize, 0, None::<u8>);
    while at < bytes.len() {
        let b = bytes[at];
        match quote {
            Some(_) if b == b'\\' => at += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'"' | b'\'' | b'`' => quote = Some(b),
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(at + 1);
                    }
                }
                _ => {}
            },
        }
        at += 1;
    }
    None
}

/// The structural names of anthropic-xml (AX-2).
const AX_NAMES: [&str; 7] = [
    "thinking",
    "function_calls",
    "function_results",
    "invoke",
    "parameter",
    "result",
    "error",
];

/// A viable prefix of a structural anthropic-xml tag: `<`, optional `/`, an
/// optional (possibly partial) prefix, a (partial) structural name, then for an
/// opener attributes without `<`, for a closer whitespace only.
fn ax_tag_prefix(held: &[u8]) -> bool {
    let Some(rest) = held.strip_prefix(b"<") else {
        return false;
    };
    let (closing, rest) = match rest.strip_prefix(b"/") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let prefix = [b"ant".as_slice(), b"ml:"].concat();
    let rest = if prefix.starts_with(rest) {
        return true;
    } else {
        rest.strip_prefix(prefix.as_slice()).unwrap_or(rest)
    };
    let names: Vec<String> = AX_NAMES.iter().map(|s| s.to_string()).collect();
    match after_name(rest, &names, false) {
        Some(tail) if closing => skip_ws(tail).is_empty(),
        Some(tail) => {
            tail.is_empty()
                || ((is_ws(tail[0]) || tail[0] == b'/')
                    && !tail.contains(&b'<')
                    && !tag_ends(tail, false))
        }
        None => false,
    }
}

/// AX-21: a viable prefix of a structural tag; a parameter closer with the
/// whitespace after it and a viable prefix of the tag that may follow (AX-11); or
/// a viable prefix of an entity in result content (at most 9 bytes).
fn anthropic_xml(options: &Value, held: &[u8]) -> bool {
    let max = usize_option(options, "max_tag_bytes", 1024);
    if held.len() > max.saturating_add(16) {
        return false;
    }
    if ax_tag_prefix(held) {
        return true;
    }
    if held[0] == b'&' {
        return entity_prefix(held);
    }
    // `</parameter>` ws* then the start of what decides the value's end.
    let Some(after) = parameter_closer(held) else {
        return false;
    };
    let after = skip_ws(after);
    after.is_empty() || ax_tag_prefix(after)
}

/// The bytes after a complete parameter closer at the start of `held`.
fn parameter_closer(held: &[u8]) -> Option<&[u8]> {
    let rest = held.strip_prefix(b"</")?;
    let prefix = [b"ant".as_slice(), b"ml:"].concat();
    let rest = rest.strip_prefix(prefix.as_slice()).unwrap_or(rest);
    let rest = rest.strip_prefix(b"parameter")?;
    skip_ws(rest).strip_prefix(b">")
}

/// `&` then a viable start of a named or numeric character reference, no `;` yet.
fn entity_prefix(held: &[u8]) -> bool {
    const NAMES: [&str; 5] = ["amp", "lt", "gt", "quot", "apos"];
    if held.len() > 9 {
        return false;
    }
    let body = &held[1..];
    if NAMES.iter().any(|n| n.as_bytes().starts_with(body)) {
        return true;
    }
    match body.strip_prefix(b"#") {
        Some(num) => match num.strip_prefix(b"x").or_else(|| num.strip_prefix(b"X")) {
            Some(hex) => hex.iter().all(u8::is_ascii_hexdigit),
            None => num.iter().all(u8::is_ascii_digit),
        },
        None => false,
    }
}

/// KX-24: a candidate tag from its `<` up to (not including) a second `<`, at most
/// `max_tag_bytes`; a literal block's trailing `]` or `]]`; with escapes, a
/// trailing `\`.
fn kindaxml(options: &Value, held: &[u8]) -> bool {
    let max = usize_option(options, "max_tag_bytes", 4096);
    match held {
        [b'<', rest @ ..] => held.len() <= max && !rest.contains(&b'<') && !tag_ends(rest, false),
        b"]" | b"]]" | b"\\" => true,
        _ => false,
    }
}

/// The nine plurnk OPs (PL-4).
const PLURNK_OPS: [&str; 9] = [
    "FIND", "READ", "EDIT", "COPY", "MOVE", "SHOW", "HIDE", "SEND", "EXEC",
];

/// PL-22: an opener candidate or a statement held whole from its `<<`: `<`, or `<<`
/// then a prefix of an OP, or a whole OP and what follows it, at most
/// `max_statement_bytes + 4`.
fn plurnk(options: &Value, held: &[u8]) -> bool {
    let max = usize_option(options, "max_statement_bytes", 1 << 20);
    if held.len() > max.saturating_add(4) {
        return false;
    }
    let Some(rest) = held.strip_prefix(b"<") else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    let Some(rest) = rest.strip_prefix(b"<") else {
        return false;
    };
    // An OP (perhaps still partial), then a suffix and the rest of the statement, up
    // to its close tag (PL-6: `:` OP suffix, decided by the character after it).
    if PLURNK_OPS.iter().any(|op| op.as_bytes().starts_with(rest)) {
        return true;
    }
    if !PLURNK_OPS.iter().any(|op| rest.starts_with(op.as_bytes())) {
        return false;
    }
    let suffix_char = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    let word = &rest[..rest.iter().take_while(|b| suffix_char(b)).count()];
    let close = [b":".as_slice(), word].concat();
    let body = &rest[word.len()..];
    !memchr::memmem::find_iter(body, &close).any(|k| {
        body.get(k + close.len())
            .is_some_and(|next| !suffix_char(next))
    })
}

/// TR-73/TR-80: per mode. Render holds its whole input (TR-60). Scan holds a viable
/// prefix of a stop sequence; structure-aware, that prefix may be followed by what
/// anthropic-xml may hold (stops are looked for only where the block state is
/// decided). Parse holds a viable prefix of a turn header or terminator.
fn transcript(options: &Value, before: &[u8], held: &[u8]) -> bool {
    use crate::transcript::{Format, Mode};
    let typed: crate::transcript::Options =
        crate::session::options_from_json("transcript", options).unwrap_or_default();
    match typed.mode {
        Mode::Render | Mode::Request => true,
        Mode::Scan => {
            let stops = crate::transcript::scan_stops(&typed);
            let stop_prefix = |a: &[u8]| stops.iter().any(|s| s.as_bytes().starts_with(a));
            if stop_prefix(held) {
                return true;
            }
            typed.structure_aware
                && (0..held.len())
                    .any(|at| stop_prefix(&held[..at]) && anthropic_xml(&Value::Null, &held[at..]))
        }
        Mode::Parse => {
            let at_line_start = before.is_empty() || before.ends_with(b"\n");
            match typed.format {
                Format::HumanAssistant => {
                    let headers: [&[u8]; 2] = [b"\n\nHuman:", b"\n\nAssistant:"];
                    headers.iter().any(|h| {
                        h.starts_with(held) || (before.is_empty() && h[2..].starts_with(held))
                    })
                }
                Format::Chatml => {
                    let start = b"<|im_start|>";
                    if start.starts_with(held) || b"<|im_end|>".starts_with(held) {
                        return true;
                    }
                    held.starts_with(start)
                        && !held[start.len()..].contains(&b'\n')
                        && held.len() <= start.len() + typed.max_name_bytes + 1
                }
                Format::Participants | Format::Completions => {
                    if typed.format == Format::Completions && typed.eot.as_bytes().starts_with(held)
                    {
                        return true;
                    }
                    // A completions block starts after its end token too (TR-41), and a
                    // block's header may name any speaker (TR-42, TR-43).
                    let completions = typed.format == Format::Completions;
                    let at_line_start =
                        at_line_start || (completions && before.ends_with(typed.eot.as_bytes()));
                    let (line_start, header) = match held.strip_prefix(b"\n") {
                        Some(rest) => (true, rest),
                        None => (at_line_start, held),
                    };
                    // A name, then its `:` (the optional space after it decides).
                    let name = header.strip_suffix(b":").unwrap_or(header);
                    let known = |name: &[u8]| {
                        if typed.participants.is_empty() || completions {
                            name.len() <= typed.max_name_bytes
                        } else {
                            typed.participants.iter().any(|p| {
                                let p = p.as_bytes();
                                if name.len() < header.len() {
                                    p == name
                                } else {
                                    p.starts_with(name)
                                }
                            })
                        }
                    };
                    line_start && !name.contains(&b'\n') && !name.contains(&b':') && known(name)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(dialect: &str) -> Rule {
        Rule::new(Path::new("no-corpus-here"), dialect)
    }

    fn ok(dialect: &str, held: &str) -> bool {
        rule(dialect)
            .check(&Value::Null, b"", held.as_bytes())
            .is_ok()
    }

    #[test]
    fn a_tag_prefix_is_viable_and_text_before_it_is_not() {
        assert!(ok("sections", "<wri"));
        assert!(ok("sections", "<write-file path=\"a"));
        assert!(ok("sections", "</ THINK "));
        assert!(!ok("sections", "x<wri"));
        assert!(!ok("sections", "<wrong"));
        assert!(!ok("sections", "<think>"));
        assert!(ok("kindaxml", "<cite id=1"));
        assert!(!ok("kindaxml", "a<cite"));
        assert!(ok("plurnk", "<<ED"));
        assert!(!ok("plurnk", "<<<EDIT"));
        assert!(ok("anthropic-xml", "</parameter>\n <inv"));
        assert!(!ok("anthropic-xml", "</parameter> x"));
        assert!(ok("anthropic-xml", "&am"));
    }

    #[test]
    fn a_partial_utf8_character_may_trail() {
        let sections = rule("sections");
        assert!(sections.check(&Value::Null, b"", &[0xC3]).is_ok());
        assert!(sections.check(&Value::Null, b"", b"<thi\xE2\x82").is_ok());
        assert!(sections.check(&Value::Null, b"", b"x\xE2\x82").is_err());
    }
}
