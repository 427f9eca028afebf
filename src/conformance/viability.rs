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

use serde_json::Value;

/// Why a held-back suffix is not viable, for the failure message.
pub type Reason = String;

/// Checks the held-back suffix `held` of dialect `dialect` with `options` (the
/// case's merged options); `before` is everything emitted before it.
pub fn check(dialect: &str, options: &Value, before: &[u8], held: &[u8]) -> Result<(), Reason> {
    let held = strip_partial_utf8(held);
    if held.is_empty() {
        return Ok(());
    }
    let viable = match dialect {
        "sections" => sections(options, held),
        "anthropic-xml" => anthropic_xml(options, held),
        "kindaxml" => kindaxml(options, held),
        "plurnk" => plurnk(options, held),
        "transcript" => transcript(options, before, held),
        "hermes" => wrapper(options, held, THINK) || hermes(held),
        "qwen3-coder" => wrapper(options, held, THINK) || qwen3_coder(held, &QWEN3_CODER),
        "seed-oss" => qwen3_coder(held, &SEED_OSS),
        "deepseek-v3" | "deepseek-v3.1" => wrapper(options, held, THINK) || deepseek(held),
        "harmony" => wrapper(options, held, &[]) || harmony(before, held),
        "mistral" => wrapper(options, held, &["bracket"]) || mistral(before, held),
        "llama3-json" => llama3_json(before, held),
        "pythonic" => pythonic(before, held),
        "reasoning" => reasoning(options, held),
        "kimi-k2" => wrapper(options, held, THINK) || kimi_k2(held),
        "minimax-m2" => wrapper(options, held, THINK) || minimax_m2(held),
        "glm" => wrapper(options, held, THINK) || glm(held),
        "deepseek-dsml" => wrapper(options, held, THINK) || dsml(held, &DSML_SENTINELS),
        "gigachat-gcml" => wrapper(options, held, THINK) || dsml(held, &["｜GCML｜"]),
        "step3" => wrapper(options, held, THINK) || step3(held),
        _ => return Err(format!("no viability rule for dialect {dialect:?}")),
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

/// Whether `held` is a proper or whole prefix of one of `markers`, or starts with
/// one of them and the rest satisfies `then`.
fn marker_prefix(held: &[u8], markers: &[&str]) -> bool {
    markers.iter().any(|m| m.as_bytes().starts_with(held))
}

/// HE-13: a viable prefix of a marker (the reasoning markers of the accepted
/// spellings, `reasoning_markers`, default `think`); the whitespace after a call
/// object and a prefix of the closer; a call opener, whitespace and the call object
/// up to the end of its name (held whole: any bytes after the `{`).
fn hermes(held: &[u8]) -> bool {
    if marker_prefix(held, &["<tool_call>", "</tool_call>"]) {
        return true;
    }
    let after_ws = skip_ws(held);
    if after_ws.len() < held.len() && b"</tool_call>".starts_with(after_ws) {
        return true;
    }
    match held.strip_prefix(b"<tool_call>") {
        Some(rest) => {
            let rest = skip_ws(rest);
            rest.is_empty() || rest[0] == b'{'
        }
        None => false,
    }
}

/// A name of qwen3-coder up to its `>`: no `>`, `<` or newline (QC-5).
fn qc_name_prefix(rest: &[u8]) -> bool {
    !rest.iter().any(|&b| b == b'>' || b == b'<' || b == b'\n')
}

/// The call wrapper and the other fixed markers of a family of qwen3-coder's
/// calls (`<function=NAME>` and `<parameter=KEY>` inside a wrapper).
struct QcMarkers {
    /// The wrapper's opener and closer.
    wrapper: [&'static str; 2],
    /// The family's other markers (the think markers aside where the option
    /// `reasoning_markers` spells them).
    others: &'static [&'static str],
}

/// qwen3-coder's (QC-3; the think markers are the option's, QC-18).
const QWEN3_CODER: QcMarkers = QcMarkers {
    wrapper: ["<tool_call>", "</tool_call>"],
    others: &[],
};

/// seed-oss's (SO-2): its own reasoning markers and the budget reflection's closer.
const SEED_OSS: QcMarkers = QcMarkers {
    wrapper: ["<seed:tool_call>", "</seed:tool_call>"],
    others: &[
        "<seed:think>",
        "</seed:think>",
        "</seed:cot_budget_reflect>",
    ],
};

/// A viable prefix of `<function=NAME>` or `<parameter=KEY>`, or of one of the
/// fixed markers of the family.
fn qc_marker(held: &[u8], family: &QcMarkers) -> bool {
    const MARKERS: [&str; 4] = ["<function=", "</function>", "<parameter=", "</parameter>"];
    if marker_prefix(held, &MARKERS)
        || marker_prefix(held, &family.wrapper)
        || marker_prefix(held, family.others)
    {
        return true;
    }
    ["<function=", "<parameter="]
        .iter()
        .any(|m| held.strip_prefix(m.as_bytes()).is_some_and(qc_name_prefix))
}

/// QC-16 (and SO-20 for seed-oss's markers): a viable prefix of a marker; a call
/// opener, whitespace and a viable prefix of the function opener; whitespace and a
/// viable prefix of a marker (between parameters, after a function); inside a
/// value, an optional newline, a parameter closer, whitespace and a viable prefix
/// of what may follow it, or a viable prefix of a nested opener (QC-19, the same
/// prefixes as a marker's).
fn qwen3_coder(held: &[u8], family: &QcMarkers) -> bool {
    if qc_marker(held, family) {
        return true;
    }
    if let Some(rest) = held.strip_prefix(family.wrapper[0].as_bytes()) {
        let rest = skip_ws(rest);
        if rest.is_empty() || qc_marker(rest, family) {
            return true;
        }
    }
    let after_ws = skip_ws(held);
    if after_ws.is_empty() || qc_marker(after_ws, family) {
        return true;
    }
    let value = held.strip_prefix(b"\n").unwrap_or(held);
    if let Some(rest) = value.strip_prefix(b"</parameter>") {
        let rest = skip_ws(rest);
        return rest.is_empty() || qc_marker(rest, family);
    }
    // A value whose parameter closer was left out ends at a function closer
    // followed by the call's closer or the end of input (QC-15).
    if let Some(rest) = value.strip_prefix(b"</function>") {
        return family.wrapper[1].as_bytes().starts_with(skip_ws(rest));
    }
    false
}

/// The markers of both DeepSeek families (D3-2, D3-3), the think markers aside
/// (D3-19: the option's spellings).
const DEEPSEEK_MARKERS: [&str; 10] = [
    "<｜end▁of▁sentence｜>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool_calls_begin｜>",
    "<｜tool calls begin｜>",
    "<｜tool\\_calls\\_begin｜>",
    "<｜tool▁calls｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
];

/// D3-17, D31-9: a viable prefix of a marker; whitespace (a calls section, or
/// after a call's object) followed by a viable prefix of a marker or of the
/// closing fence and call-end; a call header, from its call-begin (bounded by its
/// grammar: a 256-byte name, whitespace around the fence).
fn deepseek(held: &[u8]) -> bool {
    if marker_prefix(held, &DEEPSEEK_MARKERS)
        || held.starts_with("<｜tool▁call▁begin｜>".as_bytes())
    {
        return true;
    }
    let rest = skip_ws(held);
    if rest.is_empty() || marker_prefix(rest, &DEEPSEEK_MARKERS) || b"```".starts_with(rest) {
        return true;
    }
    match rest.strip_prefix(b"```") {
        Some(after) => {
            let after = skip_ws(after);
            after.is_empty() || marker_prefix(after, &DEEPSEEK_MARKERS)
        }
        None => false,
    }
}

/// The markers of harmony (HA-2).
const HARMONY_MARKERS: [&str; 7] = [
    "<|start|>",
    "<|channel|>",
    "<|constrain|>",
    "<|message|>",
    "<|end|>",
    "<|call|>",
    "<|return|>",
];

/// HA-17: a viable prefix of a marker; a header from its `<|start|>` or
/// `<|channel|>` (bounded by its grammar), or the first header at offset 0;
/// whitespace (after a call's `<|message|>` or its object) followed by a viable
/// prefix of a marker.
fn harmony(before: &[u8], held: &[u8]) -> bool {
    if marker_prefix(held, &HARMONY_MARKERS) {
        return true;
    }
    // At offset 0 the first header is undecided until the byte after its
    // `<|message|>` arrives (a call's content must start with `{`, HA-10); its
    // fields are bounded (HA-3), so it never reaches 512 bytes.
    if before.is_empty() && held.len() <= 512 {
        let message = b"<|message|>";
        match memchr::memmem::find(held, message) {
            None => return true,
            Some(at) if skip_ws(&held[at + message.len()..]).is_empty() => return true,
            Some(_) => {}
        }
    }
    if held.starts_with(b"<|start|>") || held.starts_with(b"<|channel|>") {
        return true;
    }
    let rest = skip_ws(held);
    rest.is_empty() || marker_prefix(rest, &HARMONY_MARKERS)
}

/// The markers of mistral (MI-2), the reasoning markers aside (MI-18: the option's
/// spellings).
const MISTRAL_MARKERS: [&str; 3] = ["[TOOL_CALLS]", "[CALL_ID]", "[ARGS]"];

/// MI-16: a viable prefix of a marker; a call group from its `[TOOL_CALLS]`
/// (its header bounded by the grammar); inside an array form (the last
/// `[TOOL_CALLS]` emitted opened one), the bytes of an element whose call has not
/// started.
fn mistral(before: &[u8], held: &[u8]) -> bool {
    if marker_prefix(held, &MISTRAL_MARKERS) || held.starts_with(b"[TOOL_CALLS]") {
        return true;
    }
    let group = b"[TOOL_CALLS]";
    let last = before.windows(group.len()).rposition(|w| w == group);
    last.is_some_and(|at| skip_ws(&before[at + group.len()..]).first() == Some(&b'['))
}

const LLAMA3_MARKERS: [&str; 9] = [
    "<|python_tag|>",
    "<think>",
    "</think>",
    "<|eom_id|>",
    "<|eot_id|>",
    "[THINK]",
    "[/THINK]",
    "◁think▷",
    "◁/think▷",
];

/// Whether `before` has started a call group of llama3-json: a tag, or a bare
/// object or built-in call at the start of the answer (the bytes after the last
/// reasoning closer, or all of them).
fn lj_group_seen(before: &[u8]) -> bool {
    let tag = b"<|python_tag|>";
    if before.windows(tag.len()).any(|w| w == tag) {
        return true;
    }
    let answer = ["</think>", "[/THINK]", "◁/think▷"]
        .iter()
        .filter_map(|close| {
            let close = close.as_bytes();
            before
                .windows(close.len())
                .rposition(|w| w == close)
                .map(|at| at + close.len())
        })
        .max()
        .map_or(before, |at| &before[at..]);
    let answer = skip_ws(answer);
    answer.first() == Some(&b'{') || answer.windows(6).any(|w| w == b".call(")
}

/// LJ-14: a viable prefix of a marker; the tag and the unit after it; at the start
/// of the answer (nothing before, or right after the reasoning closer), whitespace
/// and a unit that may become a call; anything inside a call group.
fn llama3_json(before: &[u8], held: &[u8]) -> bool {
    if marker_prefix(held, &LLAMA3_MARKERS) || held.starts_with(b"<|python_tag|>") {
        return true;
    }
    let after_reasoning = ["</think>", "[/THINK]", "◁/think▷"]
        .iter()
        .any(|closer| before.ends_with(closer.as_bytes()));
    if before.is_empty() || after_reasoning {
        let rest = skip_ws(held);
        if rest.is_empty() || rest[0] == b'{' || rest[0] == b'_' || rest[0].is_ascii_alphabetic() {
            return true;
        }
    }
    lj_group_seen(before)
}

const PYTHONIC_MARKERS: [&str; 8] = [
    "<|python_start|>",
    "<|python_end|>",
    "<think>",
    "</think>",
    "[THINK]",
    "[/THINK]",
    "◁think▷",
    "◁/think▷",
];

/// Whether `rest` (after a list's `[`) may still become a decided call head:
/// whitespace, a name, `(`, a keyword and `=` (PY-4).
fn py_head_prefix(rest: &[u8]) -> bool {
    rest.iter().all(|&b| {
        b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'(' | b')' | b'=') || is_ws(b)
    })
}

/// Whether `before` holds a call list's start: `[`, whitespace, a name and `(`.
fn py_list_seen(before: &[u8]) -> bool {
    before.iter().enumerate().any(|(i, &b)| {
        if b != b'[' {
            return false;
        }
        let rest = skip_ws(&before[i + 1..]);
        let name = rest
            .iter()
            .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
            .count();
        name > 0 && skip_ws(&rest[name..]).first() == Some(&b'(')
    })
}

/// PY-14: a viable prefix of a marker; the wrapper's opener, whitespace and a
/// list's start; a list's `[` and a prefix of a decided call head; anything after a
/// list has started (the call being read, the bytes between calls, the wrapper's
/// closer).
fn pythonic(before: &[u8], held: &[u8]) -> bool {
    if marker_prefix(held, &PYTHONIC_MARKERS) {
        return true;
    }
    if let Some(rest) = held.strip_prefix(b"<|python_start|>") {
        let rest = skip_ws(rest);
        if rest.is_empty() || (rest[0] == b'[' && py_head_prefix(&rest[1..])) {
            return true;
        }
    }
    if let Some(rest) = held.strip_prefix(b"[") {
        if py_head_prefix(rest) {
            return true;
        }
    }
    py_list_seen(before)
}

/// The reasoning wrappers' spellings and markers (RS-2).
const SPELLINGS: [(&str, [&str; 2]); 3] = [
    ("think", ["<think>", "</think>"]),
    ("bracket", ["[THINK]", "[/THINK]"]),
    ("triangle", ["◁think▷", "◁/think▷"]),
];

/// A field family's default `reasoning_markers`: its own `<think>` (RS-11).
const THINK: &[&str] = &["think"];

/// RS-9, RS-11: a viable prefix of a marker of a spelling the option
/// `reasoning_markers` accepts (`default` when the option is absent).
fn wrapper(options: &Value, held: &[u8], default: &[&str]) -> bool {
    let accepted = |name: &str| match options.get("reasoning_markers") {
        Some(Value::Array(list)) => list.iter().any(|v| v == name),
        _ => default.contains(&name),
    };
    SPELLINGS
        .iter()
        .filter(|(name, _)| accepted(name))
        .any(|(_, markers)| marker_prefix(held, markers))
}

/// RS-9: a viable prefix of an accepted marker (`reasoning_markers`, default all
/// three spellings).
fn reasoning(options: &Value, held: &[u8]) -> bool {
    wrapper(options, held, &["think", "bracket", "triangle"])
}

/// The markers of kimi-k2 (KK-2), the think markers aside (KK-18: the option's
/// spellings).
const KIMI_K2_MARKERS: [&str; 8] = [
    "<|im_end|>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_section_end|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
];

/// KK-16: a viable prefix of a marker; whitespace (a calls section, or after a
/// call's object) followed by a viable prefix of a marker; a call header, from its
/// call-begin (bounded by its grammar: a 256-byte name, whitespace runs).
fn kimi_k2(held: &[u8]) -> bool {
    if marker_prefix(held, &KIMI_K2_MARKERS) || held.starts_with(b"<|tool_call_begin|>") {
        return true;
    }
    let rest = skip_ws(held);
    rest.is_empty() || marker_prefix(rest, &KIMI_K2_MARKERS)
}

/// The fixed markers of minimax-m2 (MM-2), and the openers with a name up to
/// their `name` (the think markers aside: MM-16, the option's spellings).
const MINIMAX_M2_MARKERS: [&str; 6] = [
    "<minimax:tool_call>",
    "</minimax:tool_call>",
    "<invoke",
    "</invoke>",
    "<parameter",
    "</parameter>",
];

/// A viable prefix of a minimax-m2 marker, an invoke or parameter opener included
/// up to its `>` (MM-2, MM-3: whitespace, `name`, `=`, a quoted name of 1 to 256
/// bytes without `"`, `<`, `>` or a newline; other attributes before or after it).
fn mm_marker(held: &[u8]) -> bool {
    if marker_prefix(held, &MINIMAX_M2_MARKERS) {
        return true;
    }
    ["<invoke", "<parameter"]
        .iter()
        .find_map(|m| held.strip_prefix(m.as_bytes()))
        .is_some_and(mm_attributes)
}

/// The attributes of an invoke or parameter opener so far (MM-2): each after
/// whitespace, `name="NAME"` once, others `ATTR="VALUE"` (at most 8 on each side).
fn mm_attributes(mut rest: &[u8]) -> bool {
    let mut seen_name = false;
    let mut others = 0;
    loop {
        let after = skip_ws(rest);
        if after.is_empty() {
            return true;
        }
        if after.len() == rest.len() {
            return false;
        }
        let key_len = after
            .iter()
            .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':'))
            .count();
        if key_len == 0 || key_len > 64 {
            return false;
        }
        if key_len == after.len() {
            return true;
        }
        let is_name = &after[..key_len] == b"name";
        if is_name && seen_name {
            return false;
        }
        if is_name {
            others = 0;
        } else if others == 8 {
            return false;
        }
        let after = skip_ws(&after[key_len..]);
        let Some(after) = after.strip_prefix(b"=") else {
            return after.is_empty();
        };
        let after = skip_ws(after);
        let Some(quoted) = after.strip_prefix(b"\"") else {
            return after.is_empty();
        };
        let len = quoted
            .iter()
            .take_while(|&&b| !matches!(b, b'"' | b'<' | b'>' | b'\n'))
            .count();
        if len > if is_name { 256 } else { 1024 } {
            return false;
        }
        match quoted.get(len) {
            None => return true,
            Some(b'"') if !is_name || len > 0 => {
                seen_name |= is_name;
                others += usize::from(!is_name);
                rest = &quoted[len + 1..];
            }
            Some(_) => return false,
        }
    }
}

