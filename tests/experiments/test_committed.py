"""The committed results' one reader (model_utils.experiments.committed): each kind lists the bundled model's file
first and the rest by name, reads every committed file through its record, and importing it loads no torch (the
pages read the committed results through it)."""

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from model_utils.experiments import committed
from tests.support import ROOT

KINDS = {"sweeps": committed.SWEEPS, "tunes": committed.TUNES, "fits": committed.FITS, "probes": committed.PROBES,
         "lmevals": committed.LMEVALS}


@pytest.mark.parametrize("name", KINDS)
def test_every_committed_file_of_a_kind_is_listed_once_the_bundled_models_first(name):
    files = KINDS[name]
    paths = files.paths()
    assert sorted(paths) == sorted(files.folder.glob(files.pattern)) and paths, f"no committed {name}"
    if files.first is not None:
        assert paths[0] == files.first and files.first.is_file()
        assert paths[1:] == sorted(paths[1:])


def test_the_committed_sweeps_read_through_their_record():
    sweeps = committed.SWEEPS.read()
    assert [sweep.model for sweep in sweeps][:1] == ["bundled"] and len(sweeps) == len(committed.SWEEPS.paths())
    assert committed.SWEEPS.read_first() == sweeps[0]


def test_the_first_file_leads_wherever_it_lies_and_is_not_listed_twice(tmp_path):
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text("{}")
    files = replace(committed.PROBES, folder=tmp_path, first=tmp_path / "b.json")
    assert files.paths() == [tmp_path / "b.json", tmp_path / "a.json"]
    assert replace(files, first=tmp_path / "missing.json").paths() == [tmp_path / "a.json", tmp_path / "b.json"]
    elsewhere = replace(committed.SWEEPS, folder=tmp_path)  # the committed bundled sweep, then the folder's
    assert elsewhere.paths() == [committed.SWEEPS.first, tmp_path / "a.json", tmp_path / "b.json"]


def test_a_damaged_file_raises_the_records_error(tmp_path):
    (tmp_path / "bundled.json").write_text(json.dumps({"format": 1}))
    with pytest.raises(ValueError):
        replace(committed.PROBES, folder=tmp_path, first=tmp_path / "bundled.json").read()
    with pytest.raises(ValueError, match="comes first"):
        committed.FITS.read_first()


def test_reading_the_committed_results_imports_no_torch(tmp_path):
    """A fresh interpreter: the reader and every committed file read, and neither torch, transformers nor the
    engine or the models loaded."""
    code = ("import sys\nfrom model_utils.experiments import committed\n"
            "for files in (committed.SWEEPS, committed.TUNES, committed.FITS, committed.PROBES, committed.LMEVALS):\n"
            "    files.read()\n"
            "heavy = [name for name in ('torch', 'transformers', 'model_utils.engine', 'model_utils.models')"
            " if name in sys.modules]\n"
            "print(' '.join(heavy) or 'light')\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-1:] == ["light"], f"reading the committed results imported {result.stdout}"
