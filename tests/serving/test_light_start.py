"""Start-up cost is paid only where needed: the Softmax lab (the default page) runs without importing torch, so a
server's first page is drawn in a second or two instead of the eight seconds torch and transformers take. (That no
module under components/ imports torch or the engine is the import contract's job: `lint-imports`.)"""

import subprocess
import sys

from tests.support import ROOT

# A fresh interpreter, so nothing a test imported before counts: the app's first run, on its default page.
FIRST_RUN = f"""
import sys
from streamlit.testing.v1 import AppTest

at = AppTest.from_file({str(ROOT / "app.py")!r}, default_timeout=60)
at.run()
assert not at.exception, [e.value for e in at.exception]
assert [title.value for title in at.title] == ["Softmax lab"], [title.value for title in at.title]
assert at.get("plotly_chart"), "the Softmax lab drew no chart"
heavy = sorted(name for name in ("torch", "transformers", "model_utils.engine", "model_utils.models")
               if name in sys.modules)
print(" ".join(heavy) or "light")
"""


def test_the_softmax_lab_first_run_imports_no_torch(tmp_path):
    result = subprocess.run([sys.executable, "-c", FIRST_RUN], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ATTN_MODEL": "tiny-random",
                                 "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-1:] == ["light"], f"the Softmax lab imported {result.stdout.strip()}"
