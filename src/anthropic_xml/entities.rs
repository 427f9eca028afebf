//! XML entity decoding for result content and attribute values (AX-17).

use std::borrow::Cow;

/// The longest entity, `&` to `;` inclusive (`&#x10FFFF;`, `&#1114111;`).
pub const MAX_ENTITY_BYTES: usize = 10;

const NAMED: [(&str, char); 5] = [
    ("lt", '<'),
    ("gt", '>'),
    ("amp", '&'),
    ("quot", '"'),
    ("apos", '\''),
];

/// The character an entity body (between `&` and `;`) stands for, if it is one.
fn entity_char(body: &str) -> Option<char> {
    if let Some((_, c)) = NAMED.iter().find(|(n, _)| *n == body) {
        return Some(*c);
    }
    let num = body.strip_prefix('#')?;
    let (digits, radix, max_len) = match num.strip_prefix(['x', 'X']) {
        Some(hex) => (hex, 16, 6),
        None => (num, 10, 7),
    };
    if digits.is_empty() || digits.len() > max_len || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let code = u32::from_str_radix(digits, radix).ok()?;
    char::from_u32(code).filter(|c| *c != '\0')
}

/// Decodes every entity in `text`; anything that is not one stays verbatim.
pub fn decode(text: &str) -> Cow<'_, str> {
    let Some(first) = memchr::memchr(b'&', text.as_bytes()) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..first]);
    let mut rest = &text[first..];
    while !rest.is_empty() {
        // `rest` starts with `&` here.
        let window = &rest.as_bytes()[..rest.len().min(MAX_ENTITY_BYTES)];
        let decoded = memchr::memchr(b';', window)
            .and_then(|semi| entity_char(&rest[1..semi]).map(|c| (c, semi + 1)));
        let used = match decoded {
            Some((c, len)) => {
                out.push(c);
                len
            }
            None => {
                out.push('&');
                1
            }
        };
        rest = &rest[used..];
        let next = memchr::memchr(b'&', rest.as_bytes()).unwrap_or(rest.len());
        out.push_str(&rest[..next]);
        rest = &rest[next..];
    }
    Cow::Owned(out)
}

/// Whether `tail` (starting with `&`, no `;` yet) could still become an entity: the
/// bytes a streaming decoder must hold back (AX-21).
pub fn is_viable_prefix(tail: &str) -> bool {
    let Some(body) = tail.strip_prefix('&') else {
        return false;
    };
    if tail.len() >= MAX_ENTITY_BYTES {
        return false;
    }
    if NAMED.iter().any(|(n, _)| n.starts_with(body)) {
        return true;
    }
    let Some(num) = body.strip_prefix('#') else {
        return false;
    };
    match num.strip_prefix(['x', 'X']) {
        Some(hex) => hex.len() <= 6 && hex.chars().all(|c| c.is_ascii_hexdigit()),
        None => num.len() <= 7 && num.chars().all(|c| c.is_ascii_digit()),
    }
}

/// Where a streaming decoder should stop in `run` so that no entity is split: the
/// start of a trailing viable entity prefix, or `run.len()`.
pub fn safe_end(run: &str) -> usize {
    let from = run.len().saturating_sub(MAX_ENTITY_BYTES - 1);
    match memchr::memrchr(b'&', &run.as_bytes()[from..]) {
        Some(k) if is_viable_prefix(&run[from + k..]) => from + k,
        _ => run.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_and_numeric_entities_decode() {
        assert_eq!(
            decode("a &lt;b&gt; &amp; &quot;&apos; &#65;&#x42;&#X43;"),
            "a <b> & \"' ABC"
        );
    }

    #[test]
    fn non_entities_stay_verbatim() {
        for s in [
            "&",
            "&nbsp;",
            "&#0;",
            "&#xD800;",
            "&#x110000;",
            "&#12345678;",
            "&lt",
            "& lt;",
            "&&amp;",
        ] {
            let want = if s == "&&amp;" { "&&" } else { s };
            assert_eq!(decode(s), want, "{s}");
        }
    }

    #[test]
    fn safe_end_holds_back_only_viable_entity_prefixes() {
        assert_eq!(safe_end("ab&am"), 2);
        assert_eq!(safe_end("ab&#x1F"), 2);
        assert_eq!(safe_end("ab&"), 2);
        assert_eq!(safe_end("ab&zz"), 5);
        assert_eq!(safe_end("ab&amp;"), 7);
        assert_eq!(safe_end("ab&#12345678"), 12);
    }
}
