"""The engine as a model for lm-evaluation-harness: `ExplorerLM`, registered with lm-eval as "explorer", runs any of
its tasks with a temperature, a schedule or a RoPE recipe inside attention (its model arguments: model, temperature,
schedule, rope, device, max_length, trained_length). A scored request is one analysis pass (engine.analyze_tokens:
each position's next-token NLL at the view); a generated one is the engine's cached greedy loop
(engine.generate.greedy_tokens), stopped at the task's stop strings or the end-of-text token. So T = 1 with no recipe
is the model as transformers runs it. `run_ruler` runs RULER's synthetic tasks at chosen lengths, one lm-eval
evaluation per view, length and task, offline: their haystacks are sized with the model's own tokenizer, saved to a
folder, and nothing is fetched from a hub (docs/LMEVAL.md)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from lm_eval.api.model import TemplateLM
from lm_eval.api.registry import register_model
from lm_eval.models.utils import handle_stop_sequences, normalize_gen_kwargs, postprocess_generated_text
from lm_eval.utils import get_rolling_token_windows, make_disjoint_window
from tqdm import tqdm

from model_utils.core.errors import AnalysisError
from model_utils.core.files import write_atomic
from model_utils.core.limits import MAX_TOKENS, check_int
from model_utils.core.lmeval import MIN_LENGTH, MODEL_NAME, OFFLINE_TASKS, wilson_interval
from model_utils.core.records.lmeval import FORMAT, LmEvalDocument, LmEvalSample, LmEvalScore, PromptTokenizer
from model_utils.core.rope import Rope, parse_rope
from model_utils.core.schedules import PositionSchedule, parse_schedule
from model_utils.core.softmax import check_temperature
from model_utils.core.views import View
from model_utils.engine.analyze import AnalysisRequest, analyze_tokens, validate
from model_utils.engine.generate import check_generation_recipe, greedy_tokens
from model_utils.engine.plugin import load_model
from model_utils.experiments.fingerprint import model_fingerprint
from model_utils.models import LoadedModel

MODEL_ARGUMENTS = ("model", "temperature", "schedule", "rope", "device", "max_length", "trained_length", "cache_dir")
# lm-eval hands every model these; the explorer runs one request at a time, so they change nothing here
IGNORED_ARGUMENTS = ("batch_size", "max_batch_size")
DEFAULT_MAX_GEN_TOKS = 256  # lm-eval's own default, for a task that names none
# Every process that imports datasets after these are set stays off the hub; `make lmeval` sets them before Python.
OFFLINE_ENVIRONMENT = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
CACHE_FORMAT = 2  # of a cached generation: bump when one would come out different (2: keyed by the whole view)
COMPLETE_NUMBER = re.compile(r"\d+(?=\D)")  # a run of digits that something other than a digit has ended


@dataclass(frozen=True)
class NumbersAsked:
    """What a numbers-only answer asks for: how many numbers, of at least how many digits (RULER's niah_single_1:
    one number of 7 digits). The task's shape, not its answer: generation may stop once the text holds that many
    complete numbers that long, since the task's score is whether each answer is in the text."""

    count: int
    digits: int

    def complete(self, text: str) -> bool:
        return sum(len(found) >= self.digits for found in COMPLETE_NUMBER.findall(text)) >= self.count


def numbers_asked(doc: dict) -> NumbersAsked | None:
    """The NumbersAsked of a sample whose every answer is a number, else None."""
    outputs = doc.get("outputs") if isinstance(doc, dict) else None
    if not outputs or not all(isinstance(value, str) and value.isdigit() for value in outputs):
        return None
    return NumbersAsked(count=len(outputs), digits=min(len(value) for value in outputs))


