"""`idiolect.vllm` inside the real vLLM: loaded through vLLM's own argument handling
and plug-in import, composed by its `ParserManager.get_parser`, and run through the
delegating parser's `parse_delta` (streaming, 1, 2 and 8 tokens a step and the
whole output in one step) and `parse` (one shot) on every servable case of every
field family's corpus. Skipped when vLLM is not installed: `bindings/python/servers/check`
makes a virtual environment with the pinned vLLM and runs these."""

from __future__ import annotations

import os

import pytest

# The parser layer runs on any machine; vLLM's argument defaults ask for a device,
# and a CPU-only machine without vLLM's CPU build has to say which.
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

pytest.importorskip(
    "vllm.parser.parser_manager",
    reason="vLLM is not installed (bindings/python/servers/check installs the pinned one and runs this)",
)

import idiolect.vllm  # noqa: E402  (registers the parsers)
from idiolect._native import reasoning_markers  # noqa: E402
from server_cases import (  # noqa: E402
    CASES,
    FAMILIES,
    byte_tokenizer,
    declared_tools,
    document,
    expected_message,
    expected_stream,
    reasoning_leads,
    servable,
    starts_in_reasoning,
    steps,
)
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402
from vllm.parser.parser_manager import ParserManager  # noqa: E402

SERVABLE = [case for case in CASES if servable(case)]
STEPS = [1, 2, 8, None]


@pytest.fixture(scope="module")
def tokenizer():
    return byte_tokenizer()


def request_for(case, tool_choice="auto"):
    return ChatCompletionRequest(
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        tools=declared_tools(case),
        tool_choice=tool_choice,
    )


def prompt_ids(tokenizer, case, family):
    # A prompt that ends inside reasoning when the case starts there.
    prompt = "user: hi\nassistant: "
    if starts_in_reasoning(case) and reasoning_markers(family):
        prompt += reasoning_markers(family)[0][0]
    return tokenizer.encode(prompt, add_special_tokens=False)


def parser_for(tokenizer, family, *, tools=True, reasoning=False):
    cls = ParserManager.get_parser(
        tool_parser_name=f"idiolect-{family}" if tools else None,
        reasoning_parser_name=f"idiolect-{family}" if reasoning else None,
        enable_auto_tools=True,
        tokenizer=tokenizer,
    )
    return cls(tokenizer)


def stream(parser, tokenizer, case, request, step_tokens):
    """Runs parse_delta over the steps; returns the concatenation and checks each
    delta on the way (one call per delta but the last; id and name once a call)."""
    texts = steps(case.input, step_tokens)
    prompt = prompt_ids(tokenizer, case, case.dialect)
    content, reasoning, calls = "", "", []
    for n, text in enumerate(texts):
        last = n == len(texts) - 1
        ids = tokenizer.encode(text, add_special_tokens=False)
        delta = parser.parse_delta(text, ids, request, prompt_token_ids=prompt, finished=last)
        if delta is None:
            continue
        content += delta.content or ""
        reasoning += delta.reasoning or ""
        if not last:
            assert len({c.index for c in delta.tool_calls}) <= 1, f"two calls in one delta: {delta}"
        for call in delta.tool_calls:
            if call.function.name is not None:
                assert call.index == len(calls) and call.id, call
                calls.append({"id": call.id, "name": call.function.name, "arguments": ""})
            else:
                assert call.id is None and call.index < len(calls), call
            calls[call.index]["arguments"] += call.function.arguments or ""
    return {"content": content, "reasoning": reasoning, "calls": calls}


def without_ids(summary):
    return {**summary, "calls": [{k: v for k, v in c.items() if k != "id"} for c in summary["calls"]]}


def ids_are_the_models_or_vllms(summary, expected):
    for got, want in zip(summary["calls"], expected["calls"]):
        if want["id"] is not None:
            assert got["id"] == want["id"]
        else:
            assert got["id"].startswith("chatcmpl-tool-"), got["id"]


def test_vllm_serve_arguments_load_the_plugin():
    # What `vllm serve MODEL --enable-auto-tool-choice --tool-parser-plugin idiolect.vllm
    # --tool-call-parser idiolect-hermes` runs before loading the model.
    from vllm.entrypoints.common.cli_args import (
        init_parser_plugin,
        make_arg_parser,
        validate_parsed_serve_args,
    )
    from vllm.tool_parsers import ToolParserManager
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    argv = [
        "MODEL",
        "--enable-auto-tool-choice",
        "--tool-parser-plugin",
        "idiolect.vllm",
        "--tool-call-parser",
        "idiolect-hermes",
        "--reasoning-parser-plugin",
        "idiolect.vllm",
        "--reasoning-parser",
        "idiolect-hermes",
    ]
    args = make_arg_parser(FlexibleArgumentParser()).parse_args(argv)
    validate_parsed_serve_args(args)
    init_parser_plugin(args)
    assert args.tool_call_parser in ToolParserManager.list_registered()
    cls = ParserManager.get_parser(
        tool_parser_name=args.tool_call_parser,
        reasoning_parser_name=args.reasoning_parser,
        enable_auto_tools=args.enable_auto_tool_choice,
        tokenizer=byte_tokenizer(),
    )
    assert type(cls(byte_tokenizer()).tool_parser).__name__ == "IdiolectHermesToolParser"


