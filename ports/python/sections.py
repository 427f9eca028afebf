#!/usr/bin/env python3
"""A second implementation of idiolect's `sections` dialect (spec/sections.md).

Standard library only. It exists to show that the conformance corpus can be run
by a port; it follows the spec's rule numbers (SEC-n) rather than idiolect's code.

    parser = Parser(options)             # options: the dialect's options JSON, as a dict
    events = parser.feed(b"<think>pl")   # any number of times, chunks split anywhere
    events += parser.finish()
    document = fold(events)              # {"items": [...]} (SEC-17)

Run as a program it speaks the port protocol of conformance/README.md
("Running a port"): IDIOLECT_DIALECT, IDIOLECT_OPTIONS and IDIOLECT_CHUNKED in the
environment, the input (or a JSON array of byte chunks) on stdin, the document on
stdout. With no environment it parses stdin whole with the default options:

    python3 ports/python/sections.py < input.txt
"""

import codecs
import json
import os
import sys

# --------------------------------------------------------------------------- options

DEFAULT_SECTIONS = [
    {"name": "think"},
    {"name": "write-file", "aliases": ["create-file", "dyad-write"]},
    {"name": "summary"},
    {"name": "run-bash"},
]
DEFAULT_MAX_TAG_BYTES = 65536
MIN_MAX_TAG_BYTES = 3  # the shortest tag, `<a>`

WS = frozenset(" \t\r\n\f")  # SEC-4: not vertical tab, not NBSP
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
NOT_KEY = WS | frozenset("\"'`<>/={}")  # SEC-5: a key is anything else
NOT_UNQUOTED = frozenset("\"'`<")  # SEC-5: malformed inside an unquoted value
BRACE_STRING_QUOTES = frozenset("\"'`")  # SEC-5: strings skipped inside {...}
MAX_BRACE_DEPTH = 64  # SEC-6


class OptionsError(ValueError):
    """The options cannot be used (SEC-3, SEC-8)."""


