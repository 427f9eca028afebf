"""`idiolect.vllm` and `idiolect.sglang` against small fakes of the servers'
interfaces (tests/server_fakes.py): registration, the mapping of idiolect's server
deltas onto each server's types, ids, request adjustment and the reasoning parsers'
token-id checks. These run without vLLM or SGLang; test_real_vllm.py and
test_real_sglang.py run the adapters inside the real servers."""

from __future__ import annotations

import importlib.util

import pytest

import idiolect.sglang
import idiolect.vllm
from idiolect._servers import families
from server_fakes import (
    CharTokenizer,
    ChatRequest,
    DeltaMessage,
    SglangFunction,
    SglangTool,
    sglang_api,
    vllm_api,
)

WEATHER = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
TIME = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'
CHAT_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
]


# --- vLLM ------------------------------------------------------------------------------


@pytest.fixture
def vllm():
    api = vllm_api()
    registered = idiolect.vllm.register(api)
    return api, registered


def test_vllm_registers_a_tool_parser_per_family_and_reasoning_where_markers_are(vllm):
    api, registered = vllm
    names = [f"idiolect-{f}" for f in families()]
    assert list(api.ToolParserManager.modules) == names == idiolect.vllm.tool_parser_names()
    with_markers = [f"idiolect-{f}" for f in families() if idiolect.reasoning_markers(f)]
    assert list(api.ReasoningParserManager.modules) == with_markers == idiolect.vllm.reasoning_parser_names()
    assert "idiolect-harmony" not in api.ReasoningParserManager.modules
    tool_cls = api.ToolParserManager.modules["idiolect-qwen3-coder"]
    assert tool_cls.__name__ == "IdiolectQwen3CoderToolParser"
    assert issubclass(tool_cls, api.ToolParser) and tool_cls.engine_based_streaming


def test_importing_the_vllm_module_without_vllm_registers_nothing():
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here: test_real_vllm.py covers the registration")
    assert idiolect.vllm.REGISTERED == {}
    with pytest.raises(ModuleNotFoundError):
        idiolect.vllm.load_api()


def vllm_stream(parser, request, steps):
    deltas = [
        parser.extract_tool_calls_streaming("", "", step, [], [], [], request) for step in steps
    ]
    deltas.append(parser.finish_streaming())
    return deltas


def test_vllm_streaming_maps_deltas_onto_vllms_types(vllm):
    api, _ = vllm
    parser = api.ToolParserManager.modules["idiolect-hermes"](CharTokenizer(), CHAT_TOOLS)
    request = ChatRequest(tools=CHAT_TOOLS)
    text = "<think>plan</think>Let me check.\n" + WEATHER + "\n" + TIME
    deltas = vllm_stream(parser, request, [text[:40], text[40:]])
    assert all(d is None or isinstance(d, DeltaMessage) for d in deltas)
    first = deltas[0]
    assert (first.reasoning, first.content) == ("plan", "Let me check.\n")
    calls = [c for d in deltas if d for c in d.tool_calls]
    assert [(c.index, c.id, c.type, c.function.name) for c in calls if c.function.name] == [
        (0, "chatcmpl-tool-0", "function", "get_weather"),
        (1, "chatcmpl-tool-1", "function", "get_time"),
    ]
    assert "".join(c.function.arguments or "" for c in calls if c.index == 0) == '{"city": "Paris"}'
    assert all(len({c.index for c in d.tool_calls}) <= 1 for d in deltas[:-1] if d)


def test_vllm_one_shot_reports_complete_calls_only(vllm):
    api, _ = vllm
    parser = api.ToolParserManager.modules["idiolect-hermes"](CharTokenizer(), CHAT_TOOLS)
    info = parser.extract_tool_calls("Sure.\n" + WEATHER + "\n<tool_call>\n{\"name\": \"get_t", ChatRequest())
    assert info.tools_called
    assert [(c.id, c.function.name, c.function.arguments) for c in info.tool_calls] == [
        ("chatcmpl-tool-0", "get_weather", '{"city": "Paris"}')
    ]
    assert info.content == "Sure.\n"
    nothing = parser.extract_tool_calls('<tool_call>\n{"name": "f", "arguments": "hello"}', ChatRequest())
    assert (nothing.tools_called, nothing.tool_calls, nothing.content) == (False, [], None)


