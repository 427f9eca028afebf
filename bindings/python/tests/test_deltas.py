"""`idiolect.ChatDeltas` over every field-family case of the corpus.

For each case, in both modes (argument fragments live, and whole calls) and in
several chunkings:
- the deltas, merged, say what the case's expected document says: the text, the
  reasoning, and each tool call's index, id, name and arguments (in whole-calls
  mode, the complete calls only);
- the delta each `feed` returns is exactly the merge of a run of the lines that
  `idiolect stream FAMILY --deltas --chunk-size N` prints for the same chunks, and
  those runs cover the lines in order: one projection, the CLI's (at 4-byte chunks
  live, and at 3-byte chunks with whole calls where the case has a call).
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import idiolect
from corpus import ROOT, chunks_of, load_cases, random_chunking, same

FAMILIES = [
    "hermes",
    "qwen3-coder",
    "deepseek-v3",
    "deepseek-v3.1",
    "harmony",
    "mistral",
    "llama3-json",
    "pythonic",
    "reasoning",
    "kimi-k2",
    "minimax-m2",
    "glm",
    "seed-oss",
    "deepseek-dsml",
    "gigachat-gcml",
    "step3",
    "hunyuan",
    "hunyuan-a13b",
    "kimi-k3",
    "gemma4",
    "function-gemma",
    "granite",
    "cohere",
    "jamba",
    "internlm",
    "nemotron",
    "apertus",
]
CASES = [case for case in load_cases() if case.dialect in FAMILIES]



def test_the_families_are_the_field_dialects():
    assert set(FAMILIES) <= set(idiolect.dialects())
    assert {case.dialect for case in CASES} == set(FAMILIES)
    # Every family the package calls one (its `--deltas` message lists them) is here.
    with pytest.raises(ValueError) as raised:
        idiolect.ChatDeltas("sections")
    listed = str(raised.value).split("(", 1)[1].split(")", 1)[0].split(", ")
    assert listed == FAMILIES


@pytest.fixture(scope="module")
def cli():
    """The idiolect CLI of this checkout ($IDIOLECT_BIN, or built by cargo)."""
    given = os.environ.get("IDIOLECT_BIN")
    if given:
        return given
    subprocess.run(["cargo", "build", "-q", "--bin", "idiolect"], cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    return str(target / "debug" / "idiolect")


def merge(acc, delta):
    """`delta` merged after `acc` (None: nothing yet), as ChatDeltas merges the
    deltas of one chunk: texts concatenated, argument fragments joined to the
    entry of the same call before them."""
    if acc is None:
        return json.loads(json.dumps(delta))
    out = dict(acc)
    for key in ("content", "reasoning"):
        if key in delta:
            out[key] = out.get(key, "") + delta[key]
    if "tool_calls" in delta:
        calls = [json.loads(json.dumps(c)) for c in out.get("tool_calls", [])]
        for call in delta["tool_calls"]:
            continues = "id" not in call and "type" not in call and "name" not in call["function"]
            if continues and calls and calls[-1]["index"] == call["index"]:
                if "arguments" in call["function"]:
                    last = calls[-1]["function"]
                    last["arguments"] = last.get("arguments", "") + call["function"]["arguments"]
            else:
                calls.append(json.loads(json.dumps(call)))
        out["tool_calls"] = calls
    # Keys in the order Rust writes them.
    return {k: out[k] for k in ("content", "reasoning", "tool_calls") if k in out}


def feed_all(case, chunks, whole_calls):
    stream = idiolect.ChatDeltas(case.dialect, case.options, whole_calls=whole_calls)
    answers = [stream.feed(chunk) for chunk in chunks]
    answers.append(stream.finish())
    for answer in answers:
        assert answer is None or (isinstance(answer, dict) and answer), f"{case.id}: {answer!r}"
    return answers


def summary_of_deltas(deltas):
    """Text, reasoning and calls (by index: id, name, arguments) of a delta list."""
    content, reasoning, calls = "", "", {}
    for delta in deltas:
        if delta is None:
            continue
        content += delta.get("content", "")
        reasoning += delta.get("reasoning", "")
        for call in delta.get("tool_calls", []):
            index = call["index"]
            if index not in calls:
                assert call.get("type") == "function" and "name" in call["function"], call
                calls[index] = {"id": call["id"], "name": call["function"]["name"], "arguments": ""}
            else:
                assert "id" not in call and "name" not in call["function"], call
            calls[index]["arguments"] += call["function"].get("arguments", "")
    return {"content": content, "reasoning": reasoning, "calls": calls}


def summary_of_document(document, whole_calls):
    items = document["items"]
    return {
        "content": "".join(i["text"] for i in items if i["type"] == "text"),
        "reasoning": "".join(i["text"] for i in items if i["type"] == "reasoning"),
        "calls": {
            i["index"]: {"id": i["id"], "name": i["name"], "arguments": i["arguments"]}
            for i in items
            if i["type"] == "tool_call" and (i["complete"] or not whole_calls)
        },
    }


def schedules(case):
    yield "whole", [case.input]
    yield "1-byte chunks", chunks_of(case.input, 1)
    yield "4-byte chunks", chunks_of(case.input, 4)
    for salt in range(2):
        yield f"random chunking #{salt}", random_chunking(case.input, case.name, salt)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
@pytest.mark.parametrize("whole_calls", [False, True], ids=["live", "whole_calls"])
def test_merged_deltas_say_what_the_document_says(case, whole_calls):
    expected = summary_of_document(case.expected, whole_calls)
    for label, chunks in schedules(case):
        got = summary_of_deltas(feed_all(case, chunks, whole_calls))
        assert got == expected, f"{case.id} {label} (whole_calls={whole_calls})"


def has_call(case):
    return any(i["type"] == "tool_call" for i in case.expected["items"])


def cli_runs(case):
    """The CLI runs of a case: 4-byte chunks (a token) with live arguments, and
    3-byte chunks with whole calls where the case has a call. One process per
    run, so few runs: a debug build compiles some families' grammars at start."""
    yield False, 4
    if has_call(case):
        yield True, 3


