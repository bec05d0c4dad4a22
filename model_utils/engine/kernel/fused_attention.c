/* Causal attention with a logit multiplier per query row, and the statistics of every attention row, in one pass.
 *
 * The engine's hot loop (kernel/build.py builds this file, kernel/library.py loads it and checks it, plugin.py calls
 * it once per layer).
 * Flash-attention style: for each (batch row, head, block of BQ queries) the keys are visited in tiles of BK. One
 * sgemm gives a tile's dot products; each row then takes the tile's max, rescales its running sums if the max grew,
 * and in one vectorized sweep turns the tile into e = exp(l - max) while adding up sum e, sum e (l - max), the
 * sums per key-distance bin and in the recent window (the sweep is cut at their edges), and the runner-up. A
 * second sgemm adds e @ V to the output.
 * No n x n block is ever held: a thread's memory is one BQ x BK tile and its row accumulators. Nor is any per-row
 * output: each row's statistics are added into its query-position bucket's sums (see fused_attention).
 *
 * Logit of query q and key k: l = m_q * s * scaling, or, with a soft cap c (Gemma 2),
 * l = m_q * c * tanh(s * scaling / c): the temperature divides the capped score, the score softmax actually sees.
 * The row statistics (all from the weights p = e / sum e of the keys the query can see):
 *   entropy H = ln(sum e) - sum e z / sum e (z = l - max <= 0, so no cancellation whatever the multiplier);
 *   normalized entropy H / ln(visible keys); sink = p of key 0 (0 when a sliding window hides it);
 *   recent = p of keys max(1, q - window + 1)..q; distant = the rest; top gap = largest l - second largest l;
 *   untrained = p of the keys in bins untrained_bin.. (distance >= the trained length), key 0 left out;
 *   effective untrained = the same here (the kernel remaps no distance; the torch path does, core/rope.py REMAPS);
 *   bin j = p of the keys at distance edges[j] <= q - k < edges[j + 1].
 */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*sgemm_fn)(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                         const float *alpha, const float *a, const int *lda, const float *b, const int *ldb,
                         const float *beta, float *c, const int *ldc);

enum { F_ENTROPY, F_NORMALIZED, F_SINK, F_RECENT, F_DISTANT, F_GAP, F_UNTRAINED, F_EFFECTIVE, N_FIELDS };
#define MAX_BINS 48
#define BQ 256 /* queries per task: large enough for efficient sgemm, 4 x BQ x BK bytes of tile stay in L2 */
#define BK 512 /* keys per tile */
#define NEAR 64 /* a row's nearest keys, swept in one piece (see tile_row) */
#define LANES 16 /* the far pieces of a tile row are cut at multiples of this many keys (see tile_row) */

typedef struct {
    const float *q, *k, *v;
    int64_t q_sb, q_sh, q_sn; /* element strides of batch row, head, position (the last axis is contiguous) */
    int64_t k_sb, k_sh, k_sn;
    int64_t v_sb, v_sh, v_sn;
    float *out; /* output rows (strides below), or NULL for statistics only */
    int64_t o_sb, o_sh, o_sn;
    const float *multipliers; /* [batch, n]: logit multiplier of each query position (1 / T, or a schedule) */
    double scaling;           /* the layer's score scaling, usually head_dim ** -0.5 */
    double softcap;           /* > 0: Gemma 2's attention logit soft cap */
    int64_t batch, heads, kv_heads, n, d, dv;
    int64_t q_start; /* statistics for queries q_start..n-1 */
    int64_t window;  /* recent window: keys max(1, q - window + 1)..q */
    int64_t sliding; /* > 0: a query sees only its last `sliding` keys (a sliding-window layer) */
    const int64_t *edges; /* distance-bin edges, edges[0] = 0, increasing, the last > n - 1 */
    int64_t n_edges;
    int64_t untrained_bin; /* bins from this one on lie at distances >= the trained length (n_edges - 1: none) */
    int64_t bucket_size; /* > 0: query positions are summed per bucket, boundaries at its multiples; 0: one bucket */
    int64_t n_buckets;   /* the buckets of q_start..n-1 */
    double *stats;       /* [batch, heads, n_buckets, N_FIELDS + n_edges - 1]: each bucket's sums over its rows */
    sgemm_fn gemm;
    int64_t threads;
} Job;

