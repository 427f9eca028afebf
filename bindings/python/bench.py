"""Benchmark of the Python package against the Rust library on the same inputs.

    python bindings/python/bench.py [--size BYTES] [--dialects a,b]

Builds `idiolect-rate` (bindings/python/rate, release), which writes one input per
dialect with the generators of `benches/throughput.rs` and measures the library on
it; then measures the package on the same bytes. Prints Markdown tables:

1. whole documents: `idiolect.parse` (str in, dict out) against the library's typed
   parse, built with the system allocator (a Rust program's default) and with
   mimalloc (the allocator of the package's native module; the
   `idiolect-rate-mimalloc` build of the same program), and against the session
   path writing compact JSON;
2. many documents: `parse_many` on 1 and 2 threads against the typed library parse
   on a rayon pool of the same size, over the same input cut into records of ~4 KB;
   the MB/s columns and the first Python 2 / 1 time each call with the freeing of
   its result (CPython's deallocation, serial whatever `threads` says), the last
   2 / 1 the call alone;
3. streaming: the cost of one `Parser.feed` call at 4-byte chunks (a token), and
   of one `ChatDeltas.feed` on a hermes transcript made here.

Every rate is the best of three rounds taken alternately with the rates it is compared
with (the Rust side's and the Python side's; one thread's and two threads'), each
round itself the best of its runs over 0.7 s: on a shared machine the rates change
from one second to the next, and a ratio of two rates taken in different seconds
says more about the machine than about the code.

The machine's load average (`os.getloadavg`) is printed before and after: on a
shared machine every rate, the Rust side's too, is a fraction of an idle one's,
and the thread columns mean little unless the load is below the core count.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import idiolect

ROOT = Path(__file__).resolve().parents[2]


# Rounds of each measurement, taken alternately (see `main`). With two, one side's
# figure now and then fell wholly in a slow window of the host (a `parse` of code no
# change touched at 0.49-0.54 of the library in one run, 0.73-0.85 in the runs around
# it); a third round gives both sides one more chance at a quiet one.
ROUNDS = 3


def best_of(f, minimum=0.7, runs=3, free=True):
    """The best time of `f()` over at least `runs` runs and `minimum` seconds:
    with the freeing of its result (`free`), or of the call alone."""
    best, start, n = float("inf"), time.perf_counter(), 0
    while n < runs or time.perf_counter() - start < minimum:
        t = time.perf_counter()
        result = f()
        if free:
            del result
            best = min(best, time.perf_counter() - t)
        else:
            best = min(best, time.perf_counter() - t)
            del result
        n += 1
    return best


def rate_tools():
    """The two builds of the Rust side: with the system allocator (as a Rust
    program gets by default) and with mimalloc (as the package's native module)."""
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "idiolect-rate"], cwd=ROOT, check=True
    )
    # Where cargo put them: CARGO_TARGET_DIR if set (relative to the root, as cargo
    # reads it here), else the workspace's target directory.
    target = ROOT / os.environ.get("CARGO_TARGET_DIR", "target") / "release"
    return target / "idiolect-rate", target / "idiolect-rate-mimalloc"


