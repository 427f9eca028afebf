"""Parse a JSON Lines corpus of transcripts with Ray Data, batch by batch.

Each line is a record such as {"id": "r1", "text": "<model output>"}. Ray Data reads
the file into Arrow blocks and runs `parse_batch` on each batch (`map_batches`) in
its worker processes; each batch is parsed with `idiolect.parse_many(...,
output="json")`, so the documents come back as one Arrow string column: Arrow would
otherwise merge every document's dicts into one struct type and add null keys to
the items that lack them. `threads=1`: Ray schedules one task per CPU, so Ray, not
idiolect, owns the cores. The result has one {"id", "document"} row per record, the
document as JSON text.

    python examples/ray_transcripts.py corpus.jsonl anthropic-xml                # a local cluster
    python examples/ray_transcripts.py corpus.jsonl anthropic-xml ray://head:10001
"""

from __future__ import annotations

import json
import sys

import idiolect


def parse_batch(batch, dialect, options=None, field="text", id_field="id", threads=1):
    """Parses one batch (a `pyarrow.Table` with the `field` and `id_field` columns)
    into a table of `id` and `document` (the document's JSON text)."""
    import pyarrow as pa

    texts = batch.column(field).to_pylist()
    documents = idiolect.parse_many(dialect, texts, options, threads=threads, output="json")
    return pa.table({"id": batch.column(id_field), "document": pa.array(documents, pa.string())})


def parse_jsonl(path, dialect, options=None, batch_size=256, threads=1, field="text", id_field="id"):
    """A Ray Dataset of the parsed records of the JSON Lines file(s) at `path`."""
    import ray.data

    dataset = ray.data.read_json(path)
    return dataset.map_batches(
        parse_batch,
        fn_kwargs={
            "dialect": dialect,
            "options": options,
            "field": field,
            "id_field": id_field,
            "threads": threads,
        },
        batch_format="pyarrow",
        batch_size=batch_size,
    )


def main(argv):
    import ray

    path, dialect = argv[1], argv[2]
    ray.init(address=argv[3] if len(argv) > 3 else None)
    for row in parse_jsonl(path, dialect).iter_rows():
        print(json.dumps({"id": row["id"], "document": json.loads(row["document"])}, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv)
