"""Parse a JSON Lines corpus of transcripts on a Dask cluster, partition by partition.

Each line is a record such as {"id": "r1", "text": "<model output>"}. Dask splits
the file into partitions (blocks of whole lines) and sends them to its workers; each
worker parses its partition with `idiolect.parse_many`, which uses every core of that
worker with the GIL released. The result is one {"id", "document"} per record, in
file order.

    python examples/dask_transcripts.py corpus.jsonl anthropic-xml            # a local cluster
    python examples/dask_transcripts.py corpus.jsonl anthropic-xml tcp://scheduler:8786
"""

from __future__ import annotations

import json
import sys

import idiolect


def parse_partition(lines, dialect, options=None, field="text", id_field="id", threads=None):
    """Parses one partition (an iterable of JSON Lines) into {"id", "document"} records."""
    records = [json.loads(line) for line in lines if line.strip()]
    documents = idiolect.parse_many(
        dialect, [record[field] for record in records], options, threads=threads
    )
    return [
        {"id": record.get(id_field), "document": document}
        for record, document in zip(records, documents)
    ]


def parse_jsonl(path, dialect, options=None, blocksize="64MiB", threads=None):
    """A Dask bag of the parsed records of the JSON Lines file(s) at `path`.

    Compute it with a distributed `Client` active to run on its workers.
    """
    import dask.bag

    lines = dask.bag.read_text(path, blocksize=blocksize)
    return lines.map_partitions(parse_partition, dialect, options, threads=threads)


def main(argv):
    from dask.distributed import Client, LocalCluster

    path, dialect = argv[1], argv[2]
    if len(argv) > 3:
        client = Client(argv[3])
    else:
        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1"))
    with client:
        for record in parse_jsonl(path, dialect).compute():
            print(json.dumps(record, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv)
