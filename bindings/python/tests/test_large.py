"""Large inputs: the paths the corpus's small cases do not take.

`parse` of an input of 512 KiB or more parses on a thread of its own while the
calling thread converts the elements that settle (dialects whose leading array
settles in order, and kindaxml's segments); the document must be the one the streaming parser folds, with
and without spans. The conversion pauses the garbage collector and untracks
dicts that cannot be part of a cycle; the collector's state must be the caller's
afterwards, and such a dict must be tracked again once a container goes in it.
"""

import gc

import pytest

import idiolect
from corpus import load_cases

# Every dialect whose whole parse takes the typed path, settled or not.
DIALECTS = ["sections", "anthropic-xml", "plurnk", "kindaxml", "transcript", "hermes"]
LARGE = 600_000


def large_input(dialect: str) -> bytes:
    """The corpus inputs of `dialect` one after another, repeated past LARGE bytes."""
    inputs = [case.input for case in load_cases() if case.dialect == dialect]
    assert inputs, dialect
    joined = b"\n".join(inputs)
    return joined * (LARGE // len(joined) + 1)


def streamed(dialect: str, data: bytes, spans: bool) -> dict:
    parser = idiolect.Parser(dialect, spans=spans)
    for i in range(0, len(data), 65_536):
        parser.feed(data[i : i + 65_536])
    parser.finish()
    return parser.document()


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("spans", [False, True])
@pytest.mark.parametrize("kind", ["bytes", "str"])
def test_a_large_parse_is_the_document_the_streaming_parser_folds(dialect, spans, kind):
    data = large_input(dialect)
    assert len(data) >= LARGE
    # A str is fed as text, in pieces cut at character boundaries, and not
    # validated again; bytes are decoded as they come (S7).
    if kind == "str":
        text = data.decode("utf-8", errors="replace")
        data = text.encode()
    else:
        text = data
    assert idiolect.parse(dialect, text, spans=spans) == streamed(dialect, data, spans)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_large_str_of_wide_characters_parses_as_its_utf8_streamed(dialect):
    # Three-byte characters throughout: the pieces of a whole parse (a power of
    # two bytes each) would end inside one unless moved to its boundary (a
    # `str` cut inside a character panics).
    text = ("\u20ac" * 1000 + "\n") * (LARGE // 3001 + 1)
    assert idiolect.parse(dialect, text) == streamed(dialect, text.encode(), False)
    assert idiolect.parse_many(dialect, [text, text[:5]], threads=2) == [
        streamed(dialect, text.encode(), False),
        streamed(dialect, text[:5].encode(), False),
    ]


@pytest.mark.parametrize(
    "first, last",
    [("", ""), ("", "\u0100"), ("\u20ac", ""), ("\u00ff", "\U0001f600")],
    ids=["latin1", "wide-at-the-end", "wide-at-the-start", "widest-at-the-end"],
)
def test_a_large_kindaxml_text_keeps_every_character_whatever_its_width(first, last):
    # The calling thread puts the output text together as Latin-1 from the
    # segments' texts, long and short (one-character segments here), as it
    # converts them; a character from U+0100 on, wherever it comes, must leave
    # that text to the UTF-8 path.
    unit = (
        "na\u00efve \u00fcber <cite id=1>caf\u00e9 \u00ff line</cite>\nplain ascii <b>x</b> \u00e0\n"
        "<cite id=2>\u00e9</cite> and <cite id=3>y</cite>.\n"
    )
    text = first + unit * (LARGE // len(unit) + 1) + last
    document = idiolect.parse("kindaxml", text)
    assert document == streamed("kindaxml", text.encode(), False)
    assert document["text"].startswith(first + "na\u00efve \u00fcber caf\u00e9 \u00ff line")
    assert document["text"].endswith("x \u00e0\n\u00e9 and y.\n" + last)


def test_parse_many_of_large_documents_keeps_order_on_two_threads():
    data = large_input("sections")
    texts = [data[: 150_000 + i * 1000] for i in range(4)] + [b"<think>x</think>"]
    one = [idiolect.parse("sections", t) for t in texts]
    assert idiolect.parse_many("sections", texts, threads=2) == one
    assert idiolect.parse_many("sections", texts, threads=1) == one


def test_the_collector_is_left_as_the_caller_had_it():
    data = large_input("kindaxml")
    assert gc.isenabled()
    gc.disable()
    try:
        idiolect.parse("kindaxml", data)
        idiolect.parse_many("sections", [data[:1000]] * 3, threads=2)
        assert not gc.isenabled()
    finally:
        gc.enable()
    idiolect.parse("sections", large_input("sections"))
    assert gc.isenabled()


def test_an_untracked_dict_is_tracked_again_when_a_container_goes_in():
    document = idiolect.parse("sections", large_input("sections"))
    items = document["items"]
    assert gc.is_tracked(document) and gc.is_tracked(items)
    item = next(i for i in items if i["type"] == "section")
    assert not gc.is_tracked(item), "a dict of strs, bools and a dict of strs"
    item["self"] = [item]
    assert gc.is_tracked(item)
    del item["self"]
