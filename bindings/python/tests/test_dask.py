"""A JSON Lines corpus of transcripts parsed partition by partition on a local Dask
distributed cluster (a scheduler and two worker processes on loopback), with
`parse_many` inside each partition, gives the documents one process gives."""

import json
import os
import sys
from pathlib import Path

import pytest

import idiolect
from corpus import load_cases

distributed = pytest.importorskip("dask.distributed")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import dask_transcripts  # noqa: E402


def transcripts():
    """Records made of the anthropic-xml and sections corpora's UTF-8 inputs."""
    records = []
    for case in load_cases():
        if case.dialect != "anthropic-xml" or case.options is not None:
            continue
        try:
            text = case.input.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for copy in range(8):
            records.append({"id": f"{case.name}/{copy}", "text": f"Turn {copy}.\n" + text})
    return records


def test_dask_cluster_parses_like_one_process(tmp_path):
    records = transcripts()
    assert len(records) > 500
    path = tmp_path / "transcripts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    expected = [
        {"id": r["id"], "document": idiolect.parse("anthropic-xml", r["text"])}
        for r in records
    ]

    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    )
    with cluster, distributed.Client(cluster) as client:
        pids = set(client.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids
        bag = dask_transcripts.parse_jsonl(str(path), "anthropic-xml", blocksize=16 * 1024)
        assert bag.npartitions >= 4
        got = bag.compute()
    # Key order and types too: the same JSON text, not only equal dicts.
    assert json.dumps(got) == json.dumps(expected)
