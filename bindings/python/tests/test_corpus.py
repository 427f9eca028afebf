"""The whole conformance corpus through the package: every case of every dialect,
whole (with `parse` from str when the input is UTF-8, and from bytes), in one feed,
at 1-byte chunks, and in a few seeded random chunkings; the document must equal the
expected JSON under the Rust runner's rules, and the events' spans must tile the
input (contract S8). `parse_many` on two threads must give every dialect's
documents in order."""

import json

import pytest

import idiolect
from corpus import chunks_of, load_cases, random_chunking, same

CASES = load_cases()
RANDOM_CHUNKINGS = 3


def test_the_corpus_covers_every_dialect():
    assert {case.dialect for case in CASES} == set(idiolect.dialects())
    assert len(CASES) > 500


def mismatch(case, label, got):
    return (
        f"{case.id} {label}: the document differs from {case.name}.json\n"
        f"--- expected\n{json.dumps(case.expected, indent=2)}\n"
        f"--- got\n{json.dumps(got, indent=2)}"
    )


def streamed(case, chunks, label):
    parser = idiolect.Parser(case.dialect, case.options)
    covered = 0
    for chunk in [*chunks, None]:
        events = parser.feed(chunk) if chunk is not None else parser.finish()
        for event in events:
            assert isinstance(event["type"], str), f"{case.id} {label}: {event}"
            start, end = event["span"]
            assert start == covered, f"{case.id} {label}: S8 spans do not tile: {event}"
            covered = end
    # Spans count bytes of the input as decoded (invalid UTF-8 becomes U+FFFD).
    decoded = len(case.input.decode("utf-8", errors="replace").encode())
    assert covered == decoded, f"{case.id} {label}: spans end at {covered} of {decoded}"
    return parser.document()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case):
    got = idiolect.parse(case.dialect, case.input, case.options)
    assert same(case.expected, got), mismatch(case, "whole (bytes)", got)
    try:
        text = case.input.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None:
        got = idiolect.parse(case.dialect, text, case.options)
        assert same(case.expected, got), mismatch(case, "whole (str)", got)
    schedule = [("one feed", [case.input]), ("1-byte chunks", chunks_of(case.input, 1))]
    schedule += [
        (f"random chunking #{salt}", random_chunking(case.input, case.name, salt))
        for salt in range(RANDOM_CHUNKINGS)
    ]
    for label, chunks in schedule:
        got = streamed(case, chunks, label)
        assert same(case.expected, got), mismatch(case, label, got)


def test_parse_many_gives_every_document_in_order():
    by_dialect = {}
    for case in CASES:
        by_dialect.setdefault((case.dialect, json.dumps(case.options)), []).append(case)
    for (dialect, _), cases in by_dialect.items():
        got = idiolect.parse_many(dialect, [c.input for c in cases], cases[0].options, threads=2)
        assert len(got) == len(cases)
        for case, document in zip(cases, got):
            assert same(case.expected, document), mismatch(case, "parse_many", document)
