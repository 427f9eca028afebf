"""The package's classes used from threads other than the one that made them
(issue 33, item 8): calls one at a time from any thread just work; calls made at
once from several threads each run whole; a call that begins while another call
changing the same object has not returned raises `RuntimeError`, an `Exception`.
Never `pyo3_runtime.PanicException`, a `BaseException` that `except Exception`
lets through (it took `asyncio.run` down through `run_in_executor`)."""

import asyncio
import gc
import sys
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import idiolect

TEXT = 'intro <think>a plan</think> then <write-file path="a.ts">x < y</write-file>'
CHUNKS = [TEXT[i : i + 5] for i in range(0, len(TEXT), 5)]
WEATHER = (
    '<think>plan</think>Let me check.\n<tool_call>\n{"name": "get_weather", '
    '"arguments": {"city": "Paris"}}\n</tool_call>'
)


def on_a_new_thread(call, *args):
    """`call(*args)` run on a thread of its own: its result, or an assertion
    failure naming whatever it raised (a `BaseException` included, which would
    otherwise only be printed by the thread)."""
    outcome = {}

    def run():
        try:
            outcome["result"] = call(*args)
        except BaseException as error:  # a PanicException is one
            outcome["error"] = error

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "the call never returned"
    assert "error" not in outcome, f"the call raised {outcome.get('error')!r}"
    return outcome["result"]


def feed_all(parser, chunks):
    """The events of `chunks` fed to `parser`, then of its `finish`."""
    events = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events + parser.finish()


def events_here(dialect, chunks):
    """The events of `chunks` fed to a new parser on this thread alone."""
    return feed_all(idiolect.Parser(dialect), chunks)


def test_a_parser_made_here_is_fed_and_finished_on_another_thread():
    parser = idiolect.Parser("sections")
    events = on_a_new_thread(feed_all, parser, CHUNKS)
    assert events == events_here("sections", CHUNKS)
    assert parser.finished and parser.is_clean
    assert parser.document() == idiolect.parse("sections", TEXT)
    assert on_a_new_thread(repr, parser) == "<idiolect.Parser sections (finished)>"


def test_a_parser_made_on_another_thread_is_used_here_and_dropped_on_a_third(monkeypatch):
    parser = on_a_new_thread(idiolect.Parser, "plurnk")
    parser.feed("<<EDIT[x](y)<2>:body never closed")
    parser.finish()
    assert not on_a_new_thread(lambda: parser.is_clean)
    on_a_new_thread(parser.reset)
    assert not parser.finished and parser.dialect == "plurnk"
    # The last reference goes on the third thread, which frees the parser: an
    # error there could only be reported as unraisable.
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    box = [parser]
    del parser
    on_a_new_thread(box.clear)
    assert unraisable == []


def test_a_parser_fed_through_run_in_executor_under_asyncio_run():
    async def main():
        loop = asyncio.get_running_loop()
        parser = idiolect.Parser("sections")  # on the event loop's thread
        with ThreadPoolExecutor(max_workers=2) as pool:
            events = []
            for chunk in CHUNKS:
                events += await loop.run_in_executor(pool, parser.feed, chunk)
            events += await loop.run_in_executor(pool, parser.finish)
            document = await loop.run_in_executor(pool, parser.document)
            elsewhere = await loop.run_in_executor(pool, threading.get_ident)
        assert elsewhere != threading.get_ident()
        return events, document, parser.document()

    events, there, here = asyncio.run(main())
    assert events == events_here("sections", CHUNKS)
    assert there == here == idiolect.parse("sections", TEXT)


def test_a_chat_deltas_made_on_another_thread_is_used_here_and_on_a_third():
    stream = on_a_new_thread(idiolect.ChatDeltas, "hermes")
    first = stream.feed(WEATHER[:40])
    rest = on_a_new_thread(stream.feed, WEATHER[40:])
    assert on_a_new_thread(stream.finish) is None
    whole = idiolect.ChatDeltas("hermes")
    assert [first, rest] == [whole.feed(WEATHER[:40]), whole.feed(WEATHER[40:])]
    on_a_new_thread(stream.reset)
    assert not stream.finished
    assert on_a_new_thread(repr, stream) == "<idiolect.ChatDeltas hermes (open)>"