typedef struct {
    float top1, top2, sink_logit;
    double sum, sum_ez, recent;
    double bins[MAX_BINS];
} RowState;

typedef struct { /* what one sweep over part of a tile row adds up */
    float sum, sum_ez, below;
    int64_t ties;
} Sweep;

static inline int64_t first_key(const Job *job, int64_t q) {
    return (job->sliding > 0 && q - job->sliding + 1 > 0) ? q - job->sliding + 1 : 0;
}

/* exp(x) for x <= 0 to about 1 ulp: Cody-Waite reduction by ln 2 and a degree-7 polynomial. Inline and
 * branch-free, so the loops calling it vectorize (a libm call per element would not). */
static inline float exp_nonpositive(float x) {
    x = x < -87.0f ? -87.0f : x; /* e^-87 is still a normal float; anything smaller counts as that */
    float n = rintf(x * 1.44269504088896341f);
    float r = fmaf(n, -0.693145751953125f, x);
    r = fmaf(n, -1.428606765330187045e-06f, r);
    float p = 1.0f / 5040.0f;
    p = fmaf(p, r, 1.0f / 720.0f);
    p = fmaf(p, r, 1.0f / 120.0f);
    p = fmaf(p, r, 1.0f / 24.0f);
    p = fmaf(p, r, 1.0f / 6.0f);
    p = fmaf(p, r, 0.5f);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    union { int32_t i; float f; } scale = {.i = ((int32_t)n + 127) << 23};
    return p * scale.f;
}

static inline float capped(float s, float pre, float post) { /* post * tanh(s * pre) */
    float x = s * pre;
    float e = exp_nonpositive(-2.0f * fabsf(x));
    return copysignf(post * (1.0f - e) / (1.0f + e), x);
}

static inline float logit(const Job *job, float s, float factor, float pre, float post) {
    return job->softcap > 0.0 ? capped(s, pre, post) : s * factor;
}

static inline float row_max(const float *s, int64_t a, int64_t b) {
    float m = -FLT_MAX;
    for (int64_t k = a; k < b; k++) m = fmaxf(m, s[k]);
    return m;
}

/* Over s[a..b) (raw dot products): e = exp(l - m) written in place, its sum returned and added to w with
 * sum e z; also the largest raw value below `top` (the tile's raw max) and how many equal it, from which the
 * tile's runner-up follows. */
static inline float sweep(float *s, int64_t a, int64_t b, float factor, float pre, float post, int softcap, float m,
                          float top, Sweep *w) {
    float se = 0.0f, sez = 0.0f, below = -FLT_MAX;
    int64_t ties = 0;
    if (softcap) {
        for (int64_t k = a; k < b; k++) {
            float v = s[k];
            below = fmaxf(below, v < top ? v : -FLT_MAX);
            ties += v == top;
            float z = capped(v, pre, post) - m, e = exp_nonpositive(z);
            s[k] = e; se += e; sez += e * z;
        }
    } else {
        for (int64_t k = a; k < b; k++) {
            float v = s[k];
            below = fmaxf(below, v < top ? v : -FLT_MAX);
            ties += v == top;
            float z = v * factor - m, e = exp_nonpositive(z);
            s[k] = e; se += e; sez += e * z;
        }
    }
    w->sum += se; w->sum_ez += sez;
    w->below = fmaxf(w->below, below);
    w->ties += ties;
    return se;
}

static inline float range_sum(const float *s, int64_t a, int64_t b) {
    float total = 0.0f;
    for (int64_t k = a; k < b; k++) total += s[k];
    return total;
}