/// MM-14: a viable prefix of a marker; the block opener, whitespace and a viable
/// prefix of an invoke opener; whitespace and a viable prefix of a marker; inside a
/// value, a parameter closer with whitespace and a viable prefix of what may follow.
fn minimax_m2(held: &[u8]) -> bool {
    if mm_marker(held) {
        return true;
    }
    if let Some(rest) = held.strip_prefix(b"<minimax:tool_call>") {
        let rest = skip_ws(rest);
        if rest.is_empty() || mm_marker(rest) {
            return true;
        }
    }
    let after_ws = skip_ws(held);
    if after_ws.is_empty() || mm_marker(after_ws) {
        return true;
    }
    if let Some(rest) = held.strip_prefix(b"</parameter>") {
        let rest = skip_ws(rest);
        return rest.is_empty() || mm_marker(rest);
    }
    false
}

/// The names after a DSML tag's sentinel (DS-3, DS-4): the block's names, then the
/// elements'.
const DSML_NAMES: [&str; 7] = [
    "function_calls",
    "functioncalls",
    "tool_calls",
    "toolcalls",
    "calls",
    "invoke",
    "parameter",
];

/// DSML's sentinels (DS-3): single and doubled. GigaChat's GCML has its own (GC-2).
const DSML_SENTINELS: [&str; 2] = ["｜DSML｜", "｜｜DSML｜｜"];

