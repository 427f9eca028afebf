"""Per-token cost inside vLLM: vLLM's own tool parser against idiolect's plug-in.

One long turn per family (reasoning, prose and ten calls with large string
arguments, written by `idiolect.render`) is streamed one token a step through the
parser vLLM composes (`ParserManager.get_parser(...)`, then `parse_delta` per step,
the serving layer's call), once with vLLM's parser for the family and once with
`idiolect-<family>`, in one process, alternating, best of a few rounds. No reasoning
parser in either: the tool parser reads the whole turn. Prints microseconds per token
over the first and the last thousand tokens and the ratio.

Tokens: a byte-level tokenizer built locally with the family's special tokens added
as single tokens (hub tokenizers cannot be downloaded here); other text is cut into
tokens of 4 bytes (about what a BPE vocabulary gives on English and code), never
inside a character. Run by `servers/check`, or in an environment with vLLM:

    python bindings/python/servers/bench.py [--rounds N]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

import idiolect  # noqa: E402
import idiolect.vllm  # noqa: E402,F401  (registers the plug-in's parsers)

# Each family: vLLM's own parser for it, and the model's special tokens (what its
# vocabulary holds as single tokens; vLLM's parsers look some of them up).
FAMILIES = {
    "hermes": ("hermes", ["<tool_call>", "</tool_call>", "<think>", "</think>"]),
    "qwen3-coder": ("qwen3_coder", ["<tool_call>", "</tool_call>", "<think>", "</think>"]),
    "deepseek-v3.1": (
        "deepseek_v31",
        [
            "<\uff5ctool\u2581calls\u2581begin\uff5c>",
            "<\uff5ctool\u2581call\u2581begin\uff5c>",
            "<\uff5ctool\u2581sep\uff5c>",
            "<\uff5ctool\u2581call\u2581end\uff5c>",
            "<\uff5ctool\u2581calls\u2581end\uff5c>",
            "<think>",
            "</think>",
        ],
    ),
    "kimi-k2": (
        "kimi_k2",
        [
            "<|tool_calls_section_begin|>",
            "<|tool_call_begin|>",
            "<|tool_call_argument_begin|>",
            "<|tool_call_end|>",
            "<|tool_calls_section_end|>",
            "<think>",
            "</think>",
        ],
    ),
    "glm": (
        "glm47",
        [
            "<tool_call>",
            "</tool_call>",
            "<arg_key>",
            "</arg_key>",
            "<arg_value>",
            "</arg_value>",
            "<think>",
            "</think>",
        ],
    ),
}

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    }
]


def long_turn(family: str) -> str:
    """Reasoning, prose and ten write_file calls with ~1.3 KB of code each."""
    code = "".join(
        f"def step_{n}(x):\n    # the {n}th step of the pipeline\n    return x * {n} + {n % 7}\n\n"
        for n in range(20)
    )
    items = [
        {"type": "reasoning", "text": "I should write the ten modules one by one. " * 30, "closed": True},
        {"type": "text", "text": "I will write the ten files now.\n" * 12},
    ]
    for n in range(10):
        arguments = json.dumps({"path": f"src/module_{n}.py", "content": code}, ensure_ascii=False)
        items.append(
            {
                "type": "tool_call",
                "index": n,
                "id": f"functions.write_file:{n}" if family == "kimi-k2" else None,
                "name": "write_file",
                "arguments": arguments,
                "input": json.loads(arguments),
                "complete": True,
            }
        )
    text = idiolect.render(family, "turn", {"items": items})
    calls = [i for i in idiolect.parse(family, text)["items"] if i["type"] == "tool_call" and i["complete"]]
    assert len(calls) == 10, f"{family}: the rendered turn parses to {len(calls)} calls"
    return text


def tokens(text: str, specials: list[str], tokenizer) -> list[tuple[str, list[int]]]:
    """The turn as (text, ids) tokens: special tokens whole, other text in 4-byte
    pieces that end on character boundaries."""
    out: list[tuple[str, list[int]]] = []
    at = 0
    while at < len(text):
        special = next((s for s in specials if text.startswith(s, at)), None)
        if special is not None:
            piece = special
        else:
            end, size = at, 0
            while end < len(text) and size < 4 and not any(text.startswith(s, end) for s in specials):
                size += len(text[end].encode())
                end += 1
            piece = text[at:end]
        out.append((piece, tokenizer.encode(piece, add_special_tokens=False)))
        at += len(piece)
    return out


def floor_parser(tool_parser_base, delta_message):
    """A tool parser that does no parsing (each step's text is content): what
    vLLM's serving layer costs per step around any parser."""

    class Floor(tool_parser_base):
        engine_based_streaming = True

        def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, *rest):
            return delta_message(content=delta_text)

        def finish_streaming(self):
            return None

    return Floor