/* One tile row: keys k0 + a .. k0 + b - 1 are visible (a < b) to the query at position q. */
static void tile_row(const Job *job, RowState *st, float *s, int64_t k0, int64_t a, int64_t b, int64_t q,
                     float multiplier, int64_t n_bins) {
    float factor = (float)(multiplier * job->scaling);
    float pre = job->softcap > 0.0 ? (float)(job->scaling / job->softcap) : 0.0f;
    float post = (float)(multiplier * job->softcap);
    int softcap = job->softcap > 0.0;
    float top = row_max(s, a, b);
    if (k0 + a == 0) st->sink_logit = logit(job, s[0], factor, pre, post);
    float old = st->top1;
    float m = fmaxf(old, logit(job, top, factor, pre, post)); /* the multiplier is > 0: the order is kept */
    if (m > old) {
        double shift = (double)old - (double)m;
        double alpha = old == -FLT_MAX ? 0.0 : exp(shift);
        st->sum_ez = alpha * (st->sum_ez + shift * st->sum); /* z = l - old becomes z + shift */
        st->sum *= alpha;
        st->recent *= alpha;
        for (int64_t j = 0; j < n_bins; j++) st->bins[j] *= alpha;
    }
    /* The one pass over the tile row (e in place). The row's NEAR or so nearest keys are swept at once, and their
     * bins and recent part summed again from the e values, which are in L1. Further out, the sweep is cut into one
     * piece per distance bin, so that each piece's sum lands in its bin directly (cutting the short near bins into
     * pieces of their own would cost more than summing them twice). Every cut is at a multiple of LANES keys, so
     * that no piece ends in a scalar remainder loop: the up to LANES - 1 keys a piece takes from the next bin are
     * summed again, taken off its sum and added to the next bin's. Bin j holds the keys q - edges[j+1] + 1 .. q - edges[j], nearest first. */
    Sweep w = {0.0f, 0.0f, -FLT_MAX, 0};
    int64_t recent_first = q - job->window + 1 > 1 ? q - job->window + 1 : 1;
    int64_t recent_lo = recent_first - k0; /* tile-relative; the recent keys run to q, the row's last */
    int64_t near_lo = (q - k0 - NEAR + 1) / LANES * LANES;
    if (near_lo < a) near_lo = a;
    int64_t end = b, j = 0;
    if (near_lo < b) {
        sweep(s, near_lo, b, factor, pre, post, softcap, m, top, &w);
        if (recent_lo < b) st->recent += range_sum(s, recent_lo > near_lo ? recent_lo : near_lo, b);
        for (; j < n_bins; j++) {
            int64_t hi = q - job->edges[j] - k0, lo = q - job->edges[j + 1] + 1 - k0; /* inclusive */
            if (hi < near_lo) break;
            if (lo >= b) continue;
            st->bins[j] += range_sum(s, lo > near_lo ? lo : near_lo, (hi < b - 1 ? hi : b - 1) + 1);
            if (lo < near_lo) break; /* this bin goes on below the near keys: its pieces there are added below */
        }
        end = near_lo;
    }
    /* Further out: keys from `swept` on hold e already; bin j's keys below `bin_end` are still to be added. */
    int64_t swept = end, bin_end = end;
    for (; j < n_bins && bin_end > a; j++) {
        int64_t lo = q - job->edges[j + 1] + 1 - k0;
        if (lo < a) lo = a;
        if (lo >= bin_end) continue; /* the bin lies beyond this tile's visible keys */
        float part;
        if (lo < swept) {
            int64_t cut = lo / LANES * LANES > a ? lo / LANES * LANES : a;
            part = sweep(s, cut, swept, factor, pre, post, softcap, m, top, &w) - range_sum(s, cut, lo);
            part += range_sum(s, swept, bin_end);
            swept = cut;
        } else {
            part = range_sum(s, lo, bin_end);
        }
        st->bins[j] += part;
        bin_end = lo;
    }
    if (recent_lo < end) st->recent += range_sum(s, recent_lo > a ? recent_lo : a, end); /* a wide window */
    st->sum += w.sum;
    st->sum_ez += w.sum_ez;
    /* merge this tile's top two into the row's (a tie counts twice) */
    float second = logit(job, w.ties >= 2 ? top : w.below, factor, pre, post);
    float first = logit(job, top, factor, pre, post);
    st->top2 = fmaxf(fminf(old, first), fmaxf(st->top2, second));
    st->top1 = m;
}