@pytest.fixture(scope="module")
def cli_deltas(cli, tmp_path_factory):
    """The CLI's delta lines for every run of every case, two processes at a time."""
    folder = tmp_path_factory.mktemp("cli")
    jobs = []
    for n, case in enumerate(CASES):
        path = folder / f"{n}.txt"
        path.write_bytes(case.input)
        options = []
        if case.options is not None:
            options_path = folder / f"{n}.options.json"
            options_path.write_text(json.dumps(case.options))
            options = ["--options", str(options_path)]
        for whole_calls, size in cli_runs(case):
            command = [cli, "stream", case.dialect, str(path), "--deltas"]
            command += ["--chunk-size", str(size), *options]
            command += ["--whole-calls"] if whole_calls else []
            jobs.append(((case.id, whole_calls, size), command))

    def run(job):
        key, command = job
        out = subprocess.run(command, capture_output=True, check=False)
        return key, out

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(run, jobs))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_each_feed_is_a_run_of_the_cli_deltas(cli_deltas, case):
    for whole_calls, size in cli_runs(case):
        label = f"{case.id} chunk size {size} whole_calls={whole_calls}"
        out = cli_deltas[(case.id, whole_calls, size)]
        assert out.returncode in (0, 1), f"{label}: {out.stderr.decode(errors='replace')}"
        lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
        answers = [a for a in feed_all(case, chunks_of(case.input, size), whole_calls) if a]
        at = 0
        for answer in answers:
            acc = None
            while acc is None or not same(answer, acc):
                assert at < len(lines), f"{label}: {answer} is no run of the CLI's deltas"
                acc = merge(acc, lines[at])
                at += 1
        assert at == len(lines), f"{label}: the CLI printed more deltas: {lines[at:]}"


def test_merge_is_checked_by_a_failing_case():
    # The comparison above can fail: a run that does not add up is refused.
    a = {"content": "ab"}
    assert same(merge(merge(None, {"content": "a"}), {"content": "b"}), a)
    assert not same(merge(None, {"content": "a"}), a)
    call = {"index": 0, "id": None, "type": "function", "function": {"name": "f"}}
    frag = {"index": 0, "function": {"arguments": "{}"}}
    merged = merge(merge(None, {"tool_calls": [call]}), {"tool_calls": [frag]})
    assert merged == {
        "tool_calls": [
            {"index": 0, "id": None, "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ]
    }
