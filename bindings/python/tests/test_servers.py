"""`idiolect._servers`: a field family's turn in the inference servers' terms (the
rules SV-1 to SV-7 in its docstring), on examples read by hand and on every case of
every field family's corpus, whole and streamed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import idiolect
from idiolect._servers import (
    ReasoningSplit,
    ServerStream,
    last_at,
    server_message,
    tools_option,
)
from corpus import chunks_of, random_chunking
from server_cases import CASES, FAMILIES, expected_stream

WEATHER = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


def call(body: str) -> str:
    return f"<tool_call>\n{body}\n</tool_call>"


def counter():
    n = iter(range(1000))
    return lambda: f"call-{next(n)}"


def test_families_are_read_from_the_package():
    # The families are the dialects ChatDeltas accepts; its refusal lists them.
    with pytest.raises(ValueError) as raised:
        idiolect.ChatDeltas("sections")
    listed = str(raised.value).split("(", 1)[1].split(")", 1)[0].split(", ")
    assert FAMILIES == listed
    assert {case.dialect for case in CASES} == set(FAMILIES)


def test_import_idiolect_imports_no_server_module():
    code = (
        "import sys, idiolect; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('vllm', 'sglang', 'torch') or m.startswith('idiolect.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['idiolect._native']"


def test_reasoning_markers_follow_the_options():
    assert idiolect.reasoning_markers("hermes") == [("<think>", "</think>")]
    assert idiolect.reasoning_markers("mistral") == [("[THINK]", "[/THINK]")]
    assert idiolect.reasoning_markers("hermes", {"reasoning_markers": []}) == []
    assert idiolect.reasoning_markers("reasoning", {"reasoning_markers": ["triangle", "think"]}) == [
        ("\u25c1think\u25b7", "\u25c1/think\u25b7"),
        ("<think>", "</think>"),
    ]
    with pytest.raises(ValueError, match="need a field family"):
        idiolect.reasoning_markers("sections")
    with pytest.raises(idiolect.OptionsError):
        idiolect.reasoning_markers("hermes", {"reasoning_markers": ["square"]})


# --- the one-shot message --------------------------------------------------------


def test_a_truncated_call_is_no_call_and_leaks_no_markup():
    text = "Let me check.\n" + call(WEATHER) + '\n<tool_call>\n{"name": "get_time", "arguments": {"tz": "Eur'
    message = server_message("hermes", text, make_id=counter())
    assert message == {
        "content": "Let me check.\n",
        "reasoning": None,
        "tool_calls": [
            {
                "id": "call-0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }


def test_arguments_that_are_no_object_make_no_call():
    # A string that holds an object stands for it (HE-6); "hello" does not.
    stringified = call('{"name": "f", "arguments": "{\\"a\\": 1}"}')
    assert server_message("hermes", stringified)["tool_calls"] == [
        {"id": None, "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    ]
    not_object = call('{"name": "f", "arguments": "hello"}')
    assert server_message("hermes", not_object) == {"content": None, "reasoning": None, "tool_calls": []}


def test_whitespace_around_and_between_calls_is_formatting():
    text = "\n" + call(WEATHER) + "\n\n" + call(WEATHER) + "\n"
    message = server_message("hermes", text)
    assert message["content"] is None
    assert len(message["tool_calls"]) == 2
    # Whitespace that is not next to a call stays; text next to a call is verbatim.
    assert server_message("hermes", "  \n")["content"] == "  \n"
    assert server_message("hermes", "Sure:\n" + call(WEATHER) + "\nDone.\n")["content"] == "Sure:\n\nDone.\n"


def test_ids_are_the_models_own_where_it_writes_one():
    text = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    message = server_message("kimi-k2", text, make_id=counter())
    assert [c["id"] for c in message["tool_calls"]] == ["functions.get_weather:0"]


def test_undeclared_tools_are_dropped_when_names_are_given():
    text = call(WEATHER) + "\n" + call('{"name": "rm", "arguments": {}}')
    assert [c["function"]["name"] for c in server_message("hermes", text)["tool_calls"]] == [
        "get_weather",
        "rm",
    ]
    kept = server_message("hermes", text, names=["get_weather"])["tool_calls"]
    assert [c["function"]["name"] for c in kept] == ["get_weather"]


def test_tools_of_both_request_shapes_type_the_arguments():
    parameters = {"type": "object", "properties": {"n": {"type": "integer"}}}
    chat = [{"type": "function", "function": {"name": "f", "parameters": parameters}}]
    responses = [{"type": "function", "name": "f", "parameters": parameters, "strict": True}]
    assert tools_option(chat) == tools_option(responses) == [{"name": "f", "parameters": parameters}]
    assert tools_option([{"type": "web_search"}]) == []
    text = "<tool_call>\n<function=f>\n<parameter=n>\n7\n</parameter>\n</function>\n</tool_call>"
    for tools in (chat, responses):
        [made] = server_message("qwen3-coder", text, tools=tools)["tool_calls"]
        assert made["function"]["arguments"] == '{"n":7}'
    [untyped] = server_message("qwen3-coder", text)["tool_calls"]
    assert json.loads(untyped["function"]["arguments"]) == {"n": "7"}


# --- the deltas -------------------------------------------------------------------


def stream_all(family, chunks, options=None, make_id=None, names=None):
    stream = ServerStream(family, options, make_id=make_id, names=names)
    deltas = [stream.feed(chunk) for chunk in chunks]
    deltas.append(stream.finish())
    return deltas


def test_one_delta_carries_one_call_and_the_next_feed_sends_the_second():
    text = call(WEATHER) + "\n" + call('{"name": "get_time", "arguments": {}}')
    deltas = stream_all("hermes", [text, ""], make_id=counter())
    assert deltas[0] == {
        "tool_calls": [
            {
                "index": 0,
                "id": "call-0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ]
    }
    assert deltas[1] == {
        "tool_calls": [
            {"index": 1, "id": "call-1", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
        ]
    }
    assert deltas[2] is None


def test_a_string_argument_that_is_no_object_sends_nothing():
    text = call('{"name": "f", "arguments": "hello"}')
    assert [d for d in stream_all("hermes", chunks_of(text.encode(), 3)) if d] == []
    # The next call is numbered 0 (SV-2).
    deltas = stream_all("hermes", [text + "\n" + call(WEATHER)])
    calls = [c for d in deltas if d for c in d.get("tool_calls", [])]
    assert [(c["index"], c["function"]["name"]) for c in calls] == [(0, "get_weather")]


def test_formatting_between_calls_is_never_sent_at_one_byte_a_feed():
    text = ("\n" + call(WEATHER) + "\n\n") * 2
    deltas = stream_all("hermes", chunks_of(text.encode(), 1))
    assert not any("content" in d for d in deltas if d)
    assert sum(len(d.get("tool_calls", [])) for d in deltas if d) > 2


def concatenated(deltas):
    content, reasoning, calls = "", "", []
    for n, delta in enumerate(deltas):
        if delta is None:
            continue
        assert delta, "an empty delta is None (SV-5)"
        assert all(delta.get(k) != "" for k in ("content", "reasoning")), delta
        content += delta.get("content", "")
        reasoning += delta.get("reasoning", "")
        entries = delta.get("tool_calls", [])
        if n < len(deltas) - 1:
            assert len({e["index"] for e in entries}) <= 1, f"two calls in one delta: {delta}"
        for entry in entries:
            if "name" in entry["function"]:
                assert entry["index"] == len(calls), "calls are numbered in order (SV-2)"
                calls.append({"id": entry["id"], "name": entry["function"]["name"], "arguments": ""})
            else:
                assert "id" not in entry and entry["index"] < len(calls)
            calls[entry["index"]]["arguments"] += entry["function"].get("arguments", "")
    return {"content": content, "reasoning": reasoning, "calls": calls}


def schedules(case):
    yield "whole", [case.input]
    for size in (1, 2, 8):
        yield f"{size}-byte chunks", chunks_of(case.input, size)
    yield "random chunking", random_chunking(case.input, case.name, 7)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_deltas_concatenate_to_the_document_read_by_the_rules(case):
    expected = expected_stream(case.expected)
    for label, chunks in schedules(case):
        assert concatenated(stream_all(case.dialect, chunks, case.options)) == expected, label


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_message_holds_the_complete_calls_of_the_document(case):
    message = server_message(case.dialect, case.input, case.options)
    complete = [i for i in case.expected["items"] if i["type"] == "tool_call" and i["complete"]]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]] == [
        (i["id"], i["name"], i["arguments"]) for i in complete
    ]
    streamed = expected_stream(case.expected)
    assert message["content"] == (streamed["content"] or None)
    assert message["reasoning"] == (streamed["reasoning"] or None)


def test_names_drop_undeclared_calls_from_the_deltas_too():
    text = call('{"name": "rm", "arguments": {}}') + "\n" + call(WEATHER)
    deltas = stream_all("hermes", chunks_of(text.encode(), 2), names={"get_weather"})
    got = concatenated(deltas)
    assert [c["name"] for c in got["calls"]] == ["get_weather"]


# --- reasoning first, then the rest verbatim ----------------------------------------


def split_all(family, chunks, options=None):
    split = ReasoningSplit(family, options)
    reasoning = "".join(split.feed(chunk) for chunk in chunks) + split.finish()
    return reasoning, split.rest(), split.ended


def test_reasoning_ends_at_the_closer_and_the_rest_is_verbatim():
    text = "<think>plan</think>\n\nLet me check.\n" + call(WEATHER)
    for size in (1, 3, len(text)):
        assert split_all("hermes", chunks_of(text.encode(), size)) == (
            "plan",
            "\n\nLet me check.\n" + call(WEATHER),
            True,
        )


def test_without_reasoning_the_rest_is_the_whole_output():
    text = call(WEATHER)
    assert split_all("hermes", [text]) == ("", text, True)
    assert split_all("hermes", ["Hi ", "<thi"]) == ("", "Hi <thi", True)


def test_output_that_ends_inside_reasoning_has_no_rest():
    assert split_all("hermes", ["plan and", " more"], {"start_in_reasoning": True}) == (
        "plan and more",
        "",
        False,
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_split_gives_the_documents_leading_reasoning(case):
    items = case.expected["items"]
    leading = ""
    for item in items:
        if item["type"] != "reasoning":
            break
        leading += item["text"]
    for label, chunks in schedules(case):
        reasoning, rest, ended = split_all(case.dialect, chunks, case.options)
        assert reasoning == leading, label
        if ended:
            assert case.input.decode("utf-8", errors="replace").endswith(rest), label


def test_last_at_finds_the_end_of_the_last_occurrence():
    assert last_at([1, 2, 3, 1, 2], [(1, 2)]) == 5
    assert last_at([1, 2, 3], [(2, 3), (1,)]) == 3
    assert last_at([1, 2, 3], [(4,)]) == -1