/* Query position q's bucket: buckets start at q_start and at every multiple of bucket_size after it. */
static inline int64_t bucket_of(const Job *job, int64_t q) {
    return job->bucket_size > 0 ? q / job->bucket_size - job->q_start / job->bucket_size : 0;
}

/* The bucket of the first query that block i0..i0+BQ-1 measures: its segment 0. */
static inline int64_t block_first_bucket(const Job *job, int64_t i0) {
    return bucket_of(job, i0 > job->q_start ? i0 : job->q_start);
}

/* The most buckets one block of BQ query positions can touch: its share of the sums is that many segments. */
static inline int64_t block_segments(const Job *job) {
    if (job->bucket_size <= 0) return 1;
    int64_t most = (BQ - 1) / job->bucket_size + 2;
    return most < BQ ? most : BQ;
}

static void finish_row(const Job *job, const RowState *st, int64_t q, double *o, int64_t n_bins) {
    double total = st->sum;
    double entropy = log(total) - st->sum_ez / total;
    int64_t visible = q - first_key(job, q) + 1;
    o[F_ENTROPY] = entropy > 0.0 ? entropy : 0.0;
    o[F_NORMALIZED] = visible > 1 ? o[F_ENTROPY] / log((double)visible) : 0.0;
    o[F_SINK] = first_key(job, q) == 0 ? exp((double)st->sink_logit - (double)st->top1) / total : 0.0;
    /* distant keys are the visible ones in 1..q - window; where there are none, the masses say exactly 0 */
    int64_t first_distant = first_key(job, q) > 1 ? first_key(job, q) : 1;
    if (q - job->window < first_distant) {
        o[F_DISTANT] = 0.0;
        o[F_RECENT] = 1.0 - o[F_SINK];
    } else {
        o[F_RECENT] = st->recent / total;
        o[F_DISTANT] = 1.0 - o[F_SINK] - o[F_RECENT];
        if (o[F_DISTANT] < 0.0) o[F_DISTANT] = 0.0;
    }
    o[F_GAP] = (double)st->top1 - (double)st->top2;
    double untrained = 0.0;
    for (int64_t j = 0; j < n_bins; j++) {
        o[N_FIELDS + j] = st->bins[j] / total;
        if (j >= job->untrained_bin) untrained += o[N_FIELDS + j];
    }
    /* key 0 sits at distance q: inside the untrained bins once q reaches their first edge, and it is the sink */
    if (job->untrained_bin < n_bins && q >= job->edges[job->untrained_bin]) untrained -= o[F_SINK];
    o[F_UNTRAINED] = untrained > 0.0 ? untrained : 0.0;
    o[F_EFFECTIVE] = o[F_UNTRAINED];
}

/* One task: query block i0..i0+BQ-1 of (batch row b, head h). Its rows' statistics are summed into `segments`
 * (block_segments(job) x width), segment j for the block's j-th bucket from the first it measures. */
