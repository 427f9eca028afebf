"""The package's API: names, the streaming idiom, parse_many, render, spans."""

from concurrent.futures import ThreadPoolExecutor

import idiolect


def test_dialects_lists_every_dialect_once():
    names = idiolect.dialects()
    assert "sections" in names and "transcript" in names
    assert len(names) == len(set(names))


def test_family_for_model_gives_the_family_and_the_templates_options():
    found = idiolect.family_for_model("deepseek-ai/DeepSeek-R1-0528")
    assert found == {
        "family": "deepseek-v3",
        "pattern": "deepseek-r1*",
        "options": {"start_in_reasoning": True},
    }
    hybrid = idiolect.family_for_model("Qwen/Qwen3-8B")
    assert hybrid is not None and hybrid["family"] == "hermes"
    assert "enable_thinking" in hybrid["note"]
    assert idiolect.family_for_model("acme/widget-7b") is None
    # The answer's options are options the family takes.
    assert idiolect.parse(found["family"], "plan</think>done", found["options"])["items"][0][
        "type"
    ] == "reasoning"


def test_parse_takes_str_or_bytes_and_gives_the_same_document():
    text = "<think>plan</think>done"
    assert idiolect.parse("sections", text) == idiolect.parse("sections", text.encode())
    document = idiolect.parse("sections", text)
    assert [item["type"] for item in document["items"]] == ["section", "text"]


def test_parser_events_fold_into_the_document_parse_gives():
    text = "intro <think>a plan</think> then <write-file path=\"a.ts\">x < y</write-file>"
    parser = idiolect.Parser("sections")
    events = []
    for i in range(0, len(text), 4):
        events += parser.feed(text[i : i + 4])
    events += parser.finish()
    assert parser.finished
    assert parser.document() == idiolect.parse("sections", text)
    assert events[0]["type"] == "text" and events[0]["span"][0] == 0
    assert events[-1]["span"][1] == len(text.encode())
    assert parser.is_clean


def test_events_are_what_idiolect_stream_prints():
    parser = idiolect.Parser("sections")
    events = parser.feed("<think>hi</think>") + parser.finish()
    assert events[0] == {
        "type": "section_start",
        "name": "think",
        "tag": "think",
        "attrs": {},
        "self_closing": False,
        "span": [0, 7],
    }
    assert list(events[0]) == ["type", "name", "tag", "attrs", "self_closing", "span"]
    assert events[1] == {"type": "content", "text": "hi", "span": [7, 9]}


def test_is_clean_turns_false_on_an_error():
    parser = idiolect.Parser("plurnk")
    parser.feed("<<EDIT[x](y)<2>:body never closed")
    assert parser.is_clean
    parser.finish()
    assert not parser.is_clean
    assert parser.document()["items"][-1]["kind"] == "error"


def test_reset_starts_a_new_input():
    parser = idiolect.Parser("sections")
    parser.feed("<think>a</think>")
    parser.finish()
    parser.reset()
    assert not parser.finished
    parser.feed("b")
    parser.finish()
    assert parser.document() == idiolect.parse("sections", "b")


def test_document_before_finish_holds_what_is_decided():
    parser = idiolect.Parser("sections")
    parser.feed("<think>a</think> and more")
    partial = parser.document()
    assert partial["items"][0]["name"] == "think"


def test_parse_many_keeps_order_on_any_thread_count():
    texts = [f"<think>{i}</think>" * (i % 7) + f"tail {i}" for i in range(200)]
    one = [idiolect.parse("sections", t) for t in texts]
    for threads in (None, 1, 2, 3):
        assert idiolect.parse_many("sections", texts, threads=threads) == one
    assert idiolect.parse_many("sections", iter(texts[:3])) == one[:3]
    assert idiolect.parse_many("sections", []) == []


def test_parse_many_of_many_small_records_keeps_order():
    # Records of a few bytes are claimed dozens at a time, by each thread in
    # turn; every document must land in its record's place, none left out.
    texts = [f"<think>{i}</think>" if i % 3 else f"plain {i}" for i in range(5000)]
    one = [idiolect.parse("sections", t) for t in texts]
    for threads in (2, 3, 8):
        assert idiolect.parse_many("sections", texts, threads=threads) == one


def test_parse_many_called_from_several_python_threads_at_once():
    # Each call's threads take turns with the GIL among themselves, while the
    # other calls' threads hold it between their turns.
    unit = "We shipped <cite id=1>the fix</cite> and <b>more</b>.\n"
    groups = [[unit * (k + i % 9) for i in range(300)] for k in range(1, 5)]
    want = [[idiolect.parse("kindaxml", t) for t in texts] for texts in groups]
    with ThreadPoolExecutor(max_workers=len(groups)) as pool:
        calls = [pool.submit(idiolect.parse_many, "kindaxml", t, None, 2) for t in groups]
        got = [call.result(timeout=120) for call in calls]
    assert got == want


def test_spans_option_puts_spans_in_the_document():
    plain = idiolect.parse("sections", "<think>a</think>")
    spanned = idiolect.parse("sections", "<think>a</think>", spans=True)
    assert "span" not in plain["items"][0]
    assert spanned["items"][0]["span"] == [0, 16]
    assert idiolect.parse_many("sections", ["<think>a</think>"], spans=True) == [spanned]


def test_options_change_the_parse():
    options = {"sections": [{"name": "plan"}]}
    document = idiolect.parse("sections", "<plan>x</plan><think>y</think>", options)
    assert document["items"][0]["name"] == "plan"
    assert document["items"][1]["type"] == "text"


def test_render_gives_text_that_parses_back():
    calls = [{"name": "get_weather", "input": {"city": "Paris"}}]
    text = idiolect.render("anthropic-xml", "calls", calls)
    blocks = idiolect.parse("anthropic-xml", text)["blocks"]
    assert [b["type"] for b in blocks] == ["tool_calls"]
    call = blocks[0]["calls"][0]
    assert (call["name"], call["input"], call["complete"]) == ("get_weather", {"city": "Paris"}, True)


def test_invalid_utf8_is_replaced_and_reported():
    parser = idiolect.Parser("sections")
    events = parser.feed(b"ok \xff done") + parser.finish()
    assert any(e["type"] == "invalid_utf8" and e["replaced"] == 1 for e in events)
    assert idiolect.parse("sections", b"ok \xff done")["items"][0]["text"] == "ok \ufffd done"


def test_strs_keep_every_character_at_the_latin1_boundaries():
    # Texts below U+0100 are made through Latin-1, wider ones through UTF-8:
    # both give back the characters of the input, short (shared) or long.
    pieces = [
        "\u0080",
        "\u00ff",
        "caf\u00e9",
        "na\u00efve \u00fcber",
        "\u00ff\u0100",
        "\u0100",
        "\u00e9\u2019",
        "\U0001f600\u00e9",
        "ascii only",
    ]
    for piece in pieces:
        for text in (piece, "x" * 30 + piece, piece + "y" * 30, (piece + " ") * 40):
            document = idiolect.parse("kindaxml", text)
            assert document["text"] == text
            assert "".join(s["text"] for s in document["segments"]) == text
    tagged = "\u00e9t\u00e9 <cite id=\u00ff>ca f\u00e9</cite> \u0100"
    document = idiolect.parse("kindaxml", tagged)
    assert document["text"] == "\u00e9t\u00e9 ca f\u00e9 \u0100"
    assert document["segments"][1]["annotations"][0]["attrs"] == {"id": "\u00ff"}
