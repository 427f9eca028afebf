"""The conformance corpus as the Rust runner loads it, and its comparison rules.

Mirrors src/conformance.rs (cases, options merged shallowly over the dialect's
options.json) and src/conformance/compare.rs (arrays in order, strings exactly,
numbers by value, objects in key order).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "conformance"


@dataclass(frozen=True)
class Case:
    dialect: str
    name: str
    input: bytes
    expected: object
    options: object

    @property
    def id(self) -> str:
        return f"{self.dialect}::{self.name}"


def _merge(base, own):
    if isinstance(base, dict) and isinstance(own, dict):
        return {**base, **own}
    if own is None:
        return base
    return own


def load_cases() -> list[Case]:
    """Every case of every dialect folder, sorted as the Rust runner sorts them."""
    cases = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        shared = folder / "options.json"
        base = json.loads(shared.read_text()) if shared.exists() else None
        for txt in sorted(folder.glob("*.txt")):
            own_path = txt.with_suffix(".options.json")
            own = json.loads(own_path.read_text()) if own_path.exists() else None
            cases.append(
                Case(
                    dialect=folder.name,
                    name=txt.stem,
                    input=txt.read_bytes(),
                    expected=json.loads(txt.with_suffix(".json").read_text()),
                    options=_merge(base, own),
                )
            )
    return cases


def same(expected, got) -> bool:
    """Whether `got` equals `expected` under the corpus's rules (keys in order)."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(expected) is type(got) and expected == got
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        if isinstance(expected, int) and isinstance(got, int):
            return expected == got
        return float(expected) == float(got)
    if isinstance(expected, list) and isinstance(got, list):
        return len(expected) == len(got) and all(
            same(x, y) for x, y in zip(expected, got)
        )
    if isinstance(expected, dict) and isinstance(got, dict):
        return len(expected) == len(got) and all(
            ka == kb and same(va, vb)
            for (ka, va), (kb, vb) in zip(expected.items(), got.items())
        )
    return type(expected) is type(got) and expected == got


def chunks_of(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def random_chunking(data: bytes, name: str, salt: int) -> list[bytes]:
    """A reproducible random chunking: chunk sizes from 1 to a per-run maximum."""
    rng = random.Random(f"{name}#{salt}")
    limit = rng.randint(1, 40)
    out, at = [], 0
    while at < len(data):
        size = rng.randint(1, limit)
        out.append(data[at : at + size])
        at += size
    return out