static void run_block(const Job *job, int64_t b, int64_t h, int64_t i0, float *tile, float *acc, RowState *rows,
                      double *segments) {
    int64_t n_bins = job->n_edges - 1, width = N_FIELDS + n_bins;
    int64_t i1 = i0 + BQ < job->n ? i0 + BQ : job->n;
    int64_t count = i1 - i0, kv = h / (job->heads / job->kv_heads);
    const float *q = job->q + b * job->q_sb + h * job->q_sh + i0 * job->q_sn;
    const float *keys = job->k + b * job->k_sb + kv * job->k_sh;
    const float *values = job->v + b * job->v_sb + kv * job->v_sh;
    const float *multipliers = job->multipliers + b * job->n;
    int d = (int)job->d, dv = (int)job->dv, ldq = (int)job->q_sn, ldk = (int)job->k_sn, ldv = (int)job->v_sn;
    int ldt = BK, lda = dv;
    const float one = 1.0f, zero = 0.0f;
    for (int64_t r = 0; r < count; r++) {
        RowState *st = &rows[r];
        st->top1 = -FLT_MAX; st->top2 = -FLT_MAX; st->sink_logit = -FLT_MAX;
        st->sum = 0.0; st->sum_ez = 0.0; st->recent = 0.0;
        memset(st->bins, 0, sizeof(double) * n_bins);
    }
    if (job->out) memset(acc, 0, sizeof(float) * count * dv);
    for (int64_t k0 = first_key(job, i0) / BK * BK; k0 < i1; k0 += BK) {
        int64_t k1 = k0 + BK < i1 ? k0 + BK : i1;
        int m = (int)(k1 - k0), nq = (int)count;
        /* tile[r][j] = q_r . k_(k0+j); column-major: (m x nq) = K_tile (d x m)^T . Q_block (d x nq) */
        job->gemm("T", "N", &m, &nq, &d, &one, keys + k0 * job->k_sn, &ldk, q, &ldq, &zero, tile, &ldt);
        for (int64_t r = 0; r < count; r++) {
            int64_t position = i0 + r;
            float *s = tile + r * BK;
            int64_t a = first_key(job, position) - k0, e = position - k0 + 1; /* visible: [a, e) of the tile */
            if (a < 0) a = 0;
            if (e > m) e = m;
            if (a >= e) { memset(s, 0, sizeof(float) * m); continue; }
            float previous = rows[r].top1;
            tile_row(job, &rows[r], s, k0, a, e, position, multipliers[position], n_bins);
            if (a > 0) memset(s, 0, sizeof(float) * a);
            if (e < m) memset(s + e, 0, sizeof(float) * (m - e));
            if (job->out && rows[r].top1 > previous && previous != -FLT_MAX) {
                float alpha = expf(previous - rows[r].top1); /* the running output follows the new max */
                for (int c = 0; c < dv; c++) acc[r * dv + c] *= alpha;
            }
        }
        if (job->out) /* acc (dv x nq, column-major) += V_tile^T (dv x m) . tile^T (m x nq) */
            job->gemm("N", "N", &dv, &nq, &m, &one, values + k0 * job->v_sn, &ldv, tile, &ldt, &one, acc, &lda);
    }
    memset(segments, 0, sizeof(double) * block_segments(job) * width);
    int64_t first_bucket = block_first_bucket(job, i0);
    double row[N_FIELDS + MAX_BINS];
    for (int64_t r = 0; r < count; r++) {
        int64_t position = i0 + r;
        if (job->out) {
            float *o = job->out + b * job->o_sb + h * job->o_sh + position * job->o_sn;
            float inverse = (float)(1.0 / rows[r].sum);
            for (int c = 0; c < dv; c++) o[c] = acc[r * dv + c] * inverse;
        }
        if (position >= job->q_start) {
            finish_row(job, &rows[r], position, row, n_bins);
            double *segment = segments + (bucket_of(job, position) - first_bucket) * width;
            for (int64_t f = 0; f < width; f++) segment[f] += row[f];
        }
    }
}

/* Runs every (batch row, head, query block) task on job->threads threads. Returns 0, -1 when a thread's buffers
 * could not be allocated, -2 for arguments outside what this kernel handles. */