def ascii_lower(s):
    """Lowercases A-Z only (SEC-3, SEC-5): `Ä` stays `Ä`, the Kelvin sign stays itself."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


class Registry:
    """The recognized sections (SEC-3): canonical names and every spelling of each."""

    def __init__(self, sections):
        self.names = []  # canonical name, by section index, as registered
        self.spellings = {}  # lowercased spelling -> section index
        self.prefixes = set()  # every prefix of every spelling (lowercased)
        self.section_prefixes = []  # the same, per section (for its closer)
        for index, spec in enumerate(sections):
            own = set()
            for spelling in [spec["name"], *spec.get("aliases", [])]:
                if not spelling or not set(spelling) <= NAME_CHARS:
                    raise OptionsError(f"section name {spelling!r} must be one or more of A-Z a-z 0-9 _ -")
                lower = spelling.lower()  # ASCII only, checked above
                if lower in self.spellings:
                    raise OptionsError(f"section name {spelling!r} is registered twice")
                self.spellings[lower] = index
                own.update(lower[:k] for k in range(len(lower) + 1))
            self.names.append(spec["name"])
            self.section_prefixes.append(own)
            self.prefixes |= own

    def viable(self, name_so_far, section=None):
        """True if the (lowercased) name read so far can still become a spelling
        of any section, or of `section` only."""
        prefixes = self.prefixes if section is None else self.section_prefixes[section]
        return name_so_far in prefixes

    def lookup(self, name):
        """The section index of a complete (lowercased) spelling, or None."""
        return self.spellings.get(name)


def check_options(options):
    """Validates an options object; returns (registry, max_tag_bytes)."""
    if not isinstance(options, dict):
        raise OptionsError("options must be a JSON object")
    unknown = set(options) - {"sections", "max_tag_bytes"}
    if unknown:
        raise OptionsError(f"unknown option {sorted(unknown)[0]!r}")
    sections = options.get("sections", DEFAULT_SECTIONS)
    if not isinstance(sections, list):
        raise OptionsError("sections must be a list")
    for spec in sections:
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise OptionsError("each section needs a string name")
        if set(spec) - {"name", "aliases"}:
            raise OptionsError(f"unknown key in section {spec['name']!r}")
        aliases = spec.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise OptionsError(f"aliases of {spec['name']!r} must be a list of strings")
    bound = options.get("max_tag_bytes", DEFAULT_MAX_TAG_BYTES)
    if not isinstance(bound, int) or isinstance(bound, bool):
        raise OptionsError("max_tag_bytes must be an integer")
    if bound < MIN_MAX_TAG_BYTES:
        raise OptionsError(f"max_tag_bytes is {bound}; it must be at least {MIN_MAX_TAG_BYTES}")
    return Registry(sections), bound


def utf8_len(ch):
    """Bytes of one character in UTF-8 (SEC-1 offsets, SEC-8 bound)."""
    cp = ord(ch)
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


# ------------------------------------------------------------------------ candidates

MORE, DONE, FAIL = "more", "done", "fail"


class Candidate:
    """A tag being recognized one character at a time, from its `<` on.

    `step(ch)` returns MORE while the characters so far are a viable prefix
    (SEC-16), DONE at a complete tag, FAIL as soon as they cannot complete. The
    bound of SEC-8 is checked here too: a candidate that has reached
    `max_tag_bytes` bytes without its `>` fails.
    """

    def __init__(self, registry, max_tag_bytes):
        self.registry = registry
        self.max_tag_bytes = max_tag_bytes
        self.size = 1  # bytes from the `<` inclusive

    def step(self, ch):
        verdict = self.state(ch)  # each state is a method taking the next character
        self.size += utf8_len(ch)
        if verdict is MORE and self.size >= self.max_tag_bytes:
            return FAIL
        return verdict


class Opener(Candidate):
    """`"<" name ( ws+ attribute )* ws* "/"? ">"` (SEC-4, SEC-5, SEC-6)."""

    def __init__(self, registry, max_tag_bytes):
        super().__init__(registry, max_tag_bytes)
        self.state = self.name_char
        self.tag = ""  # the name as written
        self.section = None
        self.attrs = {}
        self.key = ""
        self.value = ""
        self.depth = 0  # brace depth of a {...} value
        self.quote = None  # the quote of a quoted value, or of a string inside {...}
        self.escaped = False  # right after a backslash in a string inside {...} (SEC-5a)
        self.self_closing = False

    def put(self, value):
        # SEC-5: keys ASCII-lowercased; a repeated key keeps its first position
        # (a dict does exactly that) and takes the last value.
        self.attrs[ascii_lower(self.key)] = value

    def end(self, self_closing=False):
        self.self_closing = self_closing
        return DONE

    def name_char(self, ch):
        if ch in NAME_CHARS and self.registry.viable((self.tag + ch).lower()):
            self.tag += ch
            return MORE
        self.section = self.registry.lookup(self.tag.lower())
        if self.section is None:  # empty, unregistered, or cut short (SEC-7)
            return FAIL
        return self.after_name(ch)

    def after_name(self, ch):
        # SEC-4: whitespace must come between the name and the first attribute.
        if ch in WS:
            self.state = self.between
            return MORE
        if ch == ">":
            return self.end()
        if ch == "/":
            self.state = self.slash
            return MORE
        return FAIL

    def after_value(self, ch):
        # SEC-4a: after a closing quote or brace the next key may follow at once.
        return self.between(ch)

    def between(self, ch):
        if ch in WS:
            return MORE
        if ch == ">":
            return self.end()
        if ch == "/":
            self.state = self.slash
            return MORE
        if ch in NOT_KEY:
            return FAIL
        self.key = ch
        self.state = self.key_char
        return MORE

    def key_char(self, ch):
        if ch not in NOT_KEY:
            self.key += ch
            return MORE
        if ch == "=":
            self.state = self.before_value
            return MORE
        if ch in WS:
            self.state = self.after_key
            return MORE
        if ch in "/>":
            self.put("")  # a boolean attribute
            return self.between(ch)
        return FAIL

    def after_key(self, ch):
        # `key ws*`: either `=` follows, or the key was a boolean attribute.
        if ch in WS:
            return MORE
        if ch == "=":
            self.state = self.before_value
            return MORE
        self.put("")
        return self.between(ch)

    def before_value(self, ch):
        if ch in WS:
            return MORE
        if ch in "\"'":
            self.quote = ch
            self.value = ""
            self.state = self.quoted
            return MORE
        if ch == "{":
            self.value = ch
            self.depth = 1
            self.quote = None
            self.escaped = False
            self.state = self.braced
            return MORE
        if ch == ">" or ch in NOT_UNQUOTED:  # `a=>` is malformed, an empty value
            return FAIL
        self.value = ch
        self.state = self.unquoted
        return MORE

    def quoted(self, ch):
        if ch == self.quote:
            self.put(self.value)
            self.state = self.after_value
        else:
            self.value += ch
        return MORE

    def braced(self, ch):
        self.value += ch
        if self.quote is not None:  # inside a string in the braces
            if self.escaped:  # SEC-5a: the character after a backslash never ends it
                self.escaped = False
            elif ch == "\\":
                self.escaped = True
            elif ch == self.quote:
                self.quote = None
        elif ch in BRACE_STRING_QUOTES:
            self.quote = ch
        elif ch == "{":
            self.depth += 1
            if self.depth > MAX_BRACE_DEPTH:
                return FAIL
        elif ch == "}":
            self.depth -= 1
            if self.depth == 0:
                self.put(self.value)
                self.state = self.after_value
        return MORE

    def unquoted(self, ch):
        if ch in WS:
            self.put(self.value)  # `a=b/ >`: the slash belongs to the value
            self.state = self.between
            return MORE
        if ch == ">":
            # A `/` right before `>` is the self-closing slash, not the value's.
            self_closing = self.value.endswith("/")
            value = self.value[:-1] if self_closing else self.value
            if not value:  # `a=/>`
                return FAIL
            self.put(value)
            return self.end(self_closing)
        if ch in NOT_UNQUOTED:
            return FAIL
        self.value += ch
        return MORE

    def slash(self, ch):
        return self.end(self_closing=True) if ch == ">" else FAIL


class Closer(Candidate):
    """`"</" ws* name ws* ">"` where name is a spelling of the open section (SEC-10)."""

    def __init__(self, registry, max_tag_bytes, section):
        super().__init__(registry, max_tag_bytes)
        self.section = section
        self.name = ""  # lowercased
        self.state = self.slash

    def slash(self, ch):
        if ch != "/":
            return FAIL
        self.state = self.lead
        return MORE

    def lead(self, ch):
        return MORE if ch in WS else self.name_char(ch)

    def name_char(self, ch):
        if ch in NAME_CHARS and self.registry.viable(self.name + ch.lower(), self.section):
            self.name += ch.lower()
            self.state = self.name_char
            return MORE
        if self.registry.lookup(self.name) != self.section:  # empty, or another section
            return FAIL
        self.state = self.trail
        return self.trail(ch)

    def trail(self, ch):
        if ch in WS:
            return MORE
        return DONE if ch == ">" else FAIL


# ---------------------------------------------------------------------------- parser


class Parser:
    """The streaming parser: `feed(bytes)` and `finish()` return events (SEC-14)."""

    def __init__(self, options=None):
        self.registry, self.max_tag_bytes = check_options(options or {})
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # SEC-1
        self.open = None  # index of the open section, or None outside sections
        self.candidate = None  # the tag being recognized, or None
        self.held = []  # the candidate's characters from earlier feeds, from its `<`
        self.piece = []  # text or content decided but not yet emitted
        self.pos = 0  # byte offset where the next event starts
        self.events = []

    def feed(self, data):
        self.take(self.decoder.decode(data))
        return self.emit()

    def finish(self):
        self.take(self.decoder.decode(b"", final=True))
        # A candidate cut by the end of input is not a tag (SEC-12, SEC-13); its
        # `<` is decided and the rest rescanned, which may start another one.
        while self.candidate is not None:
            self.scan(self.reject(), 1)
        if self.open is not None:  # SEC-12: unclosed, zero-width end
            self.flush()
            self.events.append(
                {"type": "section_end", "name": self.registry.names[self.open],
                 "closed": False, "span": [self.pos, self.pos]})
            self.open = None
        return self.emit()

    def take(self, text):
        """Takes newly decoded text. A candidate held from an earlier feed resumes
        where it stopped; its characters are only looked at again if it fails."""
        if self.candidate is None:
            self.scan(text, 0)
            return
        i, verdict = self.run(text, 0)
        if verdict is MORE:
            self.held.append(text)
            return
        if verdict is DONE:
            self.held = []
            self.complete()
            self.scan(text, i)
        else:
            self.scan(self.reject() + text, 1)

    def run(self, text, i):
        """Steps the candidate through text from i; returns (next index, verdict)."""
        step = self.candidate.step
        n = len(text)
        while i < n:
            verdict = step(text[i])
            i += 1
            if verdict is not MORE:
                return i, verdict
        return i, MORE

    def scan(self, text, i):
        """Scans text from index i with no candidate active."""
        while True:
            start = text.find("<", i)
            if start < 0:
                self.piece.append(text[i:])
                return
            self.piece.append(text[i:start])
            if self.open is None:
                self.candidate = Opener(self.registry, self.max_tag_bytes)
            else:
                self.candidate = Closer(self.registry, self.max_tag_bytes, self.open)
            i, verdict = self.run(text, start + 1)
            if verdict is MORE:  # SEC-16: hold the candidate back
                self.held = [text[start:]]
                return
            if verdict is DONE:
                self.complete()
            else:
                self.reject()
                i = start + 1

    def reject(self):
        """The candidate failed (SEC-8a): only its `<` is decided, as text or
        content, and scanning resumes at the next character. Returns the
        characters it held from earlier feeds (from its `<`), to be rescanned
        from index 1."""
        self.candidate = None
        self.piece.append("<")
        held = "".join(self.held)
        self.held = []
        return held

    def complete(self):
        """The candidate's `>` was seen: emit its events and switch state."""
        tag, self.candidate = self.candidate, None
        self.flush()
        start, end = self.pos, self.pos + tag.size
        self.pos = end
        if isinstance(tag, Opener):
            name = self.registry.names[tag.section]
            self.events.append(
                {"type": "section_start", "name": name, "tag": tag.tag, "attrs": tag.attrs,
                 "self_closing": tag.self_closing, "span": [start, end]})
            if tag.self_closing:  # SEC-11, SEC-14: zero-width end right after
                self.events.append(
                    {"type": "section_end", "name": name, "closed": True, "span": [end, end]})
            else:
                self.open = tag.section
        else:
            self.events.append(
                {"type": "section_end", "name": self.registry.names[self.open],
                 "closed": True, "span": [start, end]})
            self.open = None

    def flush(self):
        """Emits the decided text or content as one event."""
        text = "".join(self.piece)
        self.piece = []
        if text:
            end = self.pos + len(text.encode("utf-8"))
            kind = "text" if self.open is None else "content"
            self.events.append({"type": kind, "text": text, "span": [self.pos, end]})
            self.pos = end

    def emit(self):
        self.flush()
        events, self.events = self.events, []
        return events