def run(parser_cls, tokenizer, request, steps, prompt) -> tuple[list[int], str]:
    """Streams the steps through a fresh parser; returns the nanoseconds of each
    step and what the deltas said (content and arguments), to check both parsers
    read the turn."""
    parser = parser_cls(tokenizer)
    times = []
    said = []
    clock = time.perf_counter_ns
    last = len(steps) - 1
    for n, (text, ids) in enumerate(steps):
        start = clock()
        delta = parser.parse_delta(text, ids, request, prompt_token_ids=prompt, finished=n == last)
        times.append(clock() - start)
        if delta is not None:
            said.extend(c.function.arguments or "" for c in delta.tool_calls if c.function)
    return times, "".join(said)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds; the best counts")
    options = ap.parse_args()

    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.parser_manager import ParserManager
    from vllm.tool_parsers import ToolParserManager

    api = idiolect.vllm.load_api()
    ToolParserManager.register_module(name="floor", module=floor_parser(api.ToolParser, api.DeltaMessage))

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
    from server_cases import byte_tokenizer

    import vllm

    print(f"vLLM {vllm.__version__}, idiolect {idiolect.__version__}, Python {sys.version.split()[0]}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; best of {options.rounds} rounds\n")
    print(
        "| family | tokens | vLLM's parser, first 1000 | idiolect, first 1000 | vLLM's parser, last 1000 "
        "| idiolect, last 1000 | serving floor, last 1000 | ratio, last 1000 | ratio less the floor, last 1000 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for family, (theirs, specials) in FAMILIES.items():
        tokenizer = byte_tokenizer(specials)
        text = long_turn(family)
        steps = tokens(text, specials, tokenizer)
        request = ChatCompletionRequest(
            model="m", messages=[{"role": "user", "content": "write them"}], tools=TOOLS
        )
        prompt = tokenizer.encode("user: write them\nassistant: ", add_special_tokens=False)
        classes = {
            name: ParserManager.get_parser(tool_parser_name=name, enable_auto_tools=True, tokenizer=tokenizer)
            for name in (theirs, f"idiolect-{family}", "floor")
        }
        best: dict[str, list[int]] = {}
        for _ in range(options.rounds):
            for name, cls in classes.items():
                gc.collect()
                times, said = run(cls, tokenizer, request, steps, prompt)
                if not said and name != "floor":
                    raise SystemExit(f"{name} streamed no arguments for {family}: not a fair run")
                if name not in best or sum(times) < sum(best[name]):
                    best[name] = times

        def us(name: str, part: slice) -> float:
            chosen = best[name][part]
            return sum(chosen) / len(chosen) / 1000

        first, last = slice(0, 1000), slice(-1000, None)
        mine = f"idiolect-{family}"
        floor = us("floor", last)
        print(
            f"| {family} (vLLM `{theirs}`) | {len(steps)} | {us(theirs, first):.1f} µs | {us(mine, first):.1f} µs "
            f"| {us(theirs, last):.1f} µs | {us(mine, last):.1f} µs | {floor:.1f} µs "
            f"| {us(theirs, last) / us(mine, last):.1f}x "
            f"| {(us(theirs, last) - floor) / max(us(mine, last) - floor, 0.05):.1f}x |"
        )


if __name__ == "__main__":
    main()