int fused_attention(const Job *job) {
    if (job->n_edges - 1 > MAX_BINS || job->n_edges < 2 || job->kv_heads < 1 || job->heads % job->kv_heads ||
        job->untrained_bin < 0 || job->untrained_bin > job->n_edges - 1)
        return -2;
    int64_t blocks = (job->n + BQ - 1) / BQ, pairs = job->batch * job->heads, tasks = pairs * blocks;
    int64_t width = N_FIELDS + job->n_edges - 1, per_block = block_segments(job) * width;
    if (job->n_buckets != bucket_of(job, job->n - 1) + 1) return -2;
    /* each task sums its rows into segments of its own (no locks), added up per bucket in block order afterwards:
     * the same sums whatever the threads' timing */
    double *segments = malloc(sizeof(double) * tasks * per_block);
    if (!segments) return -1;
    int failed = 0;
#pragma omp parallel num_threads((int)(job->threads > 0 ? job->threads : 1))
    {
        float *tile = aligned_alloc(64, sizeof(float) * BQ * BK); /* rows start on a cache line: LANES cuts align */
        float *acc = malloc(sizeof(float) * BQ * (job->dv > 0 ? job->dv : 1));
        RowState *rows = malloc(sizeof(RowState) * BQ);
        if (!tile || !acc || !rows) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp barrier
        if (!failed) {
            /* later query blocks see more keys: hand them out first, so the threads finish together */
#pragma omp for schedule(dynamic, 1)
            for (int64_t t = 0; t < tasks; t++) {
                int64_t block = blocks - 1 - t / pairs, pair = t % pairs;
                run_block(job, pair / job->heads, pair % job->heads, block * BQ, tile, acc, rows,
                          segments + (pair * blocks + block) * per_block);
            }
#pragma omp for schedule(static)
            for (int64_t pair = 0; pair < pairs; pair++) {
                double *sums = job->stats + pair * job->n_buckets * width;
                memset(sums, 0, sizeof(double) * job->n_buckets * width);
                for (int64_t block = job->q_start / BQ; block < blocks; block++) {
                    int64_t i0 = block * BQ, i1 = i0 + BQ < job->n ? i0 + BQ : job->n;
                    const double *segment = segments + (pair * blocks + block) * per_block;
                    for (int64_t bucket = block_first_bucket(job, i0); bucket <= bucket_of(job, i1 - 1); bucket++, segment += width)
                        for (int64_t f = 0; f < width; f++) sums[bucket * width + f] += segment[f];
                }
            }
        }
        free(tile);
        free(acc);
        free(rows);
    }
    free(segments);
    return failed ? -1 : 0;
}

/* What library.py checks before its first call, refusing the library on any difference: the Job layout its ctypes
 * mirror must match, the row fields and bins it sizes its buffers for, the OpenMP runtime this library is bound to
 * (it must be torch's: one thread pool, not two), and the sgemm it is handed. */
#define JOB_FIELD(name) {#name, offsetof(Job, name), sizeof(((Job *)0)->name)},
static const struct { const char *name; int64_t offset, size; } JOB_LAYOUT[] = {
    JOB_FIELD(q) JOB_FIELD(k) JOB_FIELD(v) JOB_FIELD(q_sb) JOB_FIELD(q_sh) JOB_FIELD(q_sn) JOB_FIELD(k_sb)
    JOB_FIELD(k_sh) JOB_FIELD(k_sn) JOB_FIELD(v_sb) JOB_FIELD(v_sh) JOB_FIELD(v_sn) JOB_FIELD(out) JOB_FIELD(o_sb)
    JOB_FIELD(o_sh) JOB_FIELD(o_sn) JOB_FIELD(multipliers) JOB_FIELD(scaling) JOB_FIELD(softcap) JOB_FIELD(batch)
    JOB_FIELD(heads) JOB_FIELD(kv_heads) JOB_FIELD(n) JOB_FIELD(d) JOB_FIELD(dv) JOB_FIELD(q_start)
    JOB_FIELD(window) JOB_FIELD(sliding) JOB_FIELD(edges) JOB_FIELD(n_edges) JOB_FIELD(untrained_bin)
    JOB_FIELD(bucket_size) JOB_FIELD(n_buckets) JOB_FIELD(stats) JOB_FIELD(gemm) JOB_FIELD(threads)
};

int64_t fused_attention_job_size(void) { return sizeof(Job); }

int64_t fused_attention_job_fields(void) { return sizeof JOB_LAYOUT / sizeof JOB_LAYOUT[0]; }