/// How a DSML tag so far (DS-3) with one of `sentinels` stands: `None` when no tag
/// can begin with it; `Some(None)` for a viable prefix of a tag; `Some(Some(rest))`
/// for a whole tag without attributes (a block opener or any closer) followed by
/// `rest`.
fn dsml_tag<'h>(held: &'h [u8], sentinels: &[&str]) -> Option<Option<&'h [u8]>> {
    let rest = held.strip_prefix(b"<")?;
    let (closer, rest) = match rest.strip_prefix(b"/") {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    let mut after = None;
    for sentinel in sentinels {
        if sentinel.as_bytes().starts_with(rest) {
            return Some(None);
        }
        if let Some(a) = rest.strip_prefix(sentinel.as_bytes()) {
            after = Some(a);
        }
    }
    let after = after?;
    let after = after.strip_prefix(b" ").unwrap_or(after);
    for name in DSML_NAMES {
        if name.as_bytes().starts_with(after) {
            return Some(None);
        }
        let Some(tail) = after.strip_prefix(name.as_bytes()) else {
            continue;
        };
        let attributes = !closer && matches!(name, "invoke" | "parameter");
        if attributes {
            // An opener up to its `>` (DS-3, DS-5: bounded attributes).
            return mm_attributes(tail).then_some(None);
        }
        return tail.strip_prefix(b">").map(Some);
    }
    None
}