def test_vllm_adjust_request_keeps_special_tokens_with_tools(vllm):
    api, _ = vllm
    parser = api.ToolParserManager.modules["idiolect-kimi-k2"](CharTokenizer())
    assert parser.adjust_request(ChatRequest(tools=CHAT_TOOLS)).skip_special_tokens is False
    assert parser.adjust_request(ChatRequest(tools=CHAT_TOOLS, tool_choice="none")).skip_special_tokens is None
    assert parser.adjust_request(ChatRequest()).skip_special_tokens is None


def test_vllm_without_a_reasoning_parser_reasoning_markup_is_content(vllm):
    api, _ = vllm
    parser = api.ToolParserManager.modules["idiolect-hermes"](CharTokenizer())
    parser.skip_reasoning_parsing = True  # what vLLM sets when no reasoning parser runs
    [delta, end] = vllm_stream(parser, ChatRequest(), ["<think>plan</think>ok"])
    assert (delta.content, delta.reasoning, end) == ("<think>plan</think>ok", None, None)


def test_vllm_typing_reads_the_requests_tools(vllm):
    api, _ = vllm
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}}]
    text = "<tool_call>\n<function=f>\n<parameter=n>\n7\n</parameter>\n</function>\n</tool_call>"
    parser = api.ToolParserManager.modules["idiolect-qwen3-coder"](CharTokenizer())
    info = parser.extract_tool_calls(text, ChatRequest(tools=tools))
    assert info.tool_calls[0].function.arguments == '{"n":7}'


@pytest.mark.parametrize("tokenizer", [CharTokenizer(["<think>", "</think>"]), CharTokenizer()], ids=["marker-tokens", "characters"])
def test_vllm_reasoning_token_ids_come_from_the_vocabulary(vllm, tokenizer):
    api, _ = vllm
    parser = api.ReasoningParserManager.modules["idiolect-hermes"](tokenizer)
    ids = tokenizer.encode("<think>plan</think>done")
    assert parser.is_reasoning_end(ids)
    assert not parser.is_reasoning_end(tokenizer.encode("<think>plan"))
    assert not parser.is_reasoning_end(tokenizer.encode("</think><think>again"))
    assert tokenizer.decode(parser.extract_content_ids(ids)) == "done"
    assert parser.extract_content_ids(tokenizer.encode("<think>plan")) == []
    assert (parser.reasoning_start_str, parser.reasoning_end_str) == ("<think>", "</think>")


def test_vllm_reasoning_streams_then_hands_the_rest_to_the_tool_phase(vllm):
    api, _ = vllm
    parser = api.ReasoningParserManager.modules["idiolect-hermes"](CharTokenizer())
    # The prompt ended inside reasoning: the output starts in it.
    parser.adjust_initial_state_from_prompt(CharTokenizer().encode("user: hi\n<think>"))
    first = parser.extract_reasoning_streaming("", "", "plan", [], [], [])
    assert first.reasoning == "plan" and not parser.has_engine_confirmed_reasoning_end()
    parser.extract_reasoning_streaming("", "", "</think>\n" + WEATHER[:5], [], [], [])
    assert parser.has_engine_confirmed_reasoning_end()
    handed = parser.finish_streaming()
    assert (handed.content, handed.reasoning) == ("\n" + WEATHER[:5], None)
    assert parser.finish_streaming() is None
    one_shot = api.ReasoningParserManager.modules["idiolect-hermes"](CharTokenizer())
    assert one_shot.extract_reasoning("<think>a</think>b", None) == ("a", "b")
    assert one_shot.extract_reasoning("<think>cut", None) == ("cut", None)


# --- SGLang ------------------------------------------------------------------------------


@pytest.fixture
def sglang():
    api = sglang_api()
    registered = idiolect.sglang.register(api)
    return api, registered


SGLANG_TOOLS = [SglangTool(SglangFunction("get_time")), SglangTool(SglangFunction("get_weather"))]