def test_a_chat_deltas_fed_through_run_in_executor_under_asyncio_run():
    async def main():
        loop = asyncio.get_running_loop()
        stream = idiolect.ChatDeltas("hermes", whole_calls=True)
        with ThreadPoolExecutor(max_workers=2) as pool:
            deltas = [await loop.run_in_executor(pool, stream.feed, c) for c in WEATHER]
            deltas.append(await loop.run_in_executor(pool, stream.finish))
        return [d for d in deltas if d is not None]

    deltas = asyncio.run(main())
    here = idiolect.ChatDeltas("hermes", whole_calls=True)
    want = [here.feed(c) for c in WEATHER] + [here.finish()]
    assert deltas == [d for d in want if d is not None]


def test_calls_at_once_from_several_threads_each_run_whole():
    # The order of the threads' chunks is theirs to arrange; what the package
    # owes is that every call runs whole: no chunk lost, none fed twice, no
    # exception.
    letters, times = "abcd", 300
    parser = idiolect.Parser("sections")
    stream = idiolect.ChatDeltas("hermes")
    start = threading.Barrier(len(letters))
    contents = []

    def feed(letter):
        start.wait()
        mine = []
        for _ in range(times):
            parser.feed(letter)
            delta = stream.feed(letter)
            if delta is not None:
                mine.append(delta["content"])
            assert parser.is_clean
        return mine

    with ThreadPoolExecutor(max_workers=len(letters)) as pool:
        for mine in pool.map(feed, letters, timeout=120):
            contents += mine
    parser.finish()
    last = stream.finish()
    if last is not None:
        contents.append(last["content"])
    want = Counter({letter: times for letter in letters})
    assert Counter("".join(item["text"] for item in parser.document()["items"])) == want
    assert Counter("".join(contents)) == want


def test_a_call_that_begins_while_another_changes_the_parser_raises_runtime_error():
    # The only way into a parser while one of its calls runs is Python code run
    # inside that call: a finalizer the cyclic collector calls when the call
    # allocates a container (the events' list). On Python 3.11 and earlier the
    # collector runs right there; from 3.12 it runs at the interpreter's next
    # check, after the call returned, and the other thread's calls just work.
    # The finalizer calls the parser from another thread and waits for it.
    overlaps = sys.version_info < (3, 12)
    parser = idiolect.Parser("sections")
    seen = {}

    def intrude():
        outcomes = []

        def run():
            for call in (lambda: parser.feed("intruder"), lambda: parser.is_clean):
                try:
                    outcomes.append(("returned", call()))
                except BaseException as error:  # a PanicException is one
                    outcomes.append(("raised", error))

        other = threading.Thread(target=run)
        other.start()
        other.join(timeout=60)
        seen["alive"] = other.is_alive()
        seen["outcomes"] = outcomes

    class Garbage:
        def __init__(self):
            self.cycle = self

        def __del__(self):
            intrude()

    was_enabled, thresholds = gc.isenabled(), gc.get_threshold()
    try:
        gc.collect()
        gc.disable()
        gc.set_threshold(1)
        Garbage()
        gc.enable()
        events = parser.feed("mine")
    finally:
        gc.set_threshold(*thresholds)
        if not was_enabled:
            gc.disable()
    assert seen, "the finalizer did not run"
    assert not seen["alive"], "the other thread never returned (a deadlock)"
    assert events == idiolect.Parser("sections").feed("mine")
    if overlaps:
        (fed, fed_error), (read, read_error) = seen["outcomes"]
        assert (fed, read) == ("raised", "raised"), seen["outcomes"]
        for error in (fed_error, read_error):
            assert isinstance(error, RuntimeError) and "borrowed" in str(error), repr(error)
        parser.finish()
        # The refused call changed nothing.
        assert parser.document() == idiolect.parse("sections", "mine")
    else:
        assert [outcome for outcome, _ in seen["outcomes"]] == ["returned"] * 2, seen["outcomes"]
        parser.finish()
        assert parser.document() == idiolect.parse("sections", "mineintruder")