/// Whether `held` is a viable prefix of a DSML marker (DS-3).
fn dsml_marker(held: &[u8], sentinels: &[&str]) -> bool {
    matches!(dsml_tag(held, sentinels), Some(None))
}

/// DS-17 (GC-4 with GCML's sentinel): a viable prefix of a marker; a block opener
/// (or a parameter closer), whitespace and a viable prefix of a marker; whitespace
/// and a viable prefix of a marker (between calls and parameters, and before an
/// invoke opener whose invoke's closer was left out, DS-9).
fn dsml(held: &[u8], sentinels: &[&str]) -> bool {
    if dsml_marker(held, sentinels) {
        return true;
    }
    if let Some(Some(rest)) = dsml_tag(held, sentinels) {
        let rest = skip_ws(rest);
        if rest.is_empty() || dsml_marker(rest, sentinels) {
            return true;
        }
    }
    let after_ws = skip_ws(held);
    after_ws.is_empty() || dsml_marker(after_ws, sentinels)
}

/// The markers of step3 without attributes (S3-2), and its openers with a name up
/// to their `name` (the think markers aside: S3-11, the option's spellings).
const STEP3_MARKERS: [&str; 9] = [
    "<｜tool_calls_begin｜>",
    "<｜tool_calls_end｜>",
    "<｜tool_call_begin｜>",
    "<｜tool_call_end｜>",
    "<｜tool_sep｜>",
    "<steptml:invoke",
    "</steptml:invoke>",
    "<steptml:parameter",
    "</steptml:parameter>",
];