def model_view(temperature=None, schedule=None, rope=None, *, trained_length: int, max_length: int) -> View:
    """A view from lm-eval model arguments: a temperature or a schedule (NAME[:PARAM] as --schedule writes it, one
    schedule; 'trained' anchors it at the trained length, YaRN's scale at max_length / trained length), on a RoPE
    recipe (TYPE:S as --rope writes it) or none; AnalysisError naming the fix."""
    if temperature is not None and schedule is not None:
        raise AnalysisError("give the explorer a temperature or a schedule, not both (a view is one of them)")
    try:
        spec = (_schedule(schedule, trained_length, max_length) if schedule is not None
                else check_temperature(1.0 if temperature is None else temperature))
        recipe = rope if rope is None or isinstance(rope, Rope) else parse_rope(str(rope))
    except ValueError as error:
        raise AnalysisError(str(error)) from None
    return View(spec, recipe)


def _schedule(value, trained_length: int, max_length: int) -> PositionSchedule:
    if isinstance(value, PositionSchedule):
        return value
    found = parse_schedule(str(value)).resolve(trained_length, max_length)
    if len(found) != 1:
        raise AnalysisError(f"schedule={value} names {len(found)} schedules; the explorer runs one view per model "
                            "(schedule=qwen-logn:trained, for example)")
    return found[0]


