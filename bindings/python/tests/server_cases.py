"""The corpus as the inference servers see it, for the plug-ins' tests: what the
deltas and the one-shot message of a case must say (the rules SV-1 to SV-7 of
`idiolect._servers`, read on the folded document), the cases a server can express,
the steps a server streams, and a byte-level tokenizer that stands in for a hub
tokenizer."""

from __future__ import annotations

from typing import Any

import idiolect
from idiolect._servers import families
from corpus import load_cases

FAMILIES = families()
CASES = [case for case in load_cases() if case.dialect in FAMILIES]

# What a server can tell a parser: the request's tools, and (through the prompt
# that ends inside reasoning) where the output starts. Other options
# (`reasoning_markers`, `bare_json_calls`, `tokenizer_version`) have no server flag.
SERVABLE_OPTIONS = {"tools", "start_in_reasoning"}


def servable(case) -> bool:
    return set(case.options or {}) <= SERVABLE_OPTIONS


def starts_in_reasoning(case) -> bool:
    """Whether the case's output starts inside reasoning: its `start_in_reasoning`,
    else the family's default (minimax-m2's is true), seen on a bare output."""
    options = case.options or {}
    if "start_in_reasoning" in options:
        return bool(options["start_in_reasoning"])
    return idiolect.parse(case.dialect, "x")["items"][0]["type"] == "reasoning"


def declared_tools(case, doc=None) -> list[dict[str, Any]]:
    """The case's tools in the Chat Completions shape: its options' tools, and every
    tool that `doc` (the case's document by default) calls (a call to an undeclared
    tool is one SGLang drops)."""
    tools = {t["name"]: t for t in (case.options or {}).get("tools", [])}
    for item in (doc or case.expected)["items"]:
        if item["type"] == "tool_call" and item["name"] not in tools:
            tools[item["name"]] = {"name": item["name"], "parameters": {"type": "object"}}
    if not tools:
        tools["noop"] = {"name": "noop", "parameters": {"type": "object"}}
    return [{"type": "function", "function": dict(t)} for t in tools.values()]


def document(case, **options) -> dict[str, Any]:
    """The case's document with `options` over its own (`reasoning_markers` only
    for a family that has them: the others refuse the option)."""
    if not idiolect.reasoning_markers(case.dialect):
        options.pop("reasoning_markers", None)
    return idiolect.parse(case.dialect, case.input, {**(case.options or {}), **options})


def _near_call(items, at) -> bool:
    return any(0 <= n < len(items) and items[n]["type"] == "tool_call" for n in (at - 1, at + 1))


def expected_stream(doc, names=None) -> dict[str, Any]:
    """What the deltas of a document concatenate to: its reasoning, its text less
    whitespace-only text next to a call, and the calls whose arguments begin as a
    JSON object (or that ended complete with none), numbered in order."""
    items = doc["items"]
    content, reasoning, calls = "", "", []
    for at, item in enumerate(items):
        if item["type"] == "reasoning":
            reasoning += item["text"]
        elif item["type"] == "text":
            if not (_near_call(items, at) and item["text"].strip() == ""):
                content += item["text"]
        elif names is None or item["name"] in names:
            arguments = item["arguments"]
            sent = arguments.lstrip().startswith("{") or (item["complete"] and not arguments.strip())
            if sent:
                calls.append({"id": item["id"], "name": item["name"], "arguments": arguments})
    return {"content": content, "reasoning": reasoning, "calls": calls}


def expected_message(doc, names=None) -> dict[str, Any]:
    """The one-shot message of a document: as the deltas, with complete calls only."""
    streamed = expected_stream(doc, names)
    complete = [
        {"id": i["id"], "name": i["name"], "arguments": i["arguments"]}
        for i in doc["items"]
        if i["type"] == "tool_call" and i["complete"] and (names is None or i["name"] in names)
    ]
    return {"content": streamed["content"], "reasoning": streamed["reasoning"], "calls": complete}


def reasoning_leads(doc) -> bool:
    """Whether all of the document's reasoning comes before its first text or call
    (a server's reasoning parser hands everything after that to its tool parser)."""
    seen_other = False
    for item in doc["items"]:
        if item["type"] == "reasoning" and seen_other:
            return False
        if item["type"] != "reasoning":
            seen_other = True
    return True


def steps(data: bytes, tokens: int | None) -> list[str]:
    """The texts a server streams for `data` at `tokens` one-byte tokens a step
    (None: one step), each ending on a character boundary as a detokenizer holds
    back an incomplete UTF-8 sequence."""
    text_steps, at = [], 0
    size = len(data) if tokens is None else tokens
    while at < len(data):
        end = min(at + max(size, 1), len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end += 1
        text_steps.append(data[at:end].decode("utf-8", errors="replace"))
        at = end
    return text_steps


def byte_tokenizer(extra_tokens: list[str] = ()):
    """A tokenizer of one token per byte (the 256-symbol byte alphabet, no
    merges) as a transformers `PreTrainedTokenizerFast`, built locally; `extra_tokens`
    are added as single tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    model = models.BPE(vocab={symbol: n for n, symbol in enumerate(alphabet)}, merges=[])
    tokenizer = Tokenizer(model)
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tokenizer.decoder = decoders.ByteLevel()
    wrapped = PreTrainedTokenizerFast(tokenizer_object=tokenizer)
    if extra_tokens:
        wrapped.add_tokens(list(extra_tokens))
    return wrapped