def test_sglang_registers_a_detector_per_family_and_reasoning_where_markers_are(sglang):
    api, _ = sglang
    assert list(api.FunctionCallParser.ToolCallParserEnum) == idiolect.sglang.detector_names()
    with_markers = [f"idiolect-{f}" for f in families() if idiolect.reasoning_markers(f)]
    assert list(api.ReasoningParser.DetectorMap) == with_markers
    detector = api.FunctionCallParser.ToolCallParserEnum["idiolect-glm"]()
    assert not detector.supports_structural_tag()


def test_sglang_one_shot_gives_tool_positions_and_drops_undeclared_tools(sglang, monkeypatch):
    api, _ = sglang
    detector = api.FunctionCallParser.ToolCallParserEnum["idiolect-hermes"]()
    rm = '<tool_call>\n{"name": "rm", "arguments": {}}\n</tool_call>'
    text = "Sure.\n" + WEATHER + "\n" + rm
    result = detector.detect_and_parse(text, SGLANG_TOOLS)
    assert result.normal_text == "Sure.\n"
    assert [(c.tool_index, c.name, c.parameters) for c in result.calls] == [
        (1, "get_weather", '{"city": "Paris"}')
    ]
    monkeypatch.setenv("SGLANG_FORWARD_UNKNOWN_TOOLS", "1")
    kept = detector.detect_and_parse(text, SGLANG_TOOLS)
    assert [(c.tool_index, c.name) for c in kept.calls] == [(1, "get_weather"), (-1, "rm")]


def test_sglang_streaming_sends_the_name_then_argument_fragments(sglang):
    api, _ = sglang
    detector = api.FunctionCallParser.ToolCallParserEnum["idiolect-hermes"]()
    text = "Hi\n" + WEATHER
    items, normal = [], ""
    for at in range(0, len(text), 7):
        result = detector.parse_streaming_increment(text[at : at + 7], SGLANG_TOOLS)
        normal += result.normal_text
        items += result.calls
    end = detector.finish(SGLANG_TOOLS)
    items += end.calls
    assert normal + end.normal_text == "Hi\n"
    assert (items[0].tool_index, items[0].name, items[0].parameters) == (0, "get_weather", "")
    assert all(i.name is None and i.tool_index == 0 for i in items[1:])
    assert "".join(i.parameters for i in items[1:]) == '{"city": "Paris"}'
    # SGLang's end-of-stream check reads these; they stay empty: nothing unsent.
    assert detector.prev_tool_call_arr == [] and detector.streamed_args_for_tool == []


def test_sglang_has_tool_call_sees_any_markup(sglang):
    api, _ = sglang
    detector = api.FunctionCallParser.ToolCallParserEnum["idiolect-hermes"]()
    assert detector.has_tool_call(WEATHER)
    assert detector.has_tool_call('<tool_call>\n{"name": "f", "argu')  # a cut call
    assert detector.has_tool_call("done</tool_call>")  # a stray closer
    assert not detector.has_tool_call("plain <think>text</think>")
    assert not detector.has_tool_call("")


def test_sglang_reasoning_detector_streams_or_holds_reasoning(sglang):
    api, _ = sglang
    cls = api.ReasoningParser.DetectorMap["idiolect-hermes"]
    streamed = cls(force_reasoning=True)
    assert streamed.parse_streaming_increment("plan").reasoning_text == "plan"
    handed = streamed.parse_streaming_increment("</think>\n" + WEATHER)
    assert (handed.reasoning_text, handed.normal_text) == ("", "\n" + WEATHER)
    assert streamed.parse_streaming_increment("more").normal_text == "more"
    held = cls(force_reasoning=True, stream_reasoning=False)
    assert held.parse_streaming_increment("plan").reasoning_text == ""
    assert held.parse_streaming_increment("</think>ok").reasoning_text == "plan"
    whole = cls().detect_and_parse("<think>a</think>b")
    assert (whole.reasoning_text, whole.normal_text) == ("a", "b")


def test_sglang_force_reasoning_false_overrides_the_family_default(sglang):
    api, _ = sglang
    cls = api.ReasoningParser.DetectorMap["idiolect-minimax-m2"]
    # minimax-m2's template opens reasoning: by default the output starts in it.
    assert cls().detect_and_parse("plan</think>ok").reasoning_text == "plan"
    told = cls(force_reasoning=False).detect_and_parse("plan</think>ok")
    assert (told.reasoning_text, told.normal_text) == ("", "plan</think>ok")
