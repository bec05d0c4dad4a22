"""bench.tune_summary on a tiny model's tune: the summary rebuilt from the rows and the references it stores is the
one the tune wrote, and rows of the format before are upgraded on the way; nothing is computed."""

import json

import pyarrow.parquet as pq

from bench.tune_summary import rebuild
from model_utils.__main__ import main
from model_utils.core.records.tune import TuneSummary
from model_utils.experiments.tune.rows import ROWS


def test_a_rebuilt_summary_is_the_tunes_own(tmp_path, capsys):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("first document " * 60)
    (folder / "b.txt").write_text("second one " * 60)
    out = tmp_path / "out"
    assert main(["tune", "--model", "tiny-random", "--corpus", str(folder), "--max-tokens", "200", "--bucket-size",
                 "64", "--temperatures", "1", "1.5", "--out", str(out)]) == 0
    written = (out / "summary.json").read_text()
    first = sorted((out / ROWS).glob("*.parquet"))[0]
    table = pq.read_table(first)
    older = json.loads(table.schema.metadata[b"tune_settings"]) | {"format": 4}
    pq.write_table(table.drop_columns(["untrained_mass_by_layer", "sink_mass_by_layer"]).replace_schema_metadata(
        table.schema.metadata | {b"tune_settings": json.dumps(older).encode()}), first)
    rebuilt = rebuild(out)
    assert rebuilt == TuneSummary.from_dict(json.loads(written))
    assert json.loads(pq.read_schema(first).metadata[b"tune_settings"])["format"] == 5
