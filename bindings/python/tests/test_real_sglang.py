"""`idiolect.sglang` inside the real SGLang: registered as its plug-in entry point
does, accepted by its server arguments, and run through `FunctionCallParser`
(`parse_non_stream`, `parse_stream_chunk`, `parse_stream_end`) and `ReasoningParser`
as the server calls them, on every servable case of every field family's corpus at
1, 2 and 8 tokens a step and whole. Skipped when SGLang is not installed:
`bindings/python/servers/check` makes a virtual environment with the pinned SGLang
and runs these."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "sglang.srt.function_call.function_call_parser",
    reason="SGLang is not installed (bindings/python/servers/check installs the pinned one and runs this)",
)

import idiolect  # noqa: E402
import idiolect.sglang  # noqa: E402
from idiolect._native import reasoning_markers  # noqa: E402
from idiolect._servers import ReasoningSplit  # noqa: E402
from server_cases import (  # noqa: E402
    CASES,
    FAMILIES,
    declared_tools,
    document,
    expected_message,
    expected_stream,
    servable,
    starts_in_reasoning,
    steps,
)
from sglang.srt.entrypoints.openai.protocol import Tool  # noqa: E402
from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: E402
from sglang.srt.parser.reasoning_parser import ReasoningParser  # noqa: E402

SERVABLE = [case for case in CASES if servable(case)]
STEPS = [1, 2, 8, None]


@pytest.fixture(scope="module", autouse=True)
def registered():
    return idiolect.sglang.register()


def tools_for(case, doc=None):
    return [Tool(**tool) for tool in declared_tools(case, doc)]


def test_the_entry_point_registers_every_family():
    from importlib.metadata import entry_points

    points = [p for p in entry_points(group="sglang.srt.plugins") if p.value == "idiolect.sglang:register"]
    if not points:
        pytest.skip("idiolect is importable but not installed as a distribution (no entry points)")
    points[0].load()()
    for family in FAMILIES:
        assert f"idiolect-{family}" in FunctionCallParser.ToolCallParserEnum
        assert (f"idiolect-{family}" in ReasoningParser.DetectorMap) == bool(reasoning_markers(family))


def test_server_arguments_accept_the_names():
    from sglang.srt.server_args import prepare_server_args

    args = prepare_server_args(
        [
            "--model-path",
            "MODEL",
            "--tool-call-parser",
            "idiolect-hermes",
            "--reasoning-parser",
            "idiolect-hermes",
            "--skip-server-warmup",
        ]
    )
    assert args.tool_call_parser == "idiolect-hermes"
    assert args.reasoning_parser == "idiolect-hermes"


def run_stream(case, step_tokens, reasoning, doc):
    tools = tools_for(case, doc)
    parser = FunctionCallParser(tools=tools, tool_call_parser=f"idiolect-{case.dialect}")
    thinker = None
    if reasoning:
        thinker = ReasoningParser(
            model_type=f"idiolect-{case.dialect}",
            stream_reasoning=True,
            force_reasoning=starts_in_reasoning(case),
        )
    content, reasoning_text, calls = "", "", []

    def tool_phase(text, end):
        nonlocal content
        normal, items = parser.parse_stream_chunk(text)
        if end:
            end_text, end_items = parser.parse_stream_end()
            normal, items = (normal or "") + end_text, list(items) + list(end_items)
        content += normal or ""
        for item in items:
            if item.name:
                assert item.tool_index == len(calls), item
                calls.append({"name": item.name, "arguments": item.parameters})
            else:
                calls[item.tool_index]["arguments"] += item.parameters

    texts = steps(case.input, step_tokens) or [""]
    for n, text in enumerate(texts):
        end = n == len(texts) - 1
        if thinker is not None:
            thought, text = thinker.parse_stream_chunk(text)
            reasoning_text += thought or ""
            if end:
                thought, rest = thinker.parse_stream_end()
                reasoning_text += thought or ""
                text = (text or "") + (rest or "")
        tool_phase(text or "", end)
    return {"content": content, "reasoning": reasoning_text, "calls": calls}


def without_ids(summary):
    return {
        "content": summary["content"],
        "reasoning": summary["reasoning"],
        "calls": [{"name": c["name"], "arguments": c["arguments"]} for c in summary["calls"]],
    }


@pytest.mark.parametrize("case", SERVABLE, ids=lambda c: c.id)
def test_the_tool_detector_alone(case):
    # No reasoning parser: reasoning markup is text, as with SGLang's own detectors;
    # a tool detector has no reasoning to return (harmony's analysis channel, which
    # is no marker, is left out).
    doc = document(case, reasoning_markers=[], start_in_reasoning=False)
    want = {**without_ids(expected_stream(doc)), "reasoning": ""}
    for step_tokens in STEPS:
        got = run_stream(case, step_tokens, reasoning=False, doc=doc)
        assert got == want, f"{step_tokens} tokens a step"
    parser = FunctionCallParser(tools=tools_for(case, doc), tool_call_parser=f"idiolect-{case.dialect}")
    normal, items = parser.parse_non_stream(case.input.decode("utf-8", errors="replace"))
    message = without_ids(expected_message(doc))
    assert normal == message["content"]
    assert [(i.name, i.parameters) for i in items] == [(c["name"], c["arguments"]) for c in message["calls"]]


@pytest.mark.parametrize("case", SERVABLE, ids=lambda c: c.id)
def test_the_reasoning_and_tool_detectors_together(case):
    # The reasoning detector takes the leading reasoning (the document's: the
    # split is checked against it in test_servers.py) and hands the rest,
    # verbatim, to the tool detector, which reads reasoning markers as text.
    if not reasoning_markers(case.dialect):
        pytest.skip(f"{case.dialect} has no reasoning markers: no reasoning detector")
    options = {**(case.options or {}), "start_in_reasoning": starts_in_reasoning(case)}
    split = ReasoningSplit(case.dialect, options)
    leading = split.feed(case.input) + split.finish()
    rest = idiolect.parse(case.dialect, split.rest(), {**options, "reasoning_markers": [], "start_in_reasoning": False})
    want = {**without_ids(expected_stream(rest)), "reasoning": leading}
    for step_tokens in STEPS:
        got = run_stream(case, step_tokens, reasoning=True, doc=rest)
        assert got == want, f"{step_tokens} tokens a step"
    thinker = ReasoningParser(
        model_type=f"idiolect-{case.dialect}", force_reasoning=starts_in_reasoning(case)
    )
    reasoning_text, rest_text = thinker.parse_non_stream(case.input.decode("utf-8", errors="replace"))
    assert rest_text == split.rest()
    parser = FunctionCallParser(tools=tools_for(case, rest), tool_call_parser=f"idiolect-{case.dialect}")
    normal, items = parser.parse_non_stream(rest_text or "")
    message = without_ids(expected_message(rest))
    assert (reasoning_text or "") == leading
    assert normal == message["content"]
    assert [(i.name, i.parameters) for i in items] == [(c["name"], c["arguments"]) for c in message["calls"]]


def test_undeclared_tools_are_dropped_as_sglang_does():
    text = '<tool_call>\n{"name": "rm", "arguments": {}}\n</tool_call>'
    tools = [Tool(type="function", function={"name": "get_weather", "parameters": {}})]
    parser = FunctionCallParser(tools=tools, tool_call_parser="idiolect-hermes")
    assert parser.parse_non_stream(text) == ("", [])
    assert parser.parse_stream_chunk(text) == ("", [])
