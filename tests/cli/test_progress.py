"""The command line's words for the engine's progress events: one line each, from numbers, not from engine text."""

from model_utils.cli.progress import progress_line_text, progress_lines
from model_utils.core.progress import EVALUATION, LAYER, LOAD, TOKEN, Progress


def test_each_stage_is_one_line():
    layer = Progress(stage=LAYER, fraction=0.75, step=3, steps=30, part=2, parts=2, seconds_left=4.4,
                     detail="T = 1, re-softmaxed at each temperature on yarn (s=2), 900 tokens")
    assert progress_line_text(layer) == ("Layer 3 of 30 (pass 2 of 2, T = 1, re-softmaxed at each temperature on "
                                         "yarn (s=2), 900 tokens), about 4 s left")
    assert progress_line_text(Progress(stage=TOKEN, fraction=1.0, step=40, steps=40)) == "Token 40 of 40"
    loading = Progress(stage=LOAD, fraction=0.0, detail="Loading model bundled")
    assert progress_line_text(loading) == "Loading model bundled"
    evaluation = Progress(stage=EVALUATION, fraction=0.2, step=4, steps=12, part=1, parts=3, seconds_left=150.0,
                          detail="T = 1.2000 (3.1000 nats), best so far T = 1.1000 (3.0000)")
    assert progress_line_text(evaluation) == (
        "fold 1 of 3: evaluation 4 of at most 12, T = 1.2000 (3.1000 nats), best so far T = 1.1000 (3.0000); at "
        "most 2 min left in this fold")


def test_a_fits_evaluations_are_logged_one_line_each(capsys):
    progress_lines(Progress(stage=TOKEN, fraction=0.5, step=1, steps=2))
    assert capsys.readouterr().err == "Token 1 of 2\n"