@register_model(MODEL_NAME)
class ExplorerLM(TemplateLM):
    """An lm-eval model whose attention runs at one view of the explorer (the module docstring). `model` is a name
    load_model takes or an already loaded model; max_length is the most tokens one request may hold (default the
    trained length, which trained_length sets where it is not the model's max_position_embeddings)."""

    def __init__(self, model: str | LoadedModel = "bundled", temperature=None, schedule=None, rope=None,
                 device: str | None = None, max_length: int | None = None, trained_length: int | None = None,
                 cache_dir: str | Path | None = None, **others) -> None:
        super().__init__()
        unknown = sorted(set(others) - set(IGNORED_ARGUMENTS))
        if unknown:
            raise AnalysisError(f"unknown model argument(s) {', '.join(unknown)} for the explorer; it takes "
                                f"{', '.join(MODEL_ARGUMENTS)}")
        self.loaded = model if isinstance(model, LoadedModel) else load_model(str(model), device=device)
        self.tokenizer = self.loaded.tokenizer
        self.trained_length = (self.loaded.max_positions if trained_length is None
                               else check_int("trained_length", trained_length, 2))
        self._max_length = (self.trained_length if max_length is None
                            else check_int("max_length", max_length, 2, MAX_TOKENS))
        self.view = model_view(temperature, schedule, rope, trained_length=self.trained_length,
                               max_length=self._max_length)
        validate(self.loaded, self._request(2))  # the engine's own checks of the view, before any request
        self.generations: list[GenerationLog] = []
        self.cache = None if cache_dir is None else GenerationCache(Path(cache_dir), self)

    @property
    def max_length(self) -> int:
        return self._max_length

    @property
    def eot_token_id(self) -> int:
        return self.tokenizer.eos_token_id

    @property
    def prefix_token_id(self) -> int:
        """What an empty context is: the beginning-of-text token where the tokenizer has one, else end-of-text."""
        bos = self.tokenizer.bos_token_id
        return self.eot_token_id if bos is None else bos

    @property
    def tokenizer_name(self) -> str:
        return self.loaded.name

    def tok_encode(self, string: str, add_special_tokens: bool | None = None, **kwargs) -> list[int]:
        """Token ids as the engine tokenizes (the tokenizer's special tokens), without a second beginning token
        where the string starts with one."""
        if add_special_tokens is None:
            bos = self.tokenizer.bos_token
            add_special_tokens = not (bos and string.startswith(bos))
        return self.tokenizer(string, add_special_tokens=add_special_tokens)["input_ids"]

    def _request(self, n_tokens: int) -> AnalysisRequest:
        # past the trained length only where a recipe allows it (implied) or max_length asks for it
        return AnalysisRequest(temperatures=[self.view], max_tokens=max(2, n_tokens),
                               trained_length=self.trained_length, beyond_trained=self.max_length > self.trained_length)

    def _loglikelihood_tokens(self, requests, disable_tqdm: bool = False, **kwargs) -> list[tuple[float, bool]]:
        """(log-probability of the continuation, whether greedy decoding writes it) per request: one pass over the
        last max_length tokens of context + continuation (the continuation's last token is read but predicts
        nothing, so a request scores with one token of context less than max_length + 1 allows)."""
        results = []
        for (context, continuation), context_ids, continuation_ids in tqdm(requests, disable=disable_tqdm,
                                                                           desc="explorer: scoring"):
            ids = (context_ids + continuation_ids)[-self.max_length :]
            if len(continuation_ids) >= len(ids):
                raise AnalysisError(f"a continuation of {len(continuation_ids):,} tokens leaves no context within "
                                    f"max_length={self.max_length:,}; raise max_length")
            result = analyze_tokens(self.loaded, ids, self._request(len(ids))).results[0]
            scored = slice(len(ids) - 1 - len(continuation_ids), None)  # position p predicts token p + 1
            answer = (-float(result.position_nll[scored].sum()), bool(result.position_greedy[scored].all()))
            if context is not None:
                self.cache_hook.add_partial("loglikelihood", (context, continuation), answer)
            results.append(answer)
        return results

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False) -> list[float]:
        """Each text's log-probability after the prefix token, in lm-eval's disjoint windows of max_length tokens
        (every token predicted once, each window with as much context as fits)."""
        totals = []
        for (text,) in tqdm([request.args for request in requests], disable=disable_tqdm, desc="explorer: rolling"):
            windows = map(make_disjoint_window, get_rolling_token_windows(
                token_list=self.tok_encode(text, add_special_tokens=False), prefix_token=self.prefix_token_id,
                max_seq_len=self.max_length - 1, context_len=1))
            scored = self._loglikelihood_tokens([((None, None), context, continuation)
                                                 for context, continuation in windows], disable_tqdm=True)
            total = sum(logprob for logprob, _ in scored)
            self.cache_hook.add_partial("loglikelihood_rolling", (text,), total)
            totals.append(total)
        return totals

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        """Greedy text after each context, at the view inside every layer, up to the request's max_gen_toks and
        cut at its first stop string (`until`), the end-of-text token, or once it holds as many complete numbers as
        a numbers-only answer has (numbers_asked). Sampling is refused: the explorer's temperature is inside
        attention, not a sampling temperature. With a cache folder, a generation done before is read back."""
        answers = []
        for request in tqdm(requests, disable=disable_tqdm, desc="explorer: generating"):
            context, settings = request.args
            numbers = numbers_asked(request.doc)
            found = None if self.cache is None else self.cache.read(context, settings, numbers)
            if found is None:
                started = time.perf_counter()
                ids, cut, tokens, text = self._generate(context, settings, numbers)
                found = Generation(text=text, prompt_tokens=len(ids), cut_tokens=cut, new_tokens=len(tokens),
                                   seconds=round(time.perf_counter() - started, 2))
                if self.cache is not None:
                    self.cache.write(context, settings, numbers, found)
            self.generations.append(GenerationLog(doc_id=request.doc_id, prompt_tokens=found.prompt_tokens,
                                                  cut_tokens=found.cut_tokens, new_tokens=found.new_tokens,
                                                  seconds=found.seconds))
            self.cache_hook.add_partial("generate_until", (context, settings), found.text)
            answers.append(found.text)
        return answers

    def _generate(self, context: str, settings: dict,
                  numbers: NumbersAsked | None = None) -> tuple[list[int], int, list[int], str]:
        """(the prompt's ids as read, how many were cut from its start, the new tokens, the answer's text)"""
        kwargs = normalize_gen_kwargs(settings, DEFAULT_MAX_GEN_TOKS)
        if kwargs.get("do_sample"):
            raise AnalysisError("the explorer generates greedily (its temperature is inside attention, not a "
                                "sampling temperature); run the task with do_sample=False")
        until = handle_stop_sequences(kwargs.pop("until", None), eos=None)
        new_tokens = check_int("max_gen_toks", kwargs.pop("max_gen_toks"), 1, self.max_length - 1)
        whole = self.tok_encode(context) or [self.prefix_token_id]  # an empty context starts from the prefix token
        ids = whole[-(self.max_length - new_tokens) :]
        eos = self.eot_token_id

        def stop(tokens: list[int]) -> bool:
            if tokens[-1] == eos:
                return True
            text = self.tokenizer.decode(tokens)
            return any(term and term in text for term in until) or (numbers is not None and numbers.complete(text))

        _, generated = greedy_tokens(self.loaded, ids, [self.view], new_tokens, trained_length=self.trained_length,
                                     stop=stop)
        tokens = generated[0]
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        return ids, len(whole) - len(ids), tokens, postprocess_generated_text(text, until, None)


