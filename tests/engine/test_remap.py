"""Distance remappings in the engine (Self-Extend, ReRoPE, leaky ReRoPE, a sink + window) against an independent
reference on tiny llama, qwen2 and mistral models (and qwen2 with sliding-window layers): each layer's q and k come
from the model's own projections, q is rotated to the pair's remapped distance d'(i, j) and k to position 0 by a
float64 RoPE written here (a RoPE score depends on the difference of the two positions alone), and the weights are
an eager float64 softmax; the remapped distances are issue 36's definitions, written out again here. The engine's
loss, attention rows and maps, statistics (the effective untrained mass included) and distance profile equal the
reference's; a window as long as the text changes nothing; no remapped distance exceeds the largest the recipe
states; threads with different recipes get the serial results; and bad requests are refused in one line."""

import itertools
import json

import numpy as np
import pytest
import torch
from transformers import AttentionInterface

from model_utils import AnalysisError, analyze, attention_map
from model_utils.core.rope import Rope, parse_rope
from model_utils.core.statistics import REPORTED_STATISTICS
from model_utils.core.views import View
from tests.support.architectures import layer_windows
from tests.support.models import reference_copy
from tests.support.reference import reference_row
from tests.support.threads import run_together

TEXT = ("Grouped and clipped distances past the window: the far keys are seen nearer than they are. " * 5)[:400]
TRAINED = 128  # the trained length the requests name: shorter than the text, so the untrained masses are measured
WINDOW = 8  # the recent window of the masses
BUCKET = 128
REMAPPINGS = ["self-extend:2,64", "self-extend:4,100", "rerope:64", "leaky-rerope:64,4", "sink-window:4,64"]
TEMPERATURES = [1.0, 0.8]
REFERENCE = "remap_reference"
# The float32 engine against the float64 reference through three layers; measured over the three models, five
# recipes and two temperatures: loss 7.8e-7, per-position NLL 2.5e-5, last-row weight 4.0e-6, statistics 6.5e-7
# relative. The statistics are held as tests/engine/test_paths.py holds the plain engine's.
LOSS_ATOL, NLL_ATOL, WEIGHT_ATOL, STAT_RTOL, STAT_ATOL = 5e-6, 1e-4, 1e-5, 2e-4, 1e-5

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def remapped_distances(rope: Rope, n: int) -> tuple[np.ndarray, np.ndarray]:
    """[n, n] the distance each recipe gives query i and key j (issue 36), and which keys the query sees."""
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    d = i - j
    far = d >= rope.window
    if rope.kind == "self-extend":
        remapped = (i // rope.group + rope.window - rope.window // rope.group) - j // rope.group
    elif rope.kind == "rerope":
        remapped = np.full((n, n), rope.window)
    elif rope.kind == "leaky-rerope":
        remapped = rope.window + (d - rope.window) / rope.slope
    else:  # sink-window: a rolling cache of S sinks and W recent keys
        remapped = np.broadcast_to(rope.sinks + rope.window - 1 - j, (n, n))
    visible = d >= 0
    if rope.kind == "sink-window":
        visible &= ~far | (j < rope.sinks)
    return np.where(far, remapped, d).astype(np.float64), visible


def rotated(x: torch.Tensor, positions: torch.Tensor, theta: float) -> torch.Tensor:
    """x [..., d] (float64) rotated by RoPE to `positions` [...] (the rotate-half convention of llama, qwen2 and
    mistral: dimension k pairs with k + d / 2, frequency theta^(-2k / d))."""
    dim = x.shape[-1]
    angles = positions[..., None] * theta ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    cos, sin = torch.cat([angles.cos()] * 2, dim=-1), torch.cat([angles.sin()] * 2, dim=-1)
    return x * cos + torch.cat([-x[..., dim // 2 :], x[..., : dim // 2]], dim=-1) * sin


class ReferenceRun:
    """One reference forward pass: the recipe's distances, the logit multiplier, and the weights of every layer."""

    def __init__(self, rope: Rope | None, n: int, multipliers: np.ndarray, theta: float, windows: list[int | None]):
        distances, visible = remapped_distances(rope, n) if rope else (None, None)
        if rope is None:
            distances = np.subtract.outer(np.arange(n), np.arange(n)).astype(np.float64)
            visible = distances >= 0
        in_text = np.subtract.outer(np.arange(n), np.arange(n))
        self.distances = torch.from_numpy(distances)
        self.visible = [torch.from_numpy(visible & (in_text < (window or n))) for window in windows]  # per layer
        self.multipliers, self.theta = torch.from_numpy(np.asarray(multipliers, dtype=np.float64)), theta  # [n]
        self.hidden: dict[int, torch.Tensor] = {}
        self.weights: dict[int, np.ndarray] = {}  # layer -> [H, n, n]


def reference_attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """Eager float64 attention with q rotated to d'(i, j) and k to 0, from the layer's own projections."""
    run: ReferenceRun = kwargs["reference_run"]
    hidden = run.hidden[module.layer_idx]
    batch, n, _ = hidden.shape
    q = module.q_proj(hidden).view(batch, n, -1, module.head_dim).transpose(1, 2).double()[0]  # [H, n, d]
    k = module.k_proj(hidden).view(batch, n, -1, module.head_dim).transpose(1, 2).double()[0]  # [KV, n, d]
    groups = q.shape[0] // k.shape[0]
    k = k.repeat_interleave(groups, dim=0)
    scores = torch.stack([(rotated(q[h][:, None, :].expand(n, n, -1), run.distances, run.theta) *
                           k[h][None, :, :]).sum(-1) for h in range(q.shape[0])])  # [H, n, n]
    logits = (scores * module.scaling * run.multipliers[:, None]).masked_fill(~run.visible[module.layer_idx],
                                                                            -torch.inf)
    weights = torch.softmax(logits, dim=-1)
    run.weights[module.layer_idx] = weights.numpy()
    values = value.double()[0].repeat_interleave(groups, dim=0)  # [H, n, dv]
    output = torch.matmul(weights, values)[None].transpose(1, 2).contiguous()  # [1, n, H, dv]
    return output.to(query.dtype), None


def reference(loaded, ids: list[int], rope: Rope | None, temperature: float | np.ndarray):
    """The reference model's loss, per-position NLL [n - 1] and run (its weights) at one constant temperature, or
    at a logit multiplier per query position [n] (a schedule's)."""
    multipliers = np.full(len(ids), 1 / temperature) if np.isscalar(temperature) else temperature
    AttentionInterface.register(REFERENCE, reference_attention)
    model = reference_copy(loaded, "eager")
    model.set_attn_implementation(REFERENCE)
    run = ReferenceRun(rope, len(ids), multipliers, loaded.text_config.rope_parameters["rope_theta"],
                       layer_windows(loaded.config))

    def keep_hidden(module, args, kwargs):  # the layer's input, from which q and k are projected again
        run.hidden[module.layer_idx] = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]

    for layer in model.model.layers:
        layer.self_attn.register_forward_pre_hook(keep_hidden, with_kwargs=True)
    tensor = torch.tensor([ids])
    with torch.inference_mode():
        out = model(tensor, labels=tensor, reference_run=run)
    nll = torch.nn.functional.cross_entropy(out.logits[0, :-1].double(), tensor[0, 1:], reduction="none")
    return out.loss.item(), nll.numpy(), run


def reference_statistics(run: ReferenceRun, layer: int, head: int, q_start: int) -> dict[str, float]:
    """Means over queries q_start..n-1 of reference_row on one head's weights [n, n], with the remapped distances and
    the keys each row sees in that layer."""
    weights = run.weights[layer][head]
    n = weights.shape[0]
    rows = [reference_row(weights[q], q, WINDOW, trained_length=TRAINED,
                          distances=run.distances[q, : q + 1].numpy(), visible=int(run.visible[layer][q].sum()))
            for q in range(q_start, n)]
    means = {name: float(np.mean([row[name] for row in rows])) for name in rows[0]}
    means["top_ratio"] = float(np.exp(means.pop("gap")))
    return means


def reference_profile(run: ReferenceRun, edges: np.ndarray, bounds) -> np.ndarray:
    """[bucket, layer, bin] mass by the distance in the text, mean over heads and the bucket's queries."""
    layers = sorted(run.weights)
    n = run.weights[layers[0]].shape[-1]
    distance = np.subtract.outer(np.arange(n), np.arange(n))
    masks = [(distance >= low) & (distance < high) for low, high in itertools.pairwise(edges)]
    profile = np.empty((len(bounds), len(layers), len(masks)))
    for bucket, (start, stop) in enumerate(bounds):
        for layer in layers:
            weights = run.weights[layer][:, start:stop]
            profile[bucket, layer] = [(weights * mask[start:stop]).sum(-1).mean() for mask in masks]
    return profile


@pytest.mark.parametrize("name", ["llama", "qwen2", "mistral", "qwen2_sliding"])
@pytest.mark.parametrize("text", REMAPPINGS)
def test_the_engine_equals_an_explicit_rotation_reference(architecture_model, name, text):
    loaded = architecture_model(name)
    rope = parse_rope(text)
    report = analyze(loaded, TEXT, temperatures=TEMPERATURES, rope=rope, max_tokens=len(TEXT), window=WINDOW,
                     trained_length=TRAINED, bucket_size=BUCKET, keep_maps="all")
    assert report.kernel == "torch" and report.n_tokens == len(TEXT)
    edges = report.distance_edges
    for view, (result, temperature) in enumerate(zip(report.results, TEMPERATURES, strict=True)):
        assert result.applied_rope == rope.applied() and result.label == f"{rope.label} + T={temperature:g}"
        loss, nll, run = reference(loaded, report.token_ids, rope, temperature)
        assert result.loss == pytest.approx(loss, abs=LOSS_ATOL)
        np.testing.assert_allclose(result.position_nll, nll, atol=NLL_ATOL)
        for layer in range(report.n_layers):
            np.testing.assert_allclose(result.last_rows[layer], run.weights[layer][:, -1], atol=WEIGHT_ATOL)
            np.testing.assert_allclose(attention_map(report, layer, view, head=None), run.weights[layer].mean(0),
                                       atol=WEIGHT_ATOL)  # the map a page draws, rebuilt from the kept q and k
            for head in range(report.n_heads):
                expected = reference_statistics(run, layer, head, report.q_start)
                for statistic in REPORTED_STATISTICS:
                    assert result.heads[statistic][layer, head] == pytest.approx(
                        expected[statistic], rel=STAT_RTOL, abs=STAT_ATOL), f"{statistic} layer {layer} head {head}"
        np.testing.assert_allclose(result.distance_profile, reference_profile(run, edges, report.buckets),
                                   atol=STAT_ATOL)
    plain = analyze(loaded, TEXT, temperatures=[1.0], max_tokens=len(TEXT), window=WINDOW, trained_length=TRAINED,
                    beyond_trained=True)
    assert abs(plain.results[0].loss - report.results[0].loss) > 1e-4  # the recipe really remapped something


def test_a_report_of_several_passes_rebuilds_each_views_map_from_its_own(architecture_model):
    loaded = architecture_model("llama")
    rope = Rope("sink-window", sinks=4, window=64)
    report = analyze(loaded, TEXT, temperatures=[1.0, View(1.0, rope), View(1.0, Rope("yarn", 2))],
                     max_tokens=len(TEXT), trained_length=TRAINED, keep_maps=[(2, 1)])
    alone = {None: analyze(loaded, TEXT, temperatures=[1.0], max_tokens=len(TEXT), trained_length=TRAINED,
                           beyond_trained=True, keep_maps=[(2, 1)]),
             "yarn": analyze(loaded, TEXT, temperatures=[1.0], rope=Rope("yarn", 2), max_tokens=len(TEXT),
                             trained_length=TRAINED, keep_maps=[(2, 1)])}
    np.testing.assert_allclose(attention_map(report, 2, 0, head=1), attention_map(alone[None], 2, 0, head=1),
                               atol=1e-6)
    np.testing.assert_allclose(attention_map(report, 2, 2, head=1), attention_map(alone["yarn"], 2, 0, head=1),
                               atol=1e-6)
    _, _, run = reference(loaded, report.token_ids, rope, 1.0)
    remapped = attention_map(report, 2, 1, head=1)
    np.testing.assert_allclose(remapped, run.weights[2][1], atol=WEIGHT_ATOL)
    assert remapped[-1, 5:300].max() == 0.0  # keys past the sinks and outside the window: no weight


def test_a_schedule_on_a_remapping_equals_the_reference(architecture_model):
    """A published schedule's logit multiplier per query position goes on top of a remapping as on the model's own
    positions: both blocks carry it."""
    from model_utils.core.schedules import Schedule

    loaded = architecture_model("qwen2")
    rope = Rope("leaky-rerope", window=48, slope=8.0)
    report = analyze(loaded, TEXT, temperatures=[Schedule("qwen-logn", 64.0)], rope=rope, max_tokens=len(TEXT),
                     window=WINDOW, trained_length=TRAINED)
    assert report.multipliers[0].max() > 1.2  # the schedule sharpens the far queries
    loss, nll, run = reference(loaded, report.token_ids, rope, report.multipliers[0].astype(np.float64))
    result = report.results[0]
    assert result.label == "leaky-rerope (W=48, K=8) + qwen-logn (train_length=64)"
    assert result.loss == pytest.approx(loss, abs=LOSS_ATOL)
    np.testing.assert_allclose(result.position_nll, nll, atol=NLL_ATOL)
    for layer in range(report.n_layers):
        np.testing.assert_allclose(result.last_rows[layer], run.weights[layer][:, -1], atol=WEIGHT_ATOL)


def test_the_reference_is_the_models_own_attention_without_a_recipe(architecture_model):
    """The reference's rotation is the model's: with no remapping it gives the engine's plain loss."""
    loaded = architecture_model("qwen2")
    plain = analyze(loaded, TEXT, temperatures=[1.0], max_tokens=len(TEXT), beyond_trained=True)
    loss, nll, _ = reference(loaded, plain.token_ids, None, 1.0)
    assert plain.results[0].loss == pytest.approx(loss, abs=LOSS_ATOL)
    np.testing.assert_allclose(plain.results[0].position_nll, nll, atol=NLL_ATOL)


@pytest.mark.parametrize("text", ["self-extend:2,{n}", "rerope:{n}", "leaky-rerope:{n},4", "sink-window:4,{n}"])
def test_a_window_as_long_as_the_text_changes_nothing(architecture_model, text):
    loaded = architecture_model("mistral")
    short = TEXT[:200]
    rope = parse_rope(text.format(n=len(short)))  # W = n: every distance (at most n - 1) stays as it is
    request = {"temperatures": [1.0, 0.8], "max_tokens": len(short), "window": WINDOW, "bucket_size": 64,
               "trained_length": 256}
    remapped = analyze(loaded, short, rope=rope, **request)
    plain = analyze(loaded, short, **request)
    assert remapped.kernel == "torch"
    for a, b in zip(remapped.results, plain.results, strict=True):
        assert a.loss == pytest.approx(b.loss, abs=1e-5)
        np.testing.assert_allclose(a.position_nll, b.position_nll, atol=1e-4)
        np.testing.assert_allclose(a.last_rows, b.last_rows, atol=1e-5)
        np.testing.assert_allclose(a.distance_profile, b.distance_profile, atol=1e-5)
        for statistic in REPORTED_STATISTICS:
            np.testing.assert_allclose(a.heads[statistic], b.heads[statistic], rtol=1e-4, atol=1e-5,
                                       err_msg=statistic)


@pytest.mark.parametrize("text", REMAPPINGS)
def test_no_remapped_distance_exceeds_the_stated_maximum(architecture_model, text):
    """With the trained length just past the recipe's largest distance, no key is at an untrained remapped distance,
    while the text's own distances reach far past it; with the trained length at W, the far keys are."""
    loaded = architecture_model("llama")
    rope = parse_rope(text)
    largest = rope.max_distance(len(TEXT))
    assert largest < len(TEXT) - 1
    request = {"temperatures": [1.0], "rope": rope, "max_tokens": len(TEXT), "window": WINDOW, "bucket_size": 100}
    beyond = analyze(loaded, TEXT, trained_length=int(largest) + 1, **request).results[0]
    assert np.all(beyond.heads["effective_untrained_mass"] == 0.0)
    assert np.all(beyond.bucket_heads["effective_untrained_mass"] == 0.0)
    assert beyond.heads["untrained_mass"].min() > 0.0
    at_window = analyze(loaded, TEXT, trained_length=rope.window, **request).results[0]
    assert at_window.heads["effective_untrained_mass"].min() > 0.0


def test_isolated_mode_runs_the_remapping_at_t1_and_re_softmaxes_it(architecture_model):
    loaded = architecture_model("qwen2")
    views = [1.0, 2.0]
    request = {"rope": Rope("self-extend", group=2, window=64), "max_tokens": len(TEXT), "window": WINDOW,
               "trained_length": TRAINED}
    isolated = analyze(loaded, TEXT, temperatures=views, mode="isolated", **request)
    in_model = analyze(loaded, TEXT, temperatures=views, **request)
    assert isolated.results[1].loss == pytest.approx(in_model.results[0].loss, abs=1e-6)
    for view in range(2):  # layer 0 sees the same inputs in both modes
        for statistic in REPORTED_STATISTICS:
            np.testing.assert_allclose(isolated.results[view].heads[statistic][0],
                                       in_model.results[view].heads[statistic][0], rtol=1e-4, atol=1e-5)


def test_eight_threads_with_different_recipes_get_the_serial_results(architecture_model):
    loaded = architecture_model("llama")
    recipes = [None, Rope("yarn", 2), *(parse_rope(text) for text in REMAPPINGS), Rope("sink-window", sinks=1,
                                                                                         window=32)]
    assert len(recipes) == 8

    def run(rope):
        return analyze(loaded, TEXT, temperatures=[1.0, 1.5], rope=rope, max_tokens=len(TEXT), window=WINDOW,
                       trained_length=TRAINED, beyond_trained=True)

    serial = [run(rope) for rope in recipes]
    threaded = run_together(run, recipes)
    for alone, together in zip(serial, threaded, strict=True):
        assert alone.kernel == together.kernel
        for a, b in zip(alone.results, together.results, strict=True):
            assert a.label == b.label and a.rope == b.rope
            np.testing.assert_array_equal(a.position_nll, b.position_nll)
            for statistic in REPORTED_STATISTICS:
                np.testing.assert_array_equal(a.heads[statistic], b.heads[statistic])
    assert len({round(report.results[0].loss, 8) for report in serial}) == len(recipes)  # all different


@pytest.mark.parametrize(("rope", "message"), [
    (Rope("self-extend", group=2, window=200), "W = 200 is longer than the trained length 128"),
    (Rope("sink-window", sinks=4, window=129), "W = 129 is longer than the trained length 128"),
])
def test_a_window_past_the_trained_length_is_refused(architecture_model, rope, message):
    with pytest.raises(AnalysisError, match=message):
        analyze(architecture_model("llama"), TEXT, temperatures=[1.0], rope=rope, trained_length=TRAINED)


def test_models_that_cannot_take_a_remapping_are_refused(architecture_model):
    rope = Rope("rerope", window=16)
    with pytest.raises(AnalysisError, match="learns its positions as a table"):
        analyze(architecture_model("gpt2"), TEXT[:200], temperatures=[1.0], rope=rope)
    with pytest.raises(AnalysisError, match="RoPE per layer type"):
        analyze(architecture_model("gemma3_text"), TEXT[:200], temperatures=[1.0], rope=rope)


def test_the_command_line_runs_a_remapping_on_the_tiny_model(capsys):
    from model_utils.__main__ import main

    status = main(["analyze", "--model", "tiny-random", "--text", TEXT, "--rope", "self-extend:2,16@1",
                   "--rope", "sink-window:4,32", "--temperatures", "1", "0.8", "--json", "-"])
    assert status == 0
    document = json.loads(capsys.readouterr().out)
    assert document["kernel"] == "torch"  # the passes with a remapping ran the torch path
    by_label = {result["label"]: result for result in document["results"]}
    assert set(by_label) == {"T=1", "T=0.8", "self-extend (G=2, W=16) + T=1", "sink-window (S=4, W=32) + T=1",
                             "sink-window (S=4, W=32) + T=0.8"}
    assert by_label["self-extend (G=2, W=16) + T=1"]["rope"] == {"recipe": "self-extend", "group": 2, "window": 16,
                                                                 "attention_factor": 1.0}
    assert Rope.from_dict(by_label["sink-window (S=4, W=32) + T=0.8"]["rope"]) == Rope("sink-window", sinks=4,
                                                                                      window=32)
    assert "effective_untrained_mass" in by_label["T=1"]["heads"][0][0]
    assert by_label["self-extend (G=2, W=16) + T=1"]["loss"] != pytest.approx(by_label["T=1"]["loss"], abs=1e-4)


@pytest.mark.parametrize(("arguments", "message"), [
    (["--rope", "self-extend:0,1024"], "G must be a whole number >= 1"),
    (["--rope", "self-extend:2,1.5"], "W '1.5' is not a whole number"),
    (["--rope", "rerope:0"], "W must be a whole number >= 1"),
    (["--rope", "self-stretch:2,16"], "unknown RoPE recipe 'self-stretch'"),
    (["--rope", "self-extend:2,4096"], "W = 4,096 is longer than the trained length 1,024"),
    (["--model", "gpt2", "--rope", "rerope:16"], "learns its positions as a table"),
])
def test_a_bad_remapping_on_the_command_line_is_one_line_and_exit_2(architecture_folder, capsys, arguments,
                                                                     message):
    from model_utils.__main__ import main

    model = ["--model", "tiny-random"] if "--model" not in arguments else []
    arguments = [str(architecture_folder("gpt2")) if part == "gpt2" else part for part in arguments]
    status = main(["analyze", *model, "--text", TEXT[:100], *arguments])
    error = capsys.readouterr().err
    assert status == 2 and message in error and error.count("\n") == 1, error



def test_a_sweep_with_a_remapping_records_and_reads_it(tmp_path):
    """The sweep's document names each pass's recipe and path, reads back as it was written, and its verdict is
    made (the tiny model's trained length is 1,024)."""
    from model_utils.__main__ import main
    from model_utils.core.records.sweep import SweepDocument

    path = tmp_path / "sweep.json"
    status = main(["sweep", "--model", "tiny-random", "--builtin", "long", "--max-tokens", "1280", "--beyond-trained",
                   "--bucket-size", "256", "--temperatures", "1", "--rope", "rerope:256@1", "--json", str(path),
                   "--cache-dir", str(tmp_path / "passes")])
    assert status == 0
    document = SweepDocument.from_dict(json.loads(path.read_text()))
    assert SweepDocument.from_dict(document.to_dict()) == document
    plain, remapped = document.results
    assert remapped.rope == Rope("rerope", window=256) and remapped.label == "rerope (W=256) + T=1"
    assert (plain.kernel, remapped.kernel, document.kernel) == ("fused", "torch", "torch")
    assert remapped.loss != pytest.approx(plain.loss, abs=1e-4)
    assert document.verdict is not None
    # past the trained length attention still reaches back 1,024 tokens, but never to an untrained distance (W = 256)
    past = [i for i, (start, _) in enumerate(document.buckets) if start >= document.trained_length]
    assert remapped.heads["untrained_mass"][past].min() > 0.0
    assert np.all(remapped.heads["effective_untrained_mass"] == 0.0)
    np.testing.assert_array_equal(plain.heads["effective_untrained_mass"], plain.heads["untrained_mass"])


@pytest.mark.parametrize("text", REMAPPINGS)
@pytest.mark.parametrize("sliding", [None, 80])
def test_chunks_of_a_few_queries_give_the_whole_blocks_scores(text, sliding):
    """Long texts are scored a few queries at a time, the near block only against the keys within W of a chunk's
    queries: small chunks give the statistics and the output of one chunk holding every query, which equal the
    plain two-block definition (each pair's logit from the far q and k at distance >= W)."""
    from model_utils.core.statistics import distance_bins, untrained_bin
    from model_utils.engine.remap import LayerRemap, Layout
    from model_utils.engine.torch_path import remapped_attention, remapped_logits, torch_row_statistics

    rope, n = parse_rope(text), 300
    generator = torch.Generator().manual_seed(3)
    query, far_query = (torch.randn(2, 4, n, 16, generator=generator) for _ in range(2))
    key, far_key, value = (torch.randn(2, 2, n, 16, generator=generator) for _ in range(3))
    remap = LayerRemap(layout=Layout.of(rope, n, TRAINED), query=far_query, key=far_key)
    multipliers = torch.stack([torch.full((n,), 1.0), torch.linspace(0.5, 2.0, n)])
    edges = torch.from_numpy(distance_bins(n, TRAINED))
    settings = {"q_start": 5, "window": WINDOW, "edges": edges, "untrained_bin": untrained_bin(edges.numpy(), TRAINED),
                "sliding": sliding}
    whole = remapped_attention(query, key, value, 0.25, multipliers, remap=remap, chunk_elements=1 << 30, **settings)
    for chunk in (2 * 4 * n * 7, 2 * 4 * n * 64):  # 7 and 64 queries per chunk
        output, rows = remapped_attention(query, key, value, 0.25, multipliers, remap=remap, chunk_elements=chunk,
                                          **settings)
        torch.testing.assert_close(output, whole[0], atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(rows, whole[1], atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(torch_row_statistics(query, key, 0.25, multipliers, remap=remap,
                                                        chunk_elements=chunk, **settings), whole[1], atol=1e-6,
                                   rtol=1e-5)
    d = torch.arange(n)[:, None] - torch.arange(n)[None, :]

    def scores(q, k):  # [V, H, n, n]: query head h reads key head h // 2
        return ((q * multipliers[:, None, :, None] * 0.25).unflatten(1, (2, 2)) @ k[:, :, None].mT).flatten(1, 2)

    expected = torch.where(d >= rope.window, scores(far_query, far_key), scores(query, key))
    hidden = (d < 0) | ((d >= sliding) if sliding else False)
    if rope.hides is not None:
        hidden |= (d >= rope.window) & (torch.arange(n)[None, :] >= rope.hides)
    got = remapped_logits(query, key, 0.25, multipliers, 40, 47, sliding, None, remap)
    visible = ~hidden[40:47, :47]
    torch.testing.assert_close(got[..., visible], expected[:, :, 40:47, :47][..., visible], atol=1e-5, rtol=1e-5)
    assert (got[..., ~visible] == torch.finfo(got.dtype).min).all()


def test_a_rotation_that_does_not_compose_or_is_missing_is_refused(architecture_model, monkeypatch):
    """The far block turns q and k the model already rotated; a rotation function for which that is not the same
    as rotating once (here one that only scales), or none at all, is refused by name before any pass."""
    import sys

    from model_utils.engine import remap

    loaded = architecture_model("llama")
    rope = Rope("rerope", window=16)
    monkeypatch.setattr(remap, "model_rotation", lambda loaded: lambda q, k, cos, sin: (q * cos, k * cos))
    with pytest.raises(AnalysisError, match="does not compose as rotations do"):
        analyze(loaded, TEXT, temperatures=[1.0], rope=rope, trained_length=TRAINED)
    monkeypatch.undo()
    monkeypatch.delattr(sys.modules[type(loaded.model).__module__], "apply_rotary_pos_emb")
    with pytest.raises(AnalysisError, match="has no apply_rotary_pos_emb in its modeling code"):
        analyze(loaded, TEXT, temperatures=[1.0], rope=rope, trained_length=TRAINED)


@pytest.mark.parametrize("recipe", REMAPPINGS)
def test_the_effective_distances_of_one_query_are_the_issues(recipe):
    """engine.remap.effective_distances (what the Length schedules page draws) gives the last query's row of the
    reference's distances, by distance in the text, NaN where the key gets no weight."""
    from model_utils import effective_distances

    rope, n = parse_rope(recipe), 300
    distances, visible = remapped_distances(rope, n)
    expected = np.where(visible[-1], distances[-1], np.nan)[::-1]  # index d: the key d tokens back
    np.testing.assert_array_equal(effective_distances(rope, n), expected)
    assert np.nanmax(expected) == rope.max_distance(n)