/// S3-15: a viable prefix of a marker (an invoke or parameter opener up to its
/// `>`: whitespace, `name="NAME"`, a name of 1 to 256 bytes, S3-3, S3-4); after
/// the block opener, the call opener, `function` or the separator, whitespace and a
/// viable prefix of the rest of a call head; whitespace and a viable prefix of a
/// marker (between calls and parameters); a parameter closer with whitespace and a
/// viable prefix of what may follow it.
fn step3(held: &[u8]) -> bool {
    fn marker(held: &[u8]) -> bool {
        marker_prefix(held, &STEP3_MARKERS)
            || ["<steptml:invoke", "<steptml:parameter"]
                .iter()
                .find_map(|m| held.strip_prefix(m.as_bytes()))
                .is_some_and(mm_attributes)
    }
    // A call head so far (S3-6), from the block opener or the call opener: each
    // part after optional whitespace, `function` and the separator optional.
    fn head(mut rest: &[u8]) -> bool {
        for part in [
            "<｜tool_calls_begin｜>",
            "<｜tool_call_begin｜>",
            "function",
            "<｜tool_sep｜>",
        ] {
            rest = skip_ws(rest);
            if part.as_bytes().starts_with(rest) {
                return true;
            }
            if let Some(after) = rest.strip_prefix(part.as_bytes()) {
                rest = after;
            }
        }
        marker(skip_ws(rest))
    }
    let after_ws = skip_ws(held);
    if marker(after_ws)
        || ["<｜tool_calls_begin｜>", "<｜tool_call_begin｜>"]
            .iter()
            .any(|m| after_ws.starts_with(m.as_bytes()))
            && head(after_ws)
    {
        return true;
    }
    if let Some(rest) = held.strip_prefix(b"</steptml:parameter>") {
        return marker(skip_ws(rest));
    }
    false
}

