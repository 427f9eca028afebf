"""A JSON Lines corpus of transcripts parsed with Ray Data on a local cluster
(`ray.init(num_cpus=2)`), `parse_many(..., output="json")` inside each batch, gives
the documents one process gives; and `output="json"` is the JSON of the documents
`parse_many` returns as dicts."""

import json
import sys
from pathlib import Path

import pytest

import idiolect
from corpus import load_cases

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))


def transcripts():
    """Records made of the hermes corpus's UTF-8 inputs (documents of every shape:
    text, reasoning, complete and cut calls)."""
    records = []
    for case in load_cases():
        if case.dialect != "hermes" or case.options is not None:
            continue
        try:
            text = case.input.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for copy in range(4):
            records.append({"id": f"{case.name}/{copy}", "text": f"Turn {copy}.\n" + text})
    return records


def test_output_json_is_the_documents_json():
    texts = [r["text"] for r in transcripts()]
    as_json = idiolect.parse_many("hermes", texts, output="json", threads=2)
    as_dicts = idiolect.parse_many("hermes", texts)
    assert all(isinstance(s, str) for s in as_json)
    assert [json.loads(s) for s in as_json] == as_dicts
    # Compact, in the document's key order.
    assert as_json[0] == json.dumps(as_dicts[0], separators=(",", ":"), ensure_ascii=False)
    assert idiolect.parse_many("hermes", [], output="json") == []
    assert idiolect.parse_many("hermes", [b"hi"], output="json", spans=True) == [
        '{"items":[{"type":"text","text":"hi","span":[0,2]}]}'
    ]
    with pytest.raises(ValueError, match='output must be "python" or "json"'):
        idiolect.parse_many("hermes", ["x"], output="arrow")


def test_ray_data_parses_like_one_process(tmp_path):
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data")
    import ray_transcripts

    records = transcripts()
    assert len(records) > 200
    path = tmp_path / "transcripts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    expected = dict(
        zip(
            (r["id"] for r in records),
            idiolect.parse_many("hermes", [r["text"] for r in records], output="json"),
        )
    )
    # The workers import the example from its folder, shipped as their working
    # directory.
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"working_dir": str(EXAMPLES)},
    )
    try:
        dataset = ray_transcripts.parse_jsonl(str(path), "hermes", batch_size=64)
        rows = dataset.take_all()
    finally:
        ray.shutdown()
    got = {row["id"]: row["document"] for row in rows}
    assert len(rows) == len(records)
    assert got == expected