# -------------------------------------------------------------------------- document


def fold(events):
    """Folds events into the document of SEC-17 (adjacent text merged)."""
    items = []
    pieces = []  # per item, the pieces of its text or content, joined at the end
    for event in events:
        kind = event["type"]
        if kind == "text":
            if not items or items[-1]["type"] != "text":
                items.append({"type": "text", "text": ""})
                pieces.append([])
            pieces[-1].append(event["text"])
        elif kind == "section_start":
            item = {"type": "section", "name": event["name"], "tag": event["tag"],
                    "attrs": event["attrs"], "content": "", "closed": False}
            if event["self_closing"]:
                item["self_closing"] = True
            items.append(item)
            pieces.append([])
        elif kind == "content":
            pieces[-1].append(event["text"])
        elif kind == "section_end":
            items[-1]["closed"] = event["closed"]
    for item, parts in zip(items, pieces):
        item["text" if item["type"] == "text" else "content"] = "".join(parts)
    return {"items": items}


# ---------------------------------------------------------------------- port protocol


def main():
    dialect = os.environ.get("IDIOLECT_DIALECT", "sections")
    if dialect != "sections":
        print(f"sections.py: dialect {dialect!r} is not supported (only 'sections')", file=sys.stderr)
        return 2
    try:
        options = {}
        if os.environ.get("IDIOLECT_OPTIONS"):
            with open(os.environ["IDIOLECT_OPTIONS"], encoding="utf-8") as f:
                options = json.load(f)
        parser = Parser(options)
    except (OSError, ValueError) as e:  # OptionsError and JSON errors are ValueErrors
        print(f"sections.py: options: {e}", file=sys.stderr)
        return 2

    data = sys.stdin.buffer.read()
    if os.environ.get("IDIOLECT_CHUNKED", "0") == "1":
        chunks = [bytes(chunk) for chunk in json.loads(data)]
    else:
        chunks = [data]
    events = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.finish()

    out = json.dumps(fold(events), ensure_ascii=False, indent=2) + "\n"
    sys.stdout.buffer.write(out.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