@dataclass(frozen=True, kw_only=True)
class Generation:
    """One generation as the cache keeps it: the answer's text, the tokens in and out, and what it cost."""

    text: str
    prompt_tokens: int
    cut_tokens: int
    new_tokens: int
    seconds: float


class GenerationCache:
    """Finished generations in a folder, one JSON file each, named by what it computes (the model, the view, the
    lengths, the prompt, the settings and the stop rule), so that a stopped run resumes and computes none twice."""

    def __init__(self, folder: Path, model: ExplorerLM):
        self.folder = folder
        self.base = json.dumps({"format": CACHE_FORMAT, "model": model_fingerprint(model.loaded, portable=True),
                                "view": model.view.canonical(), "max_length": model.max_length,
                                "trained_length": model.trained_length}, sort_keys=True)

    def path(self, context: str, settings: dict, numbers: NumbersAsked | None) -> Path:
        asked = json.dumps({"context": context, "settings": settings,
                            "numbers": None if numbers is None else asdict(numbers)}, sort_keys=True, default=str)
        return self.folder / f"{hashlib.sha256((self.base + asked).encode()).hexdigest()[:24]}.json"

    def read(self, context: str, settings: dict, numbers: NumbersAsked | None) -> Generation | None:
        path = self.path(context, settings, numbers)
        return Generation(**json.loads(path.read_text())) if path.is_file() else None

    def write(self, context: str, settings: dict, numbers: NumbersAsked | None, found: Generation) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path(context, settings, numbers), json.dumps(asdict(found)))


@dataclass(frozen=True, kw_only=True)
class GenerationLog:
    """One generated request: its document, the tokens in and out, and its seconds."""

    doc_id: int
    prompt_tokens: int
    cut_tokens: int
    new_tokens: int
    seconds: float


@dataclass(frozen=True, kw_only=True)
class RulerRequest:
    """RULER tasks at `lengths` (tokens of the model's tokenizer, the RULER prompt plus room for 128 new ones), the
    first `limit` samples of each, under each view."""

    tasks: tuple[str, ...]
    lengths: tuple[int, ...]
    limit: int
    views: tuple[View, ...]
    trained_length: int
    beyond_trained: bool = False  # a length past the trained length on the model's own positions
    cache_dir: Path | None = None  # finished generations, so that a stopped run resumes


def check_counts(tasks: tuple[str, ...], lengths: tuple[int, ...], limit: int) -> None:
    """The tasks, lengths and limit, which need no model; AnalysisError naming the fix."""
    unknown = [task for task in tasks if task not in OFFLINE_TASKS]
    if unknown or not tasks:
        raise AnalysisError(f"task(s) {', '.join(unknown) or 'none'}: the explorer runs RULER's "
                            f"{', '.join(OFFLINE_TASKS)} offline (the others download their haystacks)")
    check_int("limit", limit, 1)
    if not lengths:
        raise AnalysisError("give at least one length, e.g. 2048")
    for length in lengths:
        check_int("length", length, MIN_LENGTH, MAX_TOKENS)


