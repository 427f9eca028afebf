"""The library's server layer (spec/servers.md) as the package exposes it:
`ServerDeltas`, `server_message`, `call_markers`, `call_structure`, and the SGLang
detector's structure_info built on them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

import idiolect
import idiolect.sglang
from idiolect._servers import families
from server_fakes import sglang_api

WEATHER = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def test_server_deltas_send_one_call_a_feed_with_sequence_ids():
    deltas = idiolect.ServerDeltas("hermes", ids="sequence")
    first = deltas.feed(WEATHER + "\n" + WEATHER)
    assert first == {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ]
    }
    assert deltas.calls == 2
    last = deltas.finish()
    assert [c["id"] for c in last["tool_calls"]] == ["call_1"]
    assert deltas.finished and deltas.dialect == "hermes"
    with pytest.raises(RuntimeError, match="after finish"):
        deltas.feed("x")


def test_server_deltas_drop_undeclared_tools_and_refuse_bad_arguments():
    deltas = idiolect.ServerDeltas("hermes", names=["get_time"])
    assert deltas.feed(WEATHER) is None and deltas.finish() is None
    with pytest.raises(ValueError, match="ids must be one of model, random, vllm, sequence"):
        idiolect.ServerDeltas("hermes", ids="uuid")
    with pytest.raises(ValueError, match="needs a field family"):
        idiolect.ServerDeltas("sections")
    with pytest.raises(idiolect.OptionsError):
        idiolect.ServerDeltas("hermes", {"reasoning_markers": ["square"]})


def test_server_message_ids_in_the_servers_forms():
    random = idiolect.server_message("hermes", WEATHER, ids="random")["tool_calls"][0]["id"]
    vllm = idiolect.server_message("hermes", WEATHER, ids="vllm")["tool_calls"][0]["id"]
    assert re.fullmatch(r"call_[A-Za-z0-9]{24}", random)
    assert re.fullmatch(r"chatcmpl-tool-[0-9a-f]{32}", vllm)
    assert idiolect.server_message("hermes", WEATHER)["tool_calls"][0]["id"] is None
    message = idiolect.server_message("hermes", b"<think>plan</think>\n" + WEATHER.encode(), ids="sequence")
    assert message == {
        "content": None,
        "reasoning": "plan",
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }


def test_call_markers_and_structures():
    assert idiolect.call_markers("hermes") == ["<tool_call>"]
    assert idiolect.call_markers("pythonic") == []
    assert idiolect.call_structure("hermes", "f") == {
        "begin": '<tool_call>\n{"name": "f", "arguments": ',
        "end": "}\n</tool_call>",
        "trigger": "<tool_call>",
    }
    assert idiolect.call_structure("qwen3-coder", "f") is None
    with pytest.raises(ValueError, match="needs a field family"):
        idiolect.call_markers("sections")


@dataclass
class StructureInfo:
    begin: str
    end: str
    trigger: str


def test_sglang_structure_info_where_the_family_has_one():
    api = SimpleNamespace(**vars(sglang_api()), StructureInfo=StructureInfo)
    idiolect.sglang.register(api)
    detector = api.FunctionCallParser.ToolCallParserEnum["idiolect-deepseek-v3.1"]()
    assert detector.supports_structural_tag()
    info = detector.structure_info()("get_weather")
    assert info == StructureInfo(
        begin="<\uff5ctool\u2581call\u2581begin\uff5c>get_weather<\uff5ctool\u2581sep\uff5c>",
        end="<\uff5ctool\u2581call\u2581end\uff5c>",
        trigger="<\uff5ctool\u2581call\u2581begin\uff5c>",
    )
    assert info.begin.startswith(info.trigger)
    qwen = api.FunctionCallParser.ToolCallParserEnum["idiolect-qwen3-coder"]()
    assert not qwen.supports_structural_tag()
    with pytest.raises(NotImplementedError):
        qwen.structure_info()


def test_every_structure_begins_with_its_trigger_and_wraps_a_parsed_call():
    for family in families():
        structure = idiolect.call_structure(family, "get_weather")
        if structure is None:
            continue
        assert structure["begin"].startswith(structure["trigger"]), family
        assert structure["trigger"] in idiolect.call_markers(family), family
        # A call written as begin, an object, end is the family's call, inside
        # the family's calls section where it opens one (the model writes its
        # opener, then the trigger starts the constrained call).
        markers = idiolect.call_markers(family)
        section = markers[0] if markers[0] != structure["trigger"] else ""
        text = section + structure["begin"] + '{"city": "Paris"}' + structure["end"]
        message = idiolect.server_message(family, text)
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]]
        assert calls == [("get_weather", '{"city": "Paris"}')], family


def test_every_family_plugs_into_sglang_even_without_reasoning_markers():
    # A family without reasoning markers has no `reasoning_markers` option: the
    # detector must not pass one (seed-oss, hunyuan, kimi-k3, gemma4, ... refuse it).
    api = sglang_api()
    idiolect.sglang.register(api)
    for family in families():
        detector = api.FunctionCallParser.ToolCallParserEnum[f"idiolect-{family}"]()
        assert not detector.has_tool_call("hi"), family
        assert detector.detect_and_parse("hi", []).normal_text == "hi", family
        streamed = detector.parse_streaming_increment("hi", []).normal_text
        assert streamed + detector.finish([]).normal_text == "hi", family