def test_every_family_is_registered_under_its_name():
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    tools = set(ToolParserManager.list_registered())
    reasoning = set(ReasoningParserManager.list_registered())
    for family in FAMILIES:
        assert f"idiolect-{family}" in tools
        assert (f"idiolect-{family}" in reasoning) == bool(reasoning_markers(family))


def test_adjust_request_keeps_special_tokens_when_tools_are_in_play(tokenizer):
    case = SERVABLE[0]
    parser = parser_for(tokenizer, "hermes")
    adjusted = parser.adjust_request(request_for(case))
    assert adjusted.skip_special_tokens is False
    default = request_for(case, tool_choice="none").skip_special_tokens
    assert default is not False
    untouched = parser.adjust_request(request_for(case, tool_choice="none"))
    assert untouched.skip_special_tokens == default


@pytest.mark.parametrize("case", SERVABLE, ids=lambda c: c.id)
def test_the_tool_parser_alone(tokenizer, case):
    # No reasoning parser: vLLM asks the tool parser to read reasoning markup as
    # text, and the whole output is the tool phase's.
    doc = document(case, reasoning_markers=[], start_in_reasoning=False)
    request = request_for(case)
    want = expected_stream(doc)
    for step_tokens in STEPS:
        parser = parser_for(tokenizer, case.dialect)
        got = stream(parser, tokenizer, case, request, step_tokens)
        assert without_ids(got) == without_ids(want), f"{step_tokens} tokens a step"
        ids_are_the_models_or_vllms(got, want)
    reasoning, content, calls = parser_for(tokenizer, case.dialect).parse(
        case.input.decode("utf-8", errors="replace"), request, enable_auto_tools=True
    )
    message = expected_message(doc)
    assert reasoning is None
    assert (content or "") == message["content"]
    assert [(c.name, c.arguments) for c in calls or []] == [
        (c["name"], c["arguments"]) for c in message["calls"]
    ]


@pytest.mark.parametrize("case", SERVABLE, ids=lambda c: c.id)
def test_the_reasoning_and_tool_parsers_together(tokenizer, case):
    if not reasoning_markers(case.dialect):
        pytest.skip(f"{case.dialect} has no reasoning markers: no reasoning parser")
    doc = document(case)
    if not reasoning_leads(doc):
        pytest.skip("reasoning after answer text or a call: vLLM's tool phase reads it")
    request = request_for(case)
    want = expected_stream(doc)
    for step_tokens in STEPS:
        parser = parser_for(tokenizer, case.dialect, reasoning=True)
        got = stream(parser, tokenizer, case, request, step_tokens)
        assert without_ids(got) == without_ids(want), f"{step_tokens} tokens a step"
    parser = parser_for(tokenizer, case.dialect, reasoning=True)
    parser.set_prompt_token_ids(prompt_ids(tokenizer, case, case.dialect))
    reasoning, content, calls = parser.parse(
        case.input.decode("utf-8", errors="replace"), request, enable_auto_tools=True
    )
    message = expected_message(doc)
    assert (reasoning or "") == message["reasoning"]
    assert (content or "") == message["content"]
    assert [(c.name, c.arguments) for c in calls or []] == [
        (c["name"], c["arguments"]) for c in message["calls"]
    ]


def test_reasoning_token_ids_come_from_the_vocabulary():
    # `</think>` one token (as in real vocabularies) and, in the byte tokenizer
    # alone, eight tokens: the end check reads both.
    for tokenizer in (byte_tokenizer(["<think>", "</think>"]), byte_tokenizer()):
        parser = parser_for(tokenizer, "hermes", tools=False, reasoning=True)
        ids = tokenizer.encode("<think>plan</think>done", add_special_tokens=False)
        assert parser.is_reasoning_end(ids)
        assert not parser.is_reasoning_end(ids[: len(ids) - len("done") - 2])
        assert tokenizer.decode(parser._extract_content_ids(ids)) == "done"
        assert not parser.is_reasoning_end(tokenizer.encode("<think>plan", add_special_tokens=False))


def test_responses_function_tools_type_the_arguments_too(tokenizer):
    # The Responses API's tools are flat (`FunctionTool(type, name, parameters)`).
    from openai.types.responses import FunctionTool

    from idiolect._servers import tools_option

    parameters = {"type": "object", "properties": {"n": {"type": "integer"}}}
    tools = [FunctionTool(type="function", name="f", parameters=parameters, strict=True)]
    assert tools_option(tools) == [{"name": "f", "parameters": parameters}]
    parser = ParserManager.get_parser(
        tool_parser_name="idiolect-qwen3-coder", enable_auto_tools=True, tokenizer=tokenizer
    )(tokenizer, tools)
    text = "<tool_call>\n<function=f>\n<parameter=n>\n7\n</parameter>\n</function>\n</tool_call>"
    info = parser.tool_parser.extract_tool_calls(text, request_for(SERVABLE[0]))
    assert [c.function.arguments for c in info.tool_calls] == ['{"n":7}']