def check_ruler(loaded: LoadedModel, request: RulerRequest) -> None:
    """Every refusal before any work, AnalysisError naming the fix."""
    check_counts(request.tasks, request.lengths, request.limit)
    if not request.views:
        raise AnalysisError("give at least one view (a temperature, a schedule or a recipe)")
    for view in request.views:
        past = max(request.lengths) > request.trained_length
        if past and view.rope is None and not request.beyond_trained:
            raise AnalysisError(f"length {max(request.lengths):,} is past the trained length of "
                                f"{request.trained_length:,} for {view.label} (the model's own positions); ask for "
                                "lengths within it, a RoPE recipe, or allow it (--beyond-trained)")
        check_generation_recipe(loaded, view.rope)  # RULER's tasks generate
        ExplorerLM(model=loaded, temperature=view.temperature, schedule=view.schedule, rope=view.rope,
                   max_length=max(max(request.lengths), request.trained_length), trained_length=request.trained_length)


def run_ruler(loaded: LoadedModel, request: RulerRequest,
              on_score: Callable[[LmEvalScore, int, int], None] | None = None) -> LmEvalDocument:
    """Each task at each length under each view (check_ruler first): one lm-eval evaluation of the first `limit`
    samples, their haystacks sized with the model's own tokenizer saved to a temporary folder, so nothing is
    fetched. on_score(score, done, total) after each."""
    import lm_eval

    check_ruler(loaded, request)
    for name, value in OFFLINE_ENVIRONMENT.items():  # for datasets, imported below this line the first time
        os.environ.setdefault(name, value)
    # the shortest length first under every view, so that a run cut short has whole lengths
    units = [(view, length, task) for length in request.lengths for view in request.views for task in request.tasks]
    scores = []
    with tempfile.TemporaryDirectory(prefix="explorer-tokenizer-") as folder:
        loaded.tokenizer.save_pretrained(folder)
        for view, length, task in units:
            scores.append(ruler_score(loaded, view, length, task, request, folder))
            if on_score is not None:
                on_score(scores[-1], len(scores), len(units))
    return LmEvalDocument(
        format=FORMAT, model=loaded.name, trained_length=request.trained_length, tasks=request.tasks,
        lengths=request.lengths, limit=request.limit, views=tuple(request.views),
        scores=tuple(scores), lm_eval_version=lm_eval.__version__,
        tokenizer=PromptTokenizer.MODEL, run=None)


def ruler_score(loaded: LoadedModel, view: View, length: int, task: str, request: RulerRequest,
                tokenizer_folder: str) -> LmEvalScore:
    """One task at one length under one view: lm-eval's evaluation of its first `limit` samples."""
    from lm_eval import simple_evaluate

    model = ExplorerLM(model=loaded, temperature=view.temperature, schedule=view.schedule, rope=view.rope,
                       max_length=max(length, request.trained_length), trained_length=request.trained_length,
                       cache_dir=request.cache_dir)
    started = time.perf_counter()
    results = simple_evaluate(model=model, tasks=[task], limit=request.limit, log_samples=True, bootstrap_iters=0,
                              metadata={"max_seq_lengths": [length], "tokenizer": tokenizer_folder})
    seconds = time.perf_counter() - started
    logs = {log.doc_id: log for log in model.generations}
    samples = tuple(ruler_sample(sample, length, logs[sample["doc_id"]]) for sample in results["samples"][task])
    right = sum(sample.score for sample in samples)
    return LmEvalScore(task=task, length=length, view=view, score=right / len(samples),
                       interval=wilson_interval(right, len(samples)), samples=samples, seconds=round(seconds, 1))


def ruler_sample(sample: dict, length: int, log: GenerationLog) -> LmEvalSample:
    """A logged lm-eval sample of a RULER task as a record: the task's own score for it (the share of the needle
    values its response holds: RULER's string_match_all), under the metric named by the length."""
    return LmEvalSample(doc_id=sample["doc_id"], answers=tuple(sample["doc"]["outputs"]),
                        response=sample["filtered_resps"][0], score=float(sample[str(length)]),
                        prompt_tokens=log.prompt_tokens, cut_tokens=log.cut_tokens, new_tokens=log.new_tokens,
                        seconds=round(log.seconds, 2))