/// The markers of glm (GL-2) and its stop tokens, stray markers (GL-17), the
/// think markers aside (GL-16: the option's spellings).
const GLM_MARKERS: [&str; 8] = [
    "<tool_call>",
    "</tool_call>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<|observation|>",
    "<|user|>",
];

/// A glm name or key so far: at most 256 bytes without `stops`.
fn glm_run(rest: &[u8], stops: &[u8]) -> usize {
    rest.iter().take_while(|b| !stops.contains(b)).count()
}

/// GL-14: a viable prefix of a marker; a call opener with whitespace, a viable
/// name, whitespace and a prefix of `<arg_key>` or `</tool_call>`; whitespace and a
/// viable prefix of a marker; a key opener with the key so far, its closer,
/// whitespace and a prefix of `<arg_value>`; a value closer with whitespace and a
/// viable prefix of what may follow it.
fn glm(held: &[u8]) -> bool {
    if marker_prefix(held, &GLM_MARKERS) {
        return true;
    }
    if let Some(rest) = held.strip_prefix(b"<tool_call>") {
        let rest = skip_ws(rest);
        let name = glm_run(rest, b" \t\r\n<>");
        if name <= 256 {
            let after = skip_ws(&rest[name..]);
            if after.is_empty()
                || (name > 0 && marker_prefix(after, &["<arg_key>", "</tool_call>"]))
            {
                return true;
            }
        }
    }
    let after_ws = skip_ws(held);
    if after_ws.is_empty() || marker_prefix(after_ws, &GLM_MARKERS) {
        return true;
    }
    if let Some(rest) = after_ws.strip_prefix(b"<arg_key>") {
        let key = glm_run(rest, b"<\n");
        if key > 256 {
            return false;
        }
        let rest = &rest[key..];
        if rest.is_empty() || (key > 0 && b"</arg_key>".starts_with(rest)) {
            return true;
        }
        if let Some(after) = rest.strip_prefix(b"</arg_key>") {
            return key > 0 && b"<arg_value>".starts_with(skip_ws(after));
        }
        return false;
    }
    if let Some(rest) = held.strip_prefix(b"</arg_value>") {
        let rest = skip_ws(rest);
        return rest.is_empty() || marker_prefix(rest, &["<arg_key>", "</tool_call>"]);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(dialect: &str, held: &str) -> bool {
        check(dialect, &Value::Null, b"", held.as_bytes()).is_ok()
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
        assert!(check("sections", &Value::Null, b"", &[0xC3]).is_ok());
        assert!(check("sections", &Value::Null, b"", b"<thi\xE2\x82").is_ok());
        assert!(check("sections", &Value::Null, b"", b"x\xE2\x82").is_err());
    }
}