def rust(tool, *args):
    out = subprocess.run([str(tool), *map(str, args)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def records_of(text, size=4096):
    """The text cut into records of about `size` bytes, at line ends."""
    records, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        records.append(text[start:end])
        start = end
    return records


def hermes_transcript(size):
    """A hermes turn of about `size` bytes: reasoning, text and tool calls."""
    unit = (
        "<think>The user wants the weather; check the city first.</think>"
        "Let me look that up for you.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}'
        "\n</tool_call>\n"
    )
    return unit * (size // len(unit) + 1)


def load():
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4_000_000)
    parser.add_argument("--dialects", default="sections,anthropic-xml,plurnk,kindaxml,transcript")
    args = parser.parse_args()
    tool, tool_mimalloc = rate_tools()
    before = load()
    whole_rows, many_rows, feed_rows = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([str(tool), "gen", tmp, str(args.size)], check=True)
        for dialect in args.dialects.split(","):
            path = Path(tmp) / f"{dialect}.txt"
            text = path.read_text(encoding="utf-8")
            mb = len(text.encode()) / 1e6

            # Each side twice, alternately, the best of each: on a shared machine
            # the rates change from one second to the next, and both sides should
            # have their chance at a quiet window.
            lib, lib_mimalloc, py = {"library": 0, "session": 0}, 0, 0
            for _ in range(ROUNDS):
                got = rust(tool, "whole", dialect, path)
                lib = {k: max(lib[k], got[k]) for k in lib}
                lib_mimalloc = max(lib_mimalloc, rust(tool_mimalloc, "whole", dialect, path)["library"])
                py = max(py, mb / best_of(lambda: idiolect.parse(dialect, text)))
            whole_rows.append(
                f"| {dialect} | {mb:.1f} MB | {lib['library']:.0f} | {lib_mimalloc:.0f} "
                f"| {lib['session']:.0f} | {py:.0f} | **{py / lib['library']:.2f}** "
                f"| {py / lib_mimalloc:.2f} | {py / lib['session']:.2f} |"
            )

            records = records_of(text)
            jsonl = Path(tmp) / f"{dialect}.jsonl"
            jsonl.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
            rates = {}
            for _ in range(ROUNDS):
                for threads in (1, 2):
                    got = {
                        "rust": rust(tool, "many", dialect, jsonl, threads)["library"],
                        "py": mb
                        / best_of(lambda: idiolect.parse_many(dialect, records, threads=threads)),
                        "call": mb
                        / best_of(
                            lambda: idiolect.parse_many(dialect, records, threads=threads),
                            free=False,
                        ),
                    }
                    for side, rate in got.items():
                        rates[(side, threads)] = max(rates.get((side, threads), 0), rate)
            many_rows.append(
                f"| {dialect} | {len(records)} | {rates[('rust', 1)]:.0f} | {rates[('rust', 2)]:.0f} "
                f"| {rates[('py', 1)]:.0f} | {rates[('py', 2)]:.0f} "
                f"| {rates[('py', 1)] / rates[('rust', 1)]:.2f} "
                f"| {rates[('rust', 2)] / rates[('rust', 1)]:.2f} "
                f"| {rates[('py', 2)] / rates[('py', 1)]:.2f} "
                f"| **{rates[('call', 2)] / rates[('call', 1)]:.2f}** |"
            )

            sample = text.encode()[:262_144]
            chunks = [sample[i : i + 4] for i in range(0, len(sample), 4)]

            def stream():
                p = idiolect.Parser(dialect)
                for chunk in chunks:
                    p.feed(chunk)
                p.finish()

            seconds = best_of(stream)
            feed_rows.append(
                f"| {dialect} | {len(chunks)} | {seconds / len(chunks) * 1e6:.2f} µs "
                f"| {len(sample) / 1e6 / seconds:.1f} |"
            )

    sample = hermes_transcript(262_144).encode()[:262_144]
    chunks = [sample[i : i + 4] for i in range(0, len(sample), 4)]

    def deltas():
        d = idiolect.ChatDeltas("hermes")
        for chunk in chunks:
            d.feed(chunk)
        d.finish()

    seconds = best_of(deltas)
    feed_rows.append(
        f"| hermes (`ChatDeltas`) | {len(chunks)} | {seconds / len(chunks) * 1e6:.2f} µs "
        f"| {len(sample) / 1e6 / seconds:.1f} |"
    )

    print(f"Before: {before}. After: {load()}.\n")
    print("## Whole documents (MB/s)\n")
    print(
        "| dialect | size | Rust library | Rust library, mimalloc | Rust session → JSON "
        "| `idiolect.parse` | / library (target ≥ 0.7) | / library, mimalloc | / session |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(whole_rows))
    print("\n## Many documents (MB/s; records of ~4 KB)\n")
    print(
        "| dialect | records | Rust library 1 thread | Rust library 2 threads "
        "| `parse_many` 1 thread | `parse_many` 2 threads | Python 1 / Rust 1 "
        "| Rust 2 / 1 | Python 2 / 1 | Python 2 / 1, the call alone (target ≥ 1.6) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(many_rows))
    print("\n## Streaming at 4-byte chunks (first 256 KiB of each input)\n")
    print("| dialect | feeds | per `feed` | MB/s |")
    print("|---|---|---|---|")
    print("\n".join(feed_rows))


if __name__ == "__main__":
    main()