/* Field i of Job in declaration order: its name, and its offset and size in bytes; NULL past the last. */
const char *fused_attention_job_field(int64_t i, int64_t *offset, int64_t *size) {
    if (i < 0 || i >= fused_attention_job_fields()) return NULL;
    *offset = JOB_LAYOUT[i].offset;
    *size = JOB_LAYOUT[i].size;
    return JOB_LAYOUT[i].name;
}

int64_t fused_attention_row_fields(void) { return N_FIELDS; }

int64_t fused_attention_max_bins(void) { return MAX_BINS; }

/* An entry point of the OpenMP runtime this library's threads come from, as the dynamic linker bound it. */
void *fused_attention_openmp(void) { return (void *)omp_get_max_threads; }

/* Whether x holds exactly the integer s (either zero for 0). Compared as bits: -ffast-math lets the compiler assume
 * that no float is NaN, so a float comparison could pass a NaN. */
static inline int exactly(float x, double s) {
    union { float f; uint32_t u; } got = {.f = x}, want = {.f = (float)s};
    return got.u == want.u || ((got.u | want.u) & 0x7fffffffu) == 0;
}

/* The kernel's two calls to `gemm` (scores = K^T Q, then acc += V^T P) on small integers, whose products are exact
 * in float32 whatever the order of the sums, in `threads` threads at once as in fused_attention, against plain
 * loops. Returns how many results differ (0 when the routine computes what its name says), or -1 when the buffers
 * could not be allocated. */
int64_t fused_attention_check_gemm(sgemm_fn gemm, int64_t keys, int64_t queries, int64_t dim, int64_t threads) {
    int64_t wrong = 0;
    int failed = 0;
#pragma omp parallel num_threads((int)(threads > 0 ? threads : 1)) reduction(+ : wrong) reduction(| : failed)
    {
        int m = (int)keys, nq = (int)queries, d = (int)dim, dv = (int)dim;
        int ldk = d + 3, ldq = d + 1, ldt = m + 5, ldv = dv + 2, lda = dv; /* leading dimensions past the rows */
        int seed = omp_get_thread_num();
        float *k = malloc(sizeof(float) * m * ldk), *q = malloc(sizeof(float) * nq * ldq);
        float *v = malloc(sizeof(float) * m * ldv), *tile = malloc(sizeof(float) * nq * ldt);
        float *acc = malloc(sizeof(float) * nq * dv);
        const float one = 1.0f, zero = 0.0f;
        if (!k || !q || !v || !tile || !acc) {
            failed = 1;
        } else {
            for (int j = 0; j < m; j++)
                for (int c = 0; c < ldk; c++) k[j * ldk + c] = (float)((j * 7 + c * 3 + seed) % 5 - 2);
            for (int r = 0; r < nq; r++)
                for (int c = 0; c < ldq; c++) q[r * ldq + c] = (float)((r * 5 + c + seed) % 3 - 1);
            for (int j = 0; j < m; j++)
                for (int c = 0; c < ldv; c++) v[j * ldv + c] = (float)((j + c * 2 + seed) % 5 - 2);
            for (int i = 0; i < nq * dv; i++) acc[i] = 1.0f; /* the second call accumulates (beta = 1) */
            gemm("T", "N", &m, &nq, &d, &one, k, &ldk, q, &ldq, &zero, tile, &ldt);
            gemm("N", "N", &dv, &nq, &m, &one, v, &ldv, tile, &ldt, &one, acc, &lda);
            for (int r = 0; r < nq; r++) {
                for (int j = 0; j < m; j++) {
                    double s = 0.0;
                    for (int c = 0; c < d; c++) s += (double)k[j * ldk + c] * q[r * ldq + c];
                    wrong += !exactly(tile[r * ldt + j], s);
                }
                for (int c = 0; c < dv; c++) {
                    double s = 1.0;
                    for (int j = 0; j < m; j++) s += (double)v[j * ldv + c] * tile[r * ldt + j];
                    wrong += !exactly(acc[r * dv + c], s);
                }
            }
        }
        free(k);
        free(q);
        free(v);
        free(tile);
        free(acc);
    }
    return failed ? -1 : wrong;
}
