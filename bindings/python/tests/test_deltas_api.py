"""`idiolect.ChatDeltas`: its shape on examples read by hand, and bad input (clear
exceptions, never a crash)."""

import json
import threading

import pytest

import idiolect

WEATHER = (
    '<think>plan</think>Let me check.\n<tool_call>\n{"name": "get_weather", '
    '"arguments": {"city": "Paris"}}\n</tool_call>'
)
PARAMETERS = {"type": "object", "properties": {"city": {"type": "string"}}}


def test_one_feed_gives_one_delta_with_only_the_keys_that_have_something():
    stream = idiolect.ChatDeltas("hermes")
    assert stream.feed(WEATHER) == {
        "content": "Let me check.\n",
        "reasoning": "plan",
        "tool_calls": [
            {
                "index": 0,
                "id": None,
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }
    assert stream.feed("") is None
    assert stream.finish() is None
    assert stream.finished


def test_nothing_decided_yet_is_none_and_fragments_follow_the_name():
    stream = idiolect.ChatDeltas("hermes")
    assert stream.feed("<tool_call>\n{") is None
    assert stream.feed('"name": "f", "arguments": ') == {
        "tool_calls": [{"index": 0, "id": None, "type": "function", "function": {"name": "f"}}]
    }
    assert stream.feed('{"a": 1}}\n</tool_call>') == {
        "tool_calls": [{"index": 0, "function": {"arguments": '{"a": 1}'}}]
    }
    assert stream.finish() is None


def test_whole_calls_release_a_call_only_when_it_is_complete():
    stream = idiolect.ChatDeltas("hermes", whole_calls=True)
    assert stream.whole_calls
    # Nothing while the call's JSON is open, even after the name and arguments.
    assert stream.feed('<tool_call>\n{"name": "f", "arguments": {"a": 1}') is None
    assert stream.feed("}\n</tool_call>") == {
        "tool_calls": [
            {"index": 0, "id": None, "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
        ]
    }
    incomplete = idiolect.ChatDeltas("hermes", whole_calls=True)
    assert incomplete.feed('<tool_call>\n{"name": "f", "arguments": {"a": ') is None
    assert incomplete.finish() is None


def test_bytes_and_str_give_the_same_deltas_and_reset_starts_over():
    stream = idiolect.ChatDeltas("hermes")
    first = stream.feed(WEATHER.encode())
    stream.finish()
    stream.reset()
    assert not stream.finished
    assert stream.feed(WEATHER) == first


def test_invalid_utf8_is_replaced_as_in_the_cli():
    data = b"caf\xc3\xa9 \xc3\xff!"
    stream = idiolect.ChatDeltas("hermes")
    answers = [stream.feed(data[:4]), stream.feed(data[4:8]), stream.feed(data[8:]), stream.finish()]
    text = "".join(d["content"] for d in answers if d)
    assert text == data.decode("utf-8", errors="replace") == "caf\u00e9 \ufffd\ufffd!"


def test_tools_accept_idiolect_and_openai_shapes():
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
    own = [{"name": "get_weather", "parameters": PARAMETERS}]
    openai = [{"type": "function", "function": {**own[0], "description": "d", "strict": True}}]
    got = [idiolect.ChatDeltas("qwen3-coder", tools=tools).feed(text) for tools in (own, openai)]
    assert got[0] == got[1]
    assert json.loads(got[0]["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris"}
    as_option = idiolect.ChatDeltas("qwen3-coder", {"tools": own}).feed(text)
    assert as_option == got[0]


def test_a_non_field_dialect_is_the_cli_message():
    with pytest.raises(ValueError) as raised:
        idiolect.ChatDeltas("sections")
    families = (
        "hermes, qwen3-coder, deepseek-v3, deepseek-v3.1, harmony, mistral, "
        "llama3-json, pythonic, reasoning, kimi-k2, minimax-m2, glm, seed-oss, "
        "deepseek-dsml, gigachat-gcml, step3, hunyuan, hunyuan-a13b, kimi-k3, gemma4, "
        "function-gemma, granite, cohere, jamba, internlm, nemotron, apertus"
    )
    assert str(raised.value) == f'--deltas needs a field family ({families}), not "sections"'
    with pytest.raises(ValueError, match="needs a field family"):
        idiolect.ChatDeltas("yaml")


def test_bad_options_and_tools_are_clear_errors():
    with pytest.raises(idiolect.OptionsError, match="^invalid hermes options: .*no_such"):
        idiolect.ChatDeltas("hermes", {"no_such": 1})
    with pytest.raises(idiolect.OptionsError, match="^invalid hermes options: "):
        idiolect.ChatDeltas("hermes", tools=[{"nam": "f"}])
    with pytest.raises(TypeError, match="tools must be a list"):
        idiolect.ChatDeltas("hermes", tools={"name": "f"})
    with pytest.raises(TypeError, match="JSON data"):
        idiolect.ChatDeltas("hermes", tools=[object()])
    with pytest.raises(ValueError, match="given twice"):
        idiolect.ChatDeltas("hermes", {"tools": []}, tools=[])
    with pytest.raises(TypeError, match="options must be a dict"):
        idiolect.ChatDeltas("hermes", [1])
    with pytest.raises(TypeError):
        idiolect.ChatDeltas(3)


def test_wrong_chunk_types_are_type_errors_and_change_nothing():
    stream = idiolect.ChatDeltas("hermes")
    for chunk in (None, 3, ["x"], bytearray(b"x")):
        with pytest.raises(TypeError, match="chunk must be str or bytes"):
            stream.feed(chunk)
    with pytest.raises(UnicodeEncodeError):
        stream.feed("\ud800")
    assert stream.feed("ok") == {"content": "ok"}


def test_use_after_finish_is_a_runtime_error_until_reset():
    stream = idiolect.ChatDeltas("hermes")
    stream.finish()
    with pytest.raises(RuntimeError, match=r"feed\(\) after finish\(\)"):
        stream.feed("x")
    with pytest.raises(RuntimeError, match=r"finish\(\) after finish\(\)"):
        stream.finish()
    stream.reset()
    assert stream.feed("x") == {"content": "x"}


def test_a_stream_can_move_between_threads():
    stream = idiolect.ChatDeltas("hermes")
    got = []
    worker = threading.Thread(target=lambda: got.append(stream.feed("hello")))
    worker.start()
    worker.join()
    assert got == [{"content": "hello"}]
    assert repr(stream) == "<idiolect.ChatDeltas hermes (open)>"
