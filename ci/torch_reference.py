#!/usr/bin/env python3
"""PyTorch's figures for gpucheck's cases, timed the way gpucheck times them.

Without --cases it times PyTorch's counterparts of bench_bmm's, bench_conv's and
bench_attention's full suites. With --cases FILE (names one a line, as `bench_X -a ... --list`
prints them) it times PyTorch's counterpart of each named case instead, at the user's shapes:
  matmul/cublaslt      torch.mm(b, a.t()): the very cuBLAS problem of bench_matmul's case
                       (m=M, n=N, k=K, A transposed, fp32 accumulate, bf16/fp16 out); fp8
                       through torch._scaled_mm (bf16 out); plus a reference row
                       matmul/torch_cublaslt/... (the same call with PyTorch's cuBLASLt path)
  matmul/linear        F.linear(x, w) (y = x w^T, x M x K, w N x K): cuBLAS's (T, N, m=N, n=M,
                       k=K), bench_matmul's llm suite; fp8 through torch._scaled_mm(x, w.t())
  attention/{naive,flash,cudnn}  any batch, heads, kv_heads (grouped-query: enable_gqa),
                       seq_q, seq_k (a causal mask bottom-right aligned, as bench_attention's),
                       head_dim; plus a reference row attention/torch_efficient/... (SDPA's
                       EFFICIENT_ATTENTION backend: bench_attention has no such backend)
  bmm/{strided,strided_mbk,permute_bmm}  torch.bmm, torch.einsum, .contiguous() then bmm
  nccl allgather, reducescatter (out of place, one rank: algbw_GBps). All-reduce is listed as
                       skipped with the reason: torch.distributed's all_reduce is in place only,
                       and in place at one rank NCCL moves no data.
A name PyTorch cannot run (it raises, or has no counterpart) is written to the JSON as
skipped, with the reason, and the run goes on.

Why this script: a short op timed one call at a time (`start.record(); fn(); end.record();
sync`, the usual way to time PyTorch) encloses PyTorch's host dispatch of
that call. gpucheck holds the stream with a spin kernel while it queues the timed calls, so
its events enclose device time only. This script times the same PyTorch calls both ways:

  held      torch.cuda._sleep holds the stream while the calls are queued, CUDA events around
            them: the device time per call (gpucheck's method); the JSON figure.
            bmm, conv, nccl: CALLS calls a sample, median of SAMPLES samples.
            matmul and attention: gpucheck's power burst step by step (burst_ms).
  per_call  one call at a time, median of 50 calls: counter per_call_<rate>, and
            dispatch_us = per-call time - held time (what dispatch adds; 0 when below)

It writes Google Benchmark JSON under gpucheck's names, so `gpucheck compare REF OURS` and
`gpucheck report` line the two up. Outputs are checked before timing (einsum and NHWC against
bmm and NCHW; every fused attention against the naive one where S fits).

--table OUT.md writes the axes session's table from the JSON of both sides (no torch needed).
--parity times GEMMs as bench_matmul does, step for step (time_case), and adds the kernel one
untimed call ran (torch.profiler, after every row is timed: profile_after), NVML's SM clock
during the samples, and,
under GPUCHECK_COOLDOWN, the harness's cool-down before each burst (matmul/linear rows, as
ours: the operands rotated over copies, linear_copies, every batch whole turns of them,
whole_turns; each sample one CUDA graph replay; decode rows a warm-up of LINEAR_WARMUP_S,
linear_warmup_s; rows of more tokens timed on the power limit's plateau, linear_plateau and
plateau_next, with no cool-down);
--parity-table OUT writes
ci/gemm_parity.sh's table with issue 40's criteria (no torch needed).

Usage: python3 ci/torch_reference.py [--json OUT.json] [--filter REGEX] [--cases FILE] [--kernels]
                                       [--gemm-diagnostics] [--parity]
       python3 ci/torch_reference.py --parity-table OUT
       python3 ci/torch_reference.py --table OUT.md --section TITLE METRIC PREFIX [...] [--band SPEC ...]
"""
import argparse
import collections
import itertools
import json
import math
import os
import re
import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the pure helpers below (names, the engine's rules, the table) need no torch
    torch = F = None

CALLS = 20  # calls per held sample (bmm, conv, nccl)
SAMPLES = 15  # held samples per case (median)
PARITY_MIN_HOLD_MS = 0.1  # --parity: the spin kernel's least hold before a sample (ours: the queueing time)
LINEAR_WARMUP_S = 0.2  # --parity, matmul/linear decode rows: warm-up time (benchmarks/cases/matmul.hpp kLinearWarmupS)
LINEAR_WARM_MAX_TOKENS = 16  # the decode rows: at most this many tokens (kLinearWarmMaxTokens)
LINEAR_PLATEAU_LOAD_S = 0.2  # matmul/linear rows of more tokens: load not counted (kLinearPlateauLoadS)
LINEAR_PLATEAU_S = 0.4  # ... then this long counted (kLinearPlateauS)
PLATEAU_SAMPLE_MS = 5.0  # a plateau's queued samples: at least this long (harness kPlateauSampleS)
PLATEAU_MAX_BATCH = 1024  # ... and at most this many calls (kPlateauMaxBatch)
MAX_LINEAR_COPIES = 8  # matmul/linear: most copies of the operands rotated over (kMaxLinearCopies)
MIN_LINEAR_COPIES = 4  # ... and least, where they fit (kMinLinearCopies)
PLACEMENT_COPIES_BYTES = 8 << 30  # ... in this many bytes (kPlacementCopiesBytes)
LINEAR_METHOD = 8  # matmul/linear: the counter `method`, as bench_matmul's (kLinearMethod)
LINEAR_GROUPS = 5  # rows of at most LINEAR_GROUPS_MAX_TOKENS: groups timed, the fastest reported (kLinearGroups)
LINEAR_GROUPS_MAX_TOKENS = 128  # (kLinearGroupsMaxTokens)
REDRAW_BYTES = 256 << 20  # ... each after a write and free of this much device memory (harness kRedrawBytes)
WEIGHT_BOUND_METHOD = 2  # matmul/cublaslt bursts of at most LINEAR_WARM_MAX_TOKENS rows of A (kWeightBoundMethod)


# ---- Pure helpers: no torch, tested by tests/unit/test_torch_reference.py -------------------

def linear_copies(operand_bytes, l2_bytes):
    """Copies of an F.linear call's operands to rotate over, as bench_matmul's linear rows
    (benchmarks/cases/matmul.hpp, linear_copies): each copy evicted by the others (twice the
    L2) before it is used again, at most MAX_LINEAR_COPIES; and at least MIN_LINEAR_COPIES,
    each its own allocation, where they hold at most PLACEMENT_COPIES_BYTES: an HBM-bound
    call's time follows where its weight landed."""
    if operand_bytes <= 0:
        return 1
    n = 1
    if operand_bytes < 2 * l2_bytes:
        others = -(-2 * l2_bytes // operand_bytes)
        n = min(1 + others, MAX_LINEAR_COPIES)
    if operand_bytes <= PLACEMENT_COPIES_BYTES // MIN_LINEAR_COPIES:
        n = max(n, MIN_LINEAR_COPIES)
    return n


def gemm_m(name, variant):
    """M (an F.linear row's tokens) of a matmul case `matmul/<variant>/<dtype>/MxNxK`; None for
    any other name."""
    m = re.fullmatch(rf"matmul/{variant}/[^/]+/(\d+)x\d+x\d+", name)
    return int(m.group(1)) if m else None


def weight_bound(name):
    """Whether `name` is a cuBLASLt burst whose A has at most LINEAR_WARM_MAX_TOKENS rows (M):
    its B read from HBM once a call, as a decode row's weight, so timed in LINEAR_GROUPS groups
    with method WEIGHT_BOUND_METHOD (matmul.hpp, weight_bound)."""
    m = gemm_m(name, "cublaslt")
    return m is not None and m <= LINEAR_WARM_MAX_TOKENS


def linear_warmup_s(tokens):
    """The warm-up time of an F.linear row of `tokens` tokens (matmul.hpp, linear_warmup_s):
    decode rows warm up for LINEAR_WARMUP_S; the others are timed on the plateau."""
    return LINEAR_WARMUP_S if tokens <= LINEAR_WARM_MAX_TOKENS else 0.0


def linear_groups(tokens):
    """Groups of samples an F.linear row of `tokens` tokens is timed in (matmul.hpp,
    linear_groups): LINEAR_GROUPS for rows of at most LINEAR_GROUPS_MAX_TOKENS (decode and 128
    tokens), whose weights' read follows a memory state that each write and free of other
    memory draws anew; else 1."""
    return LINEAR_GROUPS if tokens <= LINEAR_GROUPS_MAX_TOKENS else 1


MAX_STEP_TIMING_FRACTION = 0.1  # energy.hpp kMaxStepTimingFraction


class EnergySteps:
    """energy.cpp's EnergySteps: NVML's energy counter moves in steps (every ~100 ms on an
    H200), so the power is taken between the counter's first and last moves:
    whole steps over their time. add(t, J) a reading (None or not finite: none; not later than
    the last: skipped; lower than the last: a driver reload, no figure for the window);
    power_W() None unless two moves were seen, each timed at the middle of the gap since the
    reading before it (so to within half of it), the two halves at most
    MAX_STEP_TIMING_FRACTION of the time between the moves."""

    def __init__(self):
        self.last = None  # (t, J) of the last reading
        self.first_move = self.last_move = None  # (t, J, gap before it)
        self.moves, self.broken = 0, False

    def add(self, t, joules):
        if joules is None or t is None or not math.isfinite(joules) or not math.isfinite(t):
            return
        if self.last is not None:
            if not t > self.last[0]:
                return
            if joules < self.last[1]:
                self.broken = True
            elif joules > self.last[1]:
                move = (t, joules, t - self.last[0])
                self.first_move = self.first_move or move
                self.last_move = move
                self.moves += 1
        self.last = (t, joules)

    def power_W(self):
        if self.broken or self.moves < 2:
            return None
        half_gaps = (self.first_move[2] + self.last_move[2]) / 2
        span = (self.last_move[0] - self.last_move[2] / 2) - (self.first_move[0] - self.first_move[2] / 2)
        if not span > 0 or half_gaps > MAX_STEP_TIMING_FRACTION * span:
            return None
        return (self.last_move[1] - self.first_move[1]) / span


class EnergyWindow:
    """The energy counter over a burst's timed samples, as the engine's power_over reads it:
    start() where ours starts (held samples: after the one that sizes the batch; a plateau:
    before its first counted sample; later calls keep the first start), read() during a plateau's
    counted sample while the queue runs (probed), stop() once they are done; power_W() EnergySteps' figure over
    those readings, None until stopped. read_J: the counter in joules (None when unread); now:
    seconds."""

    def __init__(self, read_J, now=time.perf_counter):
        self.read_J, self.now = read_J, now
        self.steps, self.stopped = None, False

    def _read(self):  # the time once the reading is back, as the engine's read_energy
        joules = self.read_J()
        self.steps.add(self.now(), joules)

    def start(self):
        if self.steps is None:
            self.steps = EnergySteps()
            self._read()

    def read(self):
        if self.steps is not None and not self.stopped:
            self._read()

    def stop(self):
        if self.steps is not None and not self.stopped:
            self._read()
            self.stopped = True

    def power_W(self):
        return self.steps.power_W() if self.stopped else None


class ReadPacer:
    """energy.hpp's ReadPacer: a plateau's readings while its queued samples run (probe() and
    the energy counter) are taken only once the host has spent, since the last one ended, at
    least as long as that one took, so that NVML has at most half the host's time (read every
    sample, they took longer than a sample runs, and the card idled between samples). took()
    with a time not finite, or an end before its start, forgets the last reading."""

    def __init__(self):
        self.last_end = None
        self.last_took = 0.0

    def due(self, now):
        if self.last_end is None:
            return True
        return not (now - self.last_end < self.last_took)  # a NaN now reads

    def took(self, start, end):
        if not (math.isfinite(start) and math.isfinite(end)) or end < start:
            self.last_end = None
            return
        self.last_end, self.last_took = end, end - start

    def reset(self):
        self.last_end = None


def fastest_group(medians):
    """(index, spread) of groups of samples timed one after another (core/src/measure.cpp
    fastest_group): the group of the lowest median (ties: the first) and the slowest median over
    the fastest, less 1; None when there is none or a median is not finite and positive."""
    if not medians or any(not (m > 0) or not math.isfinite(m) for m in medians):
        return None
    best = min(range(len(medians)), key=lambda i: (medians[i], i))
    return best, max(medians) / medians[best] - 1


def burst_groups(groups, burst):
    """The engine's MeasureOptions::groups: burst(first) `groups` times (first: True for the
    first only, which settles and cools); each returns (burst_ms's tuple, what goes with that
    group: time_case's clock readings and power). Returns the group of the lowest median per
    call as (tuple, spread, what goes with it), spread None for one group."""
    runs = [burst(g == 0) for g in range(max(1, groups))]
    if len(runs) == 1:
        return runs[0][0], None, runs[0][1]
    pick = fastest_group([r[0][0] for r in runs])
    if pick is None:
        raise RuntimeError("a group of samples measured nothing")
    return runs[pick[0]][0], pick[1], runs[pick[0]][1]


def linear_plateau(tokens):
    """Whether an F.linear row of `tokens` tokens is timed on the power limit's plateau
    (matmul.hpp, linear_plateau: rows of more than LINEAR_WARM_MAX_TOKENS tokens)."""
    return tokens > LINEAR_WARM_MAX_TOKENS


def follow_batch(batch, per_call_s, min_sample_s, min_batch, max_batch):
    """The batch during a plateau's load, after each discarded sample (core/src/measure.cpp
    follow_batch): choose_batch's figure when it is 25% or more away from `batch`, else
    `batch`; the load's back-to-back samples know the call's steady time, which the one
    calibration call misjudges."""
    want = choose_batch(per_call_s, min_sample_s, min_batch, max_batch)
    return want if want * 4 >= batch * 5 or batch * 4 >= want * 5 else batch


def whole_turns(batch, turns, max_batch):
    """`batch` rounded up to a whole number of `turns` (core/src/measure.cpp whole_turns), or
    down where that passes max_batch; `turns` itself where no multiple fits; `batch` when turns
    is 1 or less. A sample that a CUDA graph replays again and again ends where the next begins
    in the rotation of the operands' copies, so that no copy is read again from the L2."""
    if turns <= 1:
        return batch
    up = -(-max(batch, 1) // turns) * turns
    if up <= max_batch:
        return up
    down = max_batch // turns * turns
    return down if down > 0 else turns


def copies_of(what):
    """The number of copies a case's label says its calls rotate over ("copies=N"), else 1."""
    m = re.search(r"\bcopies=(\d+)", what or "")
    return int(m.group(1)) if m else 1


def plateau_next(elapsed_s, counted, load_s=LINEAR_PLATEAU_LOAD_S, window_s=LINEAR_PLATEAU_S, min_counted=10):
    """The plateau's sampling rule (core/src/measure.cpp run_sampling with discard_s, as
    harness::power_plateau sets it), before each sample: elapsed_s since the first timed
    sample began, counted the samples counted so far. "stop" once load_s + window_s have passed
    with at least min_counted counted; "count" from load_s on; "discard" before it (the
    load that takes the card into its power limit: run, not counted, not clock-read)."""
    if elapsed_s >= load_s + window_s and counted >= min_counted:
        return "stop"
    return "count" if elapsed_s >= load_s else "discard"


def choose_batch(one_call_s, min_sample_s=5e-4, min_batch=1, max_batch=64):
    """Calls per sample, as the engine picks them (core/src/measure.cpp,
    choose_batch): enough that one sample spans min_sample_s, within [min_batch, max_batch]; a
    call that measured no time gets max_batch."""
    max_batch = max(max_batch, 1)
    min_batch = min(max(min_batch, 1), max_batch)
    if not (one_call_s > 0) or math.isinf(one_call_s):
        return max_batch
    want = math.ceil(min_sample_s / one_call_s)
    if want >= max_batch:
        return max_batch
    return min(max(int(want), min_batch), max_batch)


AttnShape = collections.namedtuple("AttnShape", "b h kv s sk d")
_ATTN_SHAPE = re.compile(r"b(\d+)h(\d+)(?:kv(\d+))?s(\d+)(?:sk(\d+))?d(\d+)")


def parse_attention_shape(label):
    """bench_attention's shape label (benchmarks/cases/attention.hpp, shape_label) as an
    AttnShape; kv (key/value heads) and sk (keys per sequence) appear in a label only where
    they differ from h and s: b4h32kv8s4096d128, b8h32kv8s1sk8192d128. None if not one."""
    m = _ATTN_SHAPE.fullmatch(label)
    if not m:
        return None
    b, h, kv, s, sk, d = (None if g is None else int(g) for g in m.groups())
    sh = AttnShape(b, h, h if kv is None else kv, s, s if sk is None else sk, d)
    return sh if min(sh) > 0 else None


def attention_label(sh):
    """The inverse of parse_attention_shape: the label bench_attention prints."""
    kv = f"kv{sh.kv}" if sh.kv != sh.h else ""
    sk = f"sk{sh.sk}" if sh.sk != sh.s else ""
    return f"b{sh.b}h{sh.h}{kv}s{sh.s}{sk}d{sh.d}"


def attention_unrunnable(sh, causal):
    """Why a shape has no meaningful attention here (None when it has one)."""
    if sh.h % sh.kv != 0:
        return f"heads {sh.h} is not a multiple of kv_heads {sh.kv}"
    if causal and sh.s > sh.sk:
        return "causal needs seq_q <= seq_k (bench_attention's mask is bottom-right aligned)"
    return None


def attention_flops(sh, causal):
    """bench_attention's count (attention_flops in bench_attention.cpp): 4*d per visible (query,
    key) pair, 4*b*h*s_q*s_k*d per call; causal (bottom-right aligned) s_q * (s_k - s_q / 2)
    pairs, the diagonal counted half, which is s^2 / 2 when s_q == s_k."""
    pairs = sh.s * (sh.sk - sh.s / 2) if causal else sh.s * sh.sk
    return 4.0 * sh.b * sh.h * sh.d * pairs


def causal_masked(i, j, s, sk):
    """bench_attention's causal mask, bottom-right aligned: query i (of s) does not see key j
    (of sk) when j > i + (sk - s). Equal to SDPA's is_causal (top-left) only when s == sk."""
    return j > i + (sk - s)


def reference_twins(name):
    """PyTorch-only rows timed beside a case: attention/torch_efficient/... (SDPA's
    EFFICIENT_ATTENTION backend) for every attention case, matmul/torch_cublaslt/... (torch.mm
    through PyTorch's cuBLASLt path) for every non-fp8 GEMM. bench_* have no such names."""
    p = name.split("/")
    if p[0] == "attention" and len(p) in (4, 5) and p[1] != "torch_efficient":
        return ["/".join(["attention", "torch_efficient"] + p[2:])]
    if p[0] == "matmul" and len(p) == 4 and p[1] == "cublaslt" and p[2] != "fp8e4m3":
        return ["/".join(["matmul", "torch_cublaslt"] + p[2:])]
    return []


def with_reference_rows(names):
    """`names` with each one's reference twins after it, every name once, in order."""
    out, seen = [], set()
    for n in names:
        for x in [n] + reference_twins(n):
            if x not in seen:
                seen.add(x)
                out.append(x)
    return out


def nccl_counterpart(variant, ranks):
    """torch.distributed's counterpart of bench_nccl's variant at one rank: (what, None), or
    (None, why there is none). At one rank all-gather and reduce-scatter out of place are NCCL's
    copy of the bytes from send to receive buffer, on both sides; in place nothing moves."""
    if ranks != "g1":
        return None, "one process, one GPU here (torch.distributed at world size 1)"
    if variant.endswith("_inplace"):
        return None, ("in place at one rank NCCL moves no data: both sides would time a launch "
                      "(report only)")
    if variant == "allreduce":
        return None, ("torch.distributed's all_reduce is in place only (in place at one rank "
                      "nothing moves); ours copies send->recv: report only")
    what = {"allgather": "dist.all_gather_into_tensor", "reducescatter": "dist.reduce_scatter_tensor"}.get(variant)
    return (what, None) if what else (None, f"no torch.distributed call for {variant}")


SIZE_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def parse_bytes(label):
    m = re.fullmatch(r"(\d+)(B|KiB|MiB|GiB|TiB)", label)
    return int(m.group(1)) * SIZE_UNITS[m.group(2)] if m else None


def dotted_version(v):
    """A library's integer version as gpucheck's context writes it (core/src/names.cpp):
    130100 -> 13.1.0, 91900 -> 9.19.0, 22809 -> 2.28.9."""
    v = int(v)
    return f"{v // 10000}.{(v // 100) % 100}.{v % 100}"


# -- The axes session's table (ci/axes_session.sh): both sides' JSON, the families' bands --

_GB_SUFFIX = re.compile(r"/(manual_time|real_time|process_time|(min_time|min_warmup_time|iterations|repeats):[^/]*)$")


def benchmark_key(name):
    """A Google Benchmark name without the suffixes it adds (/iterations:1/manual_time):
    compare/results/reader.cpp's benchmark_key."""
    while True:
        stripped = _GB_SUFFIX.sub("", name)
        if stripped == name or not stripped:
            return name
        name = stripped


def read_results(path):
    """(context, {name: result}) from a Google Benchmark JSON file; a result is a dict with
    'values' (per repetition: the counters) or 'skipped' (the reason), and 'label'. Raises
    OSError / ValueError for a file that is missing or not JSON."""
    with open(path) as f:
        doc = json.load(f)  # Google Benchmark 1.7 writes bare NaN/Infinity: json reads them
    out = {}
    for e in doc.get("benchmarks", []):
        if e.get("run_type") == "aggregate":
            continue
        key = benchmark_key(e.get("run_name") or e.get("name", ""))
        r = out.setdefault(key, {"values": [], "skipped": None, "label": e.get("label", "")})
        if e.get("skipped") is True or e.get("error_occurred") is True:
            msg = e.get("skip_message") if e.get("skipped") is True else e.get("error_message")
            msg = msg or ""
            if e.get("error_occurred") is True and not msg.startswith("unsupported: "):
                msg = "error: " + msg
            r["skipped"] = msg[len("unsupported: "):] if msg.startswith("unsupported: ") else msg
        else:
            r["values"].append(e)
    return doc.get("context", {}), out


def metric_of(result, metric):
    """The median over repetitions of `metric`, or None."""
    vals = [float(e[metric]) for e in result["values"]
            if isinstance(e.get(metric), (int, float)) and not isinstance(e.get(metric), bool)]
    vals = [v for v in vals if math.isfinite(v)]
    return statistics.median(vals) if vals else None


def parse_band(spec):
    """'PREFIX=PCT' (agreement within PCT percent) or 'PREFIX=report:WHY' (no agreement is
    claimed: report only) -> (prefix, pct or None, why)."""
    prefix, sep, rest = spec.partition("=")
    if not sep or not prefix:
        raise ValueError(f"band {spec!r}: expected PREFIX=PCT or PREFIX=report:WHY")
    if rest.startswith("report:"):
        return prefix, None, rest[len("report:"):].strip()
    pct = float(rest)
    if not pct > 0:
        raise ValueError(f"band {spec!r}: the percentage must be positive")
    return prefix, pct, ""


def band_for(name, bands):
    """The longest band prefix that `name` starts with, or None."""
    best = None
    for b in bands:
        if name.startswith(b[0]) and (best is None or len(b[0]) > len(best[0])):
            best = b
    return best


def side_gap(rec, value, who, metric):
    """Why one side (`who`: "ours" or "PyTorch") has no figure to compare, or None."""
    if rec is None:
        return f"missing: {who} wrote no result"
    if rec["skipped"] is not None:
        return f"skipped ({who}): " + rec["skipped"]
    if value is None:
        return f"{who} has no {metric}"
    return None


def table_rows(names, ours, theirs, metric, bands):
    """One row per case: (case, ours, PyTorch, ratio, band, verdict); the cases of `names` in
    order, then PyTorch's reference-only rows (names ours does not have)."""
    rows = []
    listed = set(names)
    for n in list(names) + [n for n in theirs if n not in listed]:
        o, t = ours.get(n), theirs.get(n)
        ov = metric_of(o, metric) if o and not o["skipped"] else None
        tv = metric_of(t, metric) if t and not t["skipped"] else None
        band = band_for(n, bands)
        band_text = "" if band is None else ("report only" if band[1] is None else f"{band[1]:g}%")
        ratio = ov / tv if ov is not None and tv else None
        if n not in listed:
            verdict = "PyTorch reference only (ours has no such case)"
            if t is not None and t["skipped"] is not None:
                verdict += "; skipped (PyTorch): " + t["skipped"]
        elif gap := side_gap(o, ov, "ours", metric) or side_gap(t, tv, "PyTorch", metric):
            verdict = gap
        elif band is None:
            verdict = "no band stated"
        elif band[1] is None:
            verdict = "report only: " + band[2]
        else:
            verdict = "inside" if abs(ratio - 1.0) * 100.0 <= band[1] else "**outside**"
        rows.append((n, ov, tv, ratio, band_text, verdict))
    return rows


def _cell(text, limit=160):
    text = str(text).replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def render_section(title, metric, rows, ours_ctx, torch_ctx):
    """A family's Markdown table and a one-line count."""
    def num(v):
        return "" if v is None else f"{v:.1f}"
    libs = []  # the libraries our binary recorded (the ones it calls), and PyTorch's of each
    for key, what in (("cublas_version", "cuBLAS"), ("cudnn_version", "cuDNN"), ("nccl_version", "NCCL")):
        if ours_ctx.get(key):
            libs.append(f"{what} ours {ours_ctx[key]}, PyTorch {torch_ctx.get(key) or '?'}")
    lines = [f"## {title}", ""]
    if libs:
        lines += ["Libraries: " + "; ".join(libs) + ".", ""]
    lines += [f"| case | ours {metric} | PyTorch {metric} | ours / PyTorch | band | agreement |",
              "| --- | ---: | ---: | ---: | ---: | --- |"]
    for n, ov, tv, ratio, band, verdict in rows:
        r = "" if ratio is None else f"{ratio:.3f}"
        lines.append(f"| {_cell(n)} | {num(ov)} | {num(tv)} | {r} | {band} | {_cell(verdict)} |")
    judged = [r for r in rows if r[5] in ("inside", "**outside**")]
    inside = sum(1 for r in judged if r[5] == "inside")
    rest = len(rows) - len(judged)
    lines += ["", f"{inside} of {len(judged)} compared cases inside their band "
                  f"({rest} other row{'' if rest == 1 else 's'}: report only, skipped or reference only).", ""]
    return lines


def write_table(path, sections, bands):
    """sections: (title, metric, prefix) with PREFIX.cases.txt, PREFIX.ours.json and
    PREFIX.torch.json as ci/axes_session.sh writes them. A missing or unreadable file is said
    in the table; the table is always written."""
    lines = ["# gpucheck beside PyTorch, timed the same way (ci/axes_session.sh)", "",
             "ours / PyTorch > 1: ours is faster. Bands: docs/TORCH_REFERENCE.md (\"Agreement "
             "with PyTorch\"); a case inside its band agrees with PyTorch within it.", ""]
    for title, metric, prefix in sections:
        problems, names = [], []
        try:
            with open(prefix + ".cases.txt") as f:
                names = [l.strip() for l in f if l.strip()]
        except OSError as e:
            problems.append(f"no case list ({e.strerror}: {prefix}.cases.txt)")
        sides = []
        for side in ("ours", "torch"):
            try:
                sides.append(read_results(f"{prefix}.{side}.json"))
            except (OSError, ValueError) as e:
                problems.append(f"{side}: no readable JSON ({prefix}.{side}.json: {e}); see {prefix}.{side}.log")
                sides.append(({}, {}))
        (octx, ours), (tctx, theirs) = sides
        lines += render_section(title, metric, table_rows(names, ours, theirs, metric, bands), octx, tctx)
        if problems:
            lines += ["Not shown: " + "; ".join(problems) + ".", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


# -- The GEMM parity table (ci/gemm_parity.sh): N alternations of ours and PyTorch --------------

Cooldown = collections.namedtuple("Cooldown", "power_W temp_C max_s poll_s settle_s", defaults=(None,))
_DECIMAL = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def parse_cooldown(spec):
    """GPUCHECK_COOLDOWN's rule, as core/src/energy.cpp's parse_cooldown reads it:
    "power_W=120,temp_C=42,max_s=30,settle_s=2" (any of them, any order, at least one limit,
    every value a finite number > 0; max_s 30 by default). Raises ValueError naming the bad part."""
    got = {"power_W": None, "temp_C": None, "max_s": 30.0, "settle_s": None}
    any_limit = False
    for item in spec.split(",") if spec else []:
        key, sep, text = item.partition("=")
        # a plain decimal, as std::from_chars reads it (no sign, no spaces, no "_", no hex)
        v = float(text) if sep and _DECIMAL.fullmatch(text) else math.nan
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"'{item}': expected power_W=, temp_C=, max_s= or settle_s= with a number > 0")
        if key not in got:
            raise ValueError(f"'{key}' is not power_W, temp_C, max_s or settle_s")
        got[key] = v
        any_limit = any_limit or key in ("power_W", "temp_C")
    if not any_limit:
        raise ValueError("no limit (power_W= or temp_C=)")
    return Cooldown(got["power_W"], got["temp_C"], got["max_s"], 0.1, got["settle_s"])


def _power_cooled(rule, power_W):
    """The power part of cooled: under the rule's limit, or no limit, or no reading."""
    return not (rule.power_W is not None and power_W is not None and power_W > rule.power_W)


def cooled(rule, power_W, temp_C):
    """Whether the readings meet every limit of the rule; a reading NVML did not give (None)
    does not hold the wait (energy.cpp's cooled)."""
    if not _power_cooled(rule, power_W):
        return False
    return not (rule.temp_C is not None and temp_C is not None and temp_C > rule.temp_C)


def wait_cooled(rule, read, now, sleep):
    """energy.cpp's wait_cooled: read() -> (power W, temperature C) until cooled(rule, ...), the
    temperature settled (no new low for rule.settle_s, the power under its limit) or rule.max_s
    has passed since the first reading, sleep(rule.poll_s) between readings; now() a clock in
    seconds. (seconds waited, capped, temperature at the last reading, settled)."""
    t0 = now()
    lowest, lowest_at = None, 0.0  # the lowest temperature read, and when (seconds into the wait)
    while True:
        power, temp = read()
        waited = now() - t0
        if temp is not None and (lowest is None or temp < lowest):
            lowest, lowest_at = temp, waited
        done = cooled(rule, power, temp)
        settled = (not done and rule.settle_s is not None and lowest is not None and _power_cooled(rule, power)
                   and waited - lowest_at >= rule.settle_s)
        if done or settled or waited >= rule.max_s:
            return waited, not done and not settled, temp, settled
        sleep(rule.poll_s)


def cooldown_note(waited_s, capped, temp_C, settled=False):
    """The label's note, as the engine writes it (engine_note): " cooldown=1.8s start=41C",
    "(cap)" after the seconds when the limits were not met in time, "(settled)" when the
    temperature settled above its limit first."""
    how = "(cap)" if capped else "(settled)" if settled else ""
    return f" cooldown={waited_s:.1f}s{how} start=" + ("?" if temp_C is None else f"{temp_C}C")


_COOLDOWN_IN_LABEL = re.compile(r"(?:^|\s)cooldown=(\d+(?:\.\d+)?)s(\(cap\)|\(settled\))? start=(?:(\d+)C|\?)")


def cooldown_from_label(label):
    """(seconds waited, capped, start temperature or None) from a row's label, or None."""
    m = _COOLDOWN_IN_LABEL.search(label or "")
    if not m:
        return None
    return float(m.group(1)), m.group(2) == "(cap)", None if m.group(3) is None else int(m.group(3))


def short_kernel_name(name):
    """A demangled kernel name as one word: no leading "void ", no argument list, no spaces.
    benchmarks/kernel_name.cpp's short_name, so that ours (CUPTI's names, demangled) and
    PyTorch's profiler names compare as strings."""
    if name.startswith("void "):
        name = name[5:]
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            if name[i] == ")":
                depth += 1
            elif name[i] == "(":
                depth -= 1
                if depth == 0:
                    if i > 0:
                        name = name[:i]
                    break
    return name.replace(" ", "")


def pick_kernel(events):
    """(name, kernels) of a call from its kernels' (name, duration): the longest-running one
    (the GEMM, not a split-K reduction), the first of equals; kernel_name.cpp's pick. None when
    the call ran no named kernel."""
    best = None
    for name, dur in events:
        if best is None or dur > best[1]:
            best = (name, dur)
    if best is None or not best[0]:
        return None
    return short_kernel_name(best[0]), len(events)


def kernel_label(picked):
    """"kernel=NAME" (" kernels=N" when a call launched more), or "kernel=?": ours' label."""
    if picked is None:
        return "kernel=?"
    name, n = picked
    return f"kernel={name}" + (f" kernels={n}" if n > 1 else "")


_KERNEL_IN_LABEL = re.compile(r"(?:^|\s)kernel=(\S+)")


def kernel_from_label(label):
    """The kernel a row's label names (kernel=NAME), or None (not named, or '?')."""
    m = _KERNEL_IN_LABEL.search(label or "")
    return m.group(1) if m and m.group(1) != "?" else None


# Llama-3's projections as bench_matmul's llm suite names them (benchmarks/cases/matmul.hpp,
# projections()): (N, K) -> what the GEMM is.
LLAMA3 = (("Llama-3 8B", 4096, 32, 8, 128, 14336), ("Llama-3 70B", 8192, 64, 8, 128, 28672))


def projection_of(name):
    """What a GEMM row is: "Llama-3 70B gate/up, 8192 tokens" (a linear row with a projection's N
    and K), "square", or "" (unknown)."""
    p = name.split("/")
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", p[3]) if len(p) == 4 else None
    if not m:
        return ""
    tokens, n, k = (int(x) for x in m.groups())
    if p[1] == "linear":  # a projection at 4096 tokens may be square too (8B's O): it is the projection
        for model, hidden, heads, kv, hd, mlp in LLAMA3:
            for what, nn, kk in (("QKV", (heads + 2 * kv) * hd, hidden), ("O", hidden, hidden),
                                 ("gate/up", 2 * mlp, hidden), ("down", hidden, mlp)):
                if (n, k) == (nn, kk):
                    return f"{model} {what}, {tokens} token{'' if tokens == 1 else 's'}"
    return "square" if tokens == n == k else ""


def spread_pct(values):
    """(max - min) / median in percent over the alternations; None below two values."""
    vals = [v for v in values if v is not None]
    if len(vals) < 2:
        return None
    med = statistics.median(vals)
    return 100.0 * (max(vals) - min(vals)) / med if med else None


_MS_PER_UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def ms_of(result):
    """The median real_time over repetitions in milliseconds (Google Benchmark's time_unit)."""
    vals = [float(e["real_time"]) * _MS_PER_UNIT[e.get("time_unit", "ns")] for e in result["values"]
            if isinstance(e.get("real_time"), (int, float)) and e.get("time_unit", "ns") in _MS_PER_UNIT]
    vals = [v for v in vals if math.isfinite(v)]
    return statistics.median(vals) if vals else None


def _most_common(values):
    vals = [v for v in values if v]
    return collections.Counter(vals).most_common(1)[0][0] if vals else None


def _side(results, name):
    """One side's figures for `name` over the alternations: TFLOP/s, ms, the mean SM clock,
    kernels, cool-downs (cooldown_from_label) and the first skip reason."""
    got = {"tflops": [], "ms": [], "clock": [], "power": [], "kernels": [], "cooldowns": [], "issue_us": [],
           "batch": [], "method": [], "fill": [], "skipped": None}
    for res in results:
        r = res.get(name)
        if r is None:
            continue
        if r["skipped"] is not None:
            got["skipped"] = got["skipped"] or r["skipped"]
            continue
        got["tflops"].append(metric_of(r, "TFLOPS"))
        got["ms"].append(ms_of(r))
        got["clock"].append(metric_of(r, "sm_clock_mean_MHz"))
        got["power"].append(metric_of(r, "power_W"))
        got["issue_us"].append(metric_of(r, "issue_us"))
        got["batch"].append(metric_of(r, "batch"))
        got["method"].append(metric_of(r, "method"))
        got["fill"].append(plateau_fill(name, metric_of(r, "samples"), metric_of(r, "batch"), got["ms"][-1]))
        got["kernels"].append(kernel_from_label(r["label"]))
        got["cooldowns"].append(cooldown_from_label(r["label"]))
    return got


def _min_known(*values):
    vals = [v for v in values if v is not None and math.isfinite(v)]
    return min(vals) if vals else None


def _median(values):
    vals = [v for v in values if v is not None and math.isfinite(v)]
    return statistics.median(vals) if vals else None


def max_clock_of(ctx):
    """The SM clock's maximum a side's context records (sm_clock_max_MHz), or None."""
    try:
        v = float(ctx.get("sm_clock_max_MHz", ""))
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


CAPPED_BELOW = 0.95  # a row is power-capped when a side's mean SM clock is under 95% of the maximum
HOST_BOUND_AT = 0.75  # a side is host-bound when queueing a call takes 75% of the call's time or more


def host_bound_note(who, issue_us, ms):
    """The note for a side whose host could barely queue the calls as fast as the GPU ran them
    (a plateau's samples: issue_us, the median host time to queue a call, at least
    HOST_BOUND_AT of the call's time ms, the faster side's: a starved side's own time holds
    its gaps): its samples may hold idle gaps, so its figure is the host's as much as the
    GPU's. None otherwise or when either is unknown."""
    if issue_us is None or ms is None or not ms > 0 or issue_us < HOST_BOUND_AT * ms * 1e3:
        return None
    return f"host-bound ({who}: queues a call in {issue_us:.1f} us, runs it in {ms * 1e3:.1f})"


IDLE_BELOW = 0.95  # a plateau row's side idled when its counted samples filled less of the window


def plateau_fill(name, samples, batch, ms, window_s=LINEAR_PLATEAU_S):
    """How much of a plateau's counted window (window_s) a row's samples filled: samples x batch
    x ms a call. Counted samples are those that start in the window, so a card kept busy fills
    it (a little over 1); a host that fell behind the queue (readings every sample that took
    longer than a sample: energy.hpp ReadPacer) left it idle between samples, and the row read
    faster for it (the card cooler). Rows timed on one plateau only (F.linear rows of more than
    LINEAR_GROUPS_MAX_TOKENS tokens: a grouped row's samples are its fastest group's); None
    otherwise or when a figure is unknown."""
    tokens = gemm_m(name, "linear")
    if tokens is None or tokens <= LINEAR_GROUPS_MAX_TOKENS:
        return None
    if any(v is None or not math.isfinite(v) or not v > 0 for v in (samples, batch, ms)):
        return None
    return samples * batch * ms / (window_s * 1e3)


def idled(fill):
    """Whether a plateau fill (plateau_fill) says the card idled: known and under IDLE_BELOW."""
    return fill is not None and fill < IDLE_BELOW


def _fill_pct(fill):
    """A fill as a percentage rounded down to 0.1 (no trailing zero), so that a fill under
    IDLE_BELOW never reads as IDLE_BELOW itself: 0.9496 is "94.9%", 0.7 "70%"."""
    return f"{math.floor(1000 * fill + 1e-9) / 10:g}%"


def idle_note(who, fills):
    """The note for a plateau row a side idled on in some run (plateau_fill under IDLE_BELOW):
    the least fill over the runs. None when every known fill is at or over it."""
    low = _min_known(*fills)
    if not idled(low):
        return None
    return f"idle ({who}: its counted samples filled {_fill_pct(low)} of the window)"


def timed_apart_note(ours_batch, torch_batch, ours_method, torch_method):
    """The note for a row the two sides did not time alike: their `method` counters differ
    (a stale side), or their median batches are 25% or more apart (follow_batch's rule), as
    ours' plateau batch of 193 calls against PyTorch's 284 was while ours timed its graph's
    capture (2026-12-03). None when alike or unknown."""
    notes = []
    if ours_method is not None and torch_method is not None and ours_method != torch_method:
        notes.append(f"methods differ (ours {ours_method:g}, PyTorch {torch_method:g})")
    if ours_batch and torch_batch and (ours_batch * 4 >= torch_batch * 5 or torch_batch * 4 >= ours_batch * 5):
        notes.append(f"batches differ (ours {ours_batch:g}, PyTorch {torch_batch:g})")
    return "; ".join(notes) or None


def parity_rows(names, ours_runs, torch_runs, ours_max_MHz=None, torch_max_MHz=None):
    """One row per case of `names` (in order) from N alternations: each run a {name: result}
    of read_results. Medians over the runs; ratio = ours / PyTorch; norm_ratio = ratio x
    PyTorch's clock / ours (the mean SM clocks over the timed samples: the ratio per SM cycle);
    capped when either side's clock is under CAPPED_BELOW of its maximum (the other side's
    where a side has none; None when neither is known); spread = (max - min) / median; the
    start temperature of the bursts (median, where cooled down); the kernel each side ran most
    often; a note where the kernels differ, a side's kernel changed between runs, a cool-down
    hit its cap, or a side has no figure."""
    ours_max_MHz = ours_max_MHz or torch_max_MHz
    torch_max_MHz = torch_max_MHz or ours_max_MHz
    rows = []
    for n in names:
        o, t = _side(ours_runs, n), _side(torch_runs, n)
        ov, tv = _median(o["tflops"]), _median(t["tflops"])
        ok, tk = _most_common(o["kernels"]), _most_common(t["kernels"])
        oc, tc = _median(o["clock"]), _median(t["clock"])
        notes = []
        for who, side, val in (("ours", o, ov), ("PyTorch", t, tv)):
            if val is None:
                notes.append(f"skipped ({who}): {side['skipped']}" if side["skipped"] else f"no figure ({who})")
            elif len(set(k for k in side["kernels"] if k)) > 1:
                notes.append(f"kernel changed between runs ({who})")
            if any(c and c[1] for c in side["cooldowns"]):
                notes.append(f"cool-down hit its cap ({who})")
            fed = host_bound_note(who, _median(side["issue_us"]), _min_known(_median(o["ms"]), _median(t["ms"])))
            if fed:
                notes.append(fed)
            idle = idle_note(who, side["fill"])
            if idle:
                notes.append(idle)
        if ov is not None and tv is not None:
            apart = timed_apart_note(_median(o["batch"]), _median(t["batch"]), _median(o["method"]),
                                     _median(t["method"]))
            if apart:
                notes.append(apart)
            if ok is None or tk is None:
                notes.append("kernel unknown (" + ("ours" if ok is None else "PyTorch") + ")")
            elif ok != tk:
                notes.append("kernels differ")
        ratio = ov / tv if ov is not None and tv else None
        capped = None
        if oc is not None and tc is not None and ours_max_MHz:
            capped = oc < CAPPED_BELOW * ours_max_MHz or tc < CAPPED_BELOW * torch_max_MHz
        rows.append({
            "case": n, "what": projection_of(n), "ms": _median(o["ms"]),
            "ours": ov, "torch": tv, "ratio": ratio,
            "norm_ratio": ratio * tc / oc if ratio is not None and oc and tc else None,
            "ours_clock": oc, "torch_clock": tc, "capped": capped,
            "ours_power": _median(o["power"]), "torch_power": _median(t["power"]),
            "ours_spread": spread_pct(o["tflops"]), "torch_spread": spread_pct(t["tflops"]),
            "ours_start_C": _median([c[2] for c in o["cooldowns"] if c]),
            "torch_start_C": _median([c[2] for c in t["cooldowns"] if c]),
            "ours_kernel": ok, "torch_kernel": tk, "runs": (len(o["tflops"]), len(t["tflops"])),
            "least_fill": (_min_known(*o["fill"]), _min_known(*t["fill"])),
            "note": "; ".join(notes),
        })
    return rows


def _norm_text(r):
    return "clock-normalised " + ("?" if r["norm_ratio"] is None else f"{r['norm_ratio']:.3f}")


def _listed(rows, text):
    return ", ".join(f"{r['case']} ({text(r)})" for r in rows)


def parity_criteria(rows, same=(0.98, 1.02), differ_floor=0.98, spread_limit=3.0, long_ms=1.0):
    """issue 40's must-show criteria over the rows: [(passed, line)], one per criterion, each
    line naming the rows that miss it. Same kernel: the median ratio in `same`; kernels differ:
    at `differ_floor` or more; rows of `long_ms` or more: both sides' spread under
    `spread_limit` percent (a spread that cannot be known, from fewer than two runs of a side,
    misses it); every row with a figure on both sides names both kernels (a side that could not
    name its kernel, e.g. PyTorch's run cut short before its profiler pass, leaves a row that
    neither ratio criterion can judge). A criterion with no row to judge passes and says so."""
    timed = [r for r in rows if r["ratio"] is not None]
    both = [r for r in timed if r["ours_kernel"] and r["torch_kernel"]]
    unnamed = [r for r in timed if not (r["ours_kernel"] and r["torch_kernel"])]
    alike = [r for r in both if r["ours_kernel"] == r["torch_kernel"]]
    differ = [r for r in both if r["ours_kernel"] != r["torch_kernel"]]
    long_rows = [r for r in rows if r["ms"] is not None and r["ms"] >= long_ms]
    out_same = [r for r in alike if not same[0] <= r["ratio"] <= same[1]]
    out_differ = [r for r in differ if r["ratio"] < differ_floor]

    def steady(r):
        return all(s is not None and s < spread_limit for s in (r["ours_spread"], r["torch_spread"]))

    def spreads(r):
        return ", ".join(f"{who} " + ("unknown" if s is None else f"{s:.1f}%")
                         for who, s in (("ours", r["ours_spread"]), ("PyTorch", r["torch_spread"])))
    unsteady = [r for r in long_rows if not steady(r)]
    crit = [
        (alike, out_same, f"same kernel on both sides, median ours / PyTorch in [{same[0]:g}, {same[1]:g}]",
         "outside", lambda r: f"{r['ratio']:.3f}"),
        (differ, out_differ, f"kernels differ, median ours / PyTorch >= {differ_floor:g}", "below",
         lambda r: f"{r['ratio']:.3f}"),
        (long_rows, unsteady, f"rows of {long_ms:g} ms or more, spread across the runs under {spread_limit:g}% on "
         "both sides", "missed", spreads),
        (timed, unnamed, "rows with both figures, both kernels named", "unnamed",
         lambda r: "ours" if not r["ours_kernel"] and r["torch_kernel"]
         else "PyTorch" if r["ours_kernel"] else "both"),
    ]
    out = []
    for judged, missed, what, word, text in crit:
        if not judged:
            out.append((True, f"PASS {what}: no such row."))
            continue
        line = f"{'FAIL' if missed else 'PASS'} {what}: {len(judged) - len(missed)} of {len(judged)} rows"
        line += f"; {word}: {_listed(missed, text)}." if missed else "."
        out.append((not missed, line))
    return out


def parity_summary(rows, **limits):
    """The lines under the table: a PASS/FAIL line per criterion (parity_criteria), then the
    rows not compared (with why), the power-capped rows, and the plateau rows a side idled on
    (plateau_fill under IDLE_BELOW in some run)."""
    lines = [line for _, line in parity_criteria(rows, **limits)]
    compared = {r["case"] for r in rows if r["ratio"] is not None and r["ours_kernel"] and r["torch_kernel"]}
    left = [r for r in rows if r["case"] not in compared]
    lines.append(f"Not compared: {len(left)} of {len(rows)} rows" +
                 (f": {_listed(left, lambda r: r['note'] or 'no figure')}." if left else "."))
    capped = [r for r in rows if r["capped"]]
    known = [r for r in rows if r["capped"] is not None]
    lines.append(f"Power-capped (a side's mean SM clock under {100 * CAPPED_BELOW:g}% of its maximum): "
                 f"{len(capped)} of {len(known)} rows with both clocks known" +
                 (f": {_listed(capped, _norm_text)}."
                  if capped else "."))
    fills = [r for r in rows if any(f is not None for f in r.get("least_fill") or ())]
    idle = [r for r in fills if any(idled(f) for f in r["least_fill"])]
    lines.append(f"Idle (a side's counted samples filled under {100 * IDLE_BELOW:g}% of the plateau's window in some "
                 f"run): {len(idle)} of {len(fills)} plateau rows" +
                 (f": {_listed(idle, _fill_text)}." if idle else "."))
    return lines


def _fill_text(r):
    o, t = r["least_fill"]
    return ", ".join(f"{who} {_fill_pct(f)}" for who, f in (("ours", o), ("PyTorch", t)) if idled(f))


PARITY_COLUMNS = ("case", "what", "ms", "ours", "torch", "ratio", "norm_ratio", "ours_clock", "torch_clock", "capped",
                  "ours_power", "torch_power", "ours_spread", "torch_spread", "ours_start_C", "torch_start_C",
                  "ours_kernel", "torch_kernel", "note")


def parity_csv(rows):
    """The table as CSV text (numbers unrounded, empty where none)."""
    import csv
    import io
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(PARITY_COLUMNS)
    for r in rows:
        w.writerow(["" if r[c] is None else r[c] for c in PARITY_COLUMNS])
    return buf.getvalue()


def render_parity(rows, runs, ours_ctx, torch_ctx, cooldown=None):
    """The Markdown table and its summary lines; cooldown: the GPUCHECK_COOLDOWN rule both
    sides ran under (None: none)."""
    def num(v, fmt):
        return "" if v is None else format(v, fmt)

    def pct(v):
        return "" if v is None else f"{v:.1f}%"

    def start(r):
        if r["ours_start_C"] is None and r["torch_start_C"] is None:
            return ""
        return f"{num(r['ours_start_C'], '.0f') or '?'} / {num(r['torch_start_C'], '.0f') or '?'}"

    def power(r):
        if r["ours_power"] is None and r["torch_power"] is None:
            return ""
        return f"{num(r['ours_power'], '.0f') or '?'} / {num(r['torch_power'], '.0f') or '?'}"
    lines = [f"# GEMMs: gpucheck (bench_matmul) beside PyTorch, {runs} alternation{'' if runs == 1 else 's'}", "",
             "Both sides timed alike. The squares and the F.linear rows of at most "
             f"{LINEAR_WARM_MAX_TOKENS} tokens: one power burst (0.3 s idle, then " +
             (f"the card cooled to GPUCHECK_COOLDOWN={cooldown}, " if cooldown else "") +
             f"5 warm-up calls (F.linear rows: at least {LINEAR_WARMUP_S:g} s of them), one call sizing the "
             "batch, 20 held samples, the median). F.linear rows of more tokens: the power limit's plateau (0.3 s "
             "idle, no cool-down, 5 warm-up calls, one call sizing the batch, then samples of at least "
             f"{PLATEAU_SAMPLE_MS:g} ms, each one CUDA graph replay of its calls, queued back to back so that the card "
             f"never idles: {LINEAR_PLATEAU_LOAD_S:g} s "
             f"of them not counted, then {LINEAR_PLATEAU_S:g} s counted, the median). F.linear rows of at most "
             f"{LINEAR_GROUPS_MAX_TOKENS} tokens: {LINEAR_GROUPS} such bursts or plateaus, each after a write and free "
             f"of {REDRAW_BYTES >> 20} MiB of device memory, the fastest. Every F.linear row "
             "(matmul/linear) rotates its operands over copies that keep each out of the L2 between uses. "
             "Figures are medians over "
             "the alternations, spread = (max - min) / median across them; SM MHz: the mean NVML reading over the "
             "timed samples (median over the alternations); clock-normalised = ours / PyTorch x PyTorch's MHz / "
             f"ours; capped: a side's SM MHz under {100 * CAPPED_BELOW:g}% of its maximum; W: the mean board power "
             "over the timed samples (the energy counter; median over the alternations); start °C: the "
             "temperature each side's bursts started at; ours / PyTorch > 1: ours is faster. GPU: " +
             str(ours_ctx.get("gpu_name") or torch_ctx.get("gpu_name") or "?") +
             f"; cuBLAS ours {ours_ctx.get('cublas_version') or '?'}, PyTorch {torch_ctx.get('cublas_version') or '?'}"
             f" ({torch_ctx.get('library') or 'torch ?'}" +
             (f", its GEMMs through {torch_ctx['blas_library']}" if torch_ctx.get("blas_library") not in (None, "?")
              else "") + ").", "",
             "| case | GEMM | ms | ours TFLOP/s | PyTorch TFLOP/s | ours / PyTorch | clock-normalised | SM MHz ours "
             "| SM MHz PyTorch | capped | W ours / PyTorch | spread ours | spread PyTorch | start °C ours / PyTorch "
             "| kernel ours | kernel PyTorch | note |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- "
             "| --- | --- |"]
    for r in rows:
        tk = r["torch_kernel"] or ""
        if tk and tk == r["ours_kernel"]:
            tk = "(same)"
        lines.append(f"| {r['case']} | {r['what']} | {num(r['ms'], '.3f')} | {num(r['ours'], '.1f')} | "
                     f"{num(r['torch'], '.1f')} | {num(r['ratio'], '.3f')} | {num(r['norm_ratio'], '.3f')} | "
                     f"{num(r['ours_clock'], '.0f')} | {num(r['torch_clock'], '.0f')} | "
                     f"{'capped' if r['capped'] else ''} | {power(r)} | {pct(r['ours_spread'])} | "
                     f"{pct(r['torch_spread'])} | "
                     f"{start(r)} | {_cell(r['ours_kernel'] or '', 90)} | {_cell(tk, 90)} | {_cell(r['note'])} |")
    return lines + [""] + parity_summary(rows) + [""]


def read_parity(out_dir):
    """OUT/run<i>/ours-*.json and OUT/run<i>/torch.json (ci/gemm_parity.sh), OUT/cases.txt and
    OUT/cooldown.txt (the GPUCHECK_COOLDOWN rule, when there was one) -> a dict: rows
    (parity_rows), runs (how many), ours_ctx, torch_ctx, cooldown, problems (a run's
    unreadable file, left out)."""
    with open(os.path.join(out_dir, "cases.txt")) as f:
        names = [l.strip() for l in f if l.strip()]
    ours_runs, torch_runs, problems, octx, tctx = [], [], [], {}, {}
    runs = sorted((d for d in os.listdir(out_dir) if re.fullmatch(r"run\d+", d)), key=lambda d: int(d[3:]))
    for d in runs:
        path = os.path.join(out_dir, d)
        merged = {}
        ours_files = sorted(x for x in os.listdir(path) if x.startswith("ours-") and x.endswith(".json"))
        if not ours_files:
            problems.append(f"{d}: no ours-*.json")
        for fn in ours_files:
            try:
                ctx, res = read_results(os.path.join(path, fn))
                octx = octx or ctx
                merged.update(res)
            except (OSError, ValueError) as e:
                problems.append(f"{d}/{fn}: {e}")
        ours_runs.append(merged)
        try:
            ctx, res = read_results(os.path.join(path, "torch.json"))
            tctx = tctx or ctx
            torch_runs.append(res)
        except (OSError, ValueError) as e:
            problems.append(f"{d}/torch.json: {e}")
            torch_runs.append({})
    rows = parity_rows(names, ours_runs, torch_runs, max_clock_of(octx), max_clock_of(tctx))
    try:  # the rule ci/gemm_parity.sh gave both sides
        with open(os.path.join(out_dir, "cooldown.txt")) as f:
            cooldown = f.read().strip() or None
    except OSError:
        cooldown = None
    return {"rows": rows, "runs": len(runs), "ours_ctx": octx, "torch_ctx": tctx, "cooldown": cooldown,
            "problems": problems}


def write_parity(out_dir):
    """read_parity(out_dir) -> OUT/parity.md and OUT/parity.csv; returns the Markdown. A run's
    unreadable file is left out and said under the table."""
    p = read_parity(out_dir)
    lines = render_parity(p["rows"], p["runs"], p["ours_ctx"], p["torch_ctx"], p["cooldown"])
    if p["problems"]:
        lines += ["Not read: " + "; ".join(p["problems"]) + ".", ""]
    text = "\n".join(lines)
    with open(os.path.join(out_dir, "parity.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "parity.csv"), "w") as f:
        f.write(parity_csv(p["rows"]))
    return text


PARITY_NUMBERS = ("ms", "ours", "torch", "ratio", "norm_ratio", "ours_clock", "torch_clock", "ours_power", "torch_power",
                  "ours_spread", "torch_spread", "ours_start_C", "torch_start_C")


def read_parity_csv(path):
    """A parity.csv written by write_parity (kept, e.g., from an earlier session's machine) ->
    read_parity's dict: its rows, the alternations unknown (None), the machine named by the
    file's name. ValueError for a file that is not one."""
    import csv
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != PARITY_COLUMNS:
            raise ValueError(f"{path}: not a parity.csv (its header is not write_parity's)")
        rows = []
        for line in reader:
            r = {c: (line[c] if line[c] != "" else None) for c in PARITY_COLUMNS}
            try:
                for c in PARITY_NUMBERS:
                    r[c] = None if r[c] is None else float(r[c])
            except ValueError:
                raise ValueError(f"{path}: row {r['case']}: a figure that is not a number") from None
            r["capped"] = None if r["capped"] is None else r["capped"] == "True"
            rows.append(r)
    name = os.path.splitext(os.path.basename(path))[0]
    return {"rows": rows, "runs": None, "ours_ctx": {"gpu_uuid": name}, "torch_ctx": {}, "cooldown": None,
            "problems": []}


def parity_machines(dirs):
    """Several machines' ci/gemm_parity.sh folders (or their parity.csv, kept from earlier)
    side by side (issue 40 asks for 2): per row, each machine's median ratio ours / PyTorch
    and spread (ours / PyTorch, %), whether the kernels matched; then each machine's criteria
    (parity_criteria), and a criterion over all of them, passed where it passed on every
    machine. Returns the Markdown lines."""
    machines, seen = [], {}
    for d in dirs:
        # A folder and the parity.csv in it are one machine: twice, it would count twice over all.
        real = os.path.realpath(d)
        key = os.path.dirname(real) if os.path.isfile(real) and os.path.basename(real) == "parity.csv" else real
        if key in seen:
            raise ValueError(f"{d}: the same machine as {seen[key]}, given twice")
        seen[key] = d
        p = read_parity_csv(d) if os.path.isfile(d) else read_parity(d)
        label = p["ours_ctx"].get("gpu_uuid") or os.path.basename(os.path.normpath(d))
        machines.append((label[:12], d, p))
    by_case = [{r["case"]: r for r in p["rows"]} for _, _, p in machines]
    cases = list(dict.fromkeys(r["case"] for _, _, p in machines for r in p["rows"]))

    def pct(v):
        return "?" if v is None else f"{v:.1f}"

    def kernels(r):
        if not (r["ours_kernel"] and r["torch_kernel"]):
            return "unnamed"
        return "same" if r["ours_kernel"] == r["torch_kernel"] else "differ"
    head = "| case | " + " | ".join(f"{m} ratio | {m} spread % | {m} kernels" for m, _, _ in machines) + " |"
    lines = [f"# ours / PyTorch on {len(machines)} machines", "", head, "|---|" + "---|---|---|" * len(machines)]
    for case in cases:
        cells = []
        for rows in by_case:
            r = rows.get(case)
            if r is None or r["ratio"] is None:
                cells += ["-", "-", "-"]
                continue
            cells += [f"{r['ratio']:.3f}", f"{pct(r['ours_spread'])} / {pct(r['torch_spread'])}", kernels(r)]
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    lines.append("")
    verdicts = []
    for m, d, p in machines:
        crit = parity_criteria(p["rows"])
        verdicts.append(crit)
        runs = "alternations not kept" if p["runs"] is None else f"{p['runs']} alternations"
        lines += [f"## {m} ({d}, {runs})", ""] + [line for _, line in crit]
        if p["problems"]:
            lines.append("Not read: " + "; ".join(p["problems"]) + ".")
        lines.append("")
    lines += [f"## All {len(machines)} machines", ""]
    for i, (_, line) in enumerate(verdicts[0] if verdicts else []):
        what = line.split(": ", 1)[0].split(" ", 1)[1]  # "PASS what: ...": no criterion's text holds ": "
        failed = [m for (m, _, _), crit in zip(machines, verdicts) if not crit[i][0]]
        lines.append(f"{'FAIL' if failed else 'PASS'} {what}" + (f": fails on {', '.join(failed)}." if failed else
                                                                  f": on all {len(machines)}."))
    return lines


# ---- Timing (torch) --------------------------------------------------------------------------

def per_call_ms(fn, iters=50, warm=5):
    """One call at a time: one call between events, synchronised, median."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


class Hold:
    """Spin-kernel hold calibrated once: milliseconds per million cycles of torch.cuda._sleep."""

    def __init__(self):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1_000_000)  # warm the kernel
        torch.cuda.synchronize()
        ms = []
        for _ in range(5):
            start.record()
            torch.cuda._sleep(1_000_000)
            end.record()
            end.synchronize()
            ms.append(start.elapsed_time(end))
        self.ms_per_mcycle = min(ms)

    def cycles(self, ms):
        return int(ms / self.ms_per_mcycle * 1e6) + 1


def held_ms(hold, fn, calls=CALLS, samples=SAMPLES, warm=3):
    """gpucheck's method: the stream is held while `calls` calls are queued; device ms per call.

    The hold lasts twice the host's measured issue time; a sample whose issue outlasted the
    hold is not used (the GPU would have idled inside the events) and the hold is doubled.
    """
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    issue_ms = (time.perf_counter() - t0) * 1e3
    torch.cuda.synchronize()
    hold_ms = max(2.0 * issue_ms, 0.5)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times, tries = [], 0
    while len(times) < samples:
        tries += 1
        if tries > 4 * samples:
            raise RuntimeError("could not queue the calls inside the hold (host too slow?)")
        t0 = time.perf_counter()
        torch.cuda._sleep(hold.cycles(hold_ms))
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        issued_ms = (time.perf_counter() - t0) * 1e3
        end.synchronize()
        if issued_ms > 0.8 * hold_ms:
            hold_ms *= 2
            continue
        times.append(start.elapsed_time(end) / calls)
    return statistics.median(times)


class HeldSampler:
    """Held samples whose hold is checked, not assumed: when the last call and the stop event
    have been queued, the start event (recorded behind the spin kernel) must not have completed
    yet, i.e. the spin kernel was still holding the stream and no call started before all were
    queued. Otherwise the sample is not used (the GPU would have waited for Python inside the
    events) and the hold is doubled. gpucheck's own hold is a flag the host releases after the
    stop event (benchmarks/harness/src/engine.cpp, StreamHold), so it always covers the queue.
    graph: each sample's calls are one CUDA graph replay (MeasureOptions::graph in held mode,
    as bench_matmul's decode F.linear rows set it), captured once per batch size before the
    hold; the hold then covers one replay's issue, timed on the untimed replay after capture."""

    def __init__(self, hold, fn, issue_s_per_call, probe=None, min_hold_ms=0.5, graph=False):
        self.hold, self.fn, self.probe = hold, fn, probe  # probe(): called while a sample's calls run
        self.min_hold_ms = min_hold_ms
        self.issue_s = max(issue_s_per_call, 5e-6)
        self.graph, self.captured, self.captured_calls, self.replay_s = graph, None, 0, 0.0
        self.factor = 3.0  # hold = factor x the calls' measured issue time (at least 0.5 ms)
        self.retries = 0
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def _capture(self, calls):
        if self.captured_calls == calls:
            return
        self.captured, self.captured_calls = capture_calls(self.fn, calls), calls
        t0 = time.perf_counter()
        self.captured.replay()  # untimed: its issue time sizes the hold
        self.replay_s = max(time.perf_counter() - t0, 5e-6)
        torch.cuda.current_stream().synchronize()

    def sample_ms(self, calls):
        if self.graph:
            self._capture(calls)
        for _ in range(12):
            issue_s = self.replay_s if self.graph else calls * self.issue_s
            hold_ms = min(2000.0, max(self.min_hold_ms, self.factor * issue_s * 1e3))  # ours: 2 s
            torch.cuda._sleep(self.hold.cycles(hold_ms))
            self.start.record()
            if self.graph:
                self.captured.replay()
            else:
                for _ in range(calls):
                    self.fn()
            self.end.record()
            covered = not self.start.query()
            if self.probe and covered:
                self.probe()
            self.end.synchronize()
            if covered:
                return self.start.elapsed_time(self.end)
            self.retries += 1
            self.factor *= 2
        raise RuntimeError("the calls could not be queued inside the hold in 12 tries (host too slow?)")


def capture_calls(fn, calls):
    """A CUDA graph of `calls` calls of fn, as MeasureOptions::graph captures one: on the stream
    the samples' events and replays run on (the current stream), as ours captures on the stream
    it replays on (harness::capture_exec), warmed by one call first, as PyTorch asks; captured
    before any sample's events, so that the capture's host time is never timed
    (torch.cuda.graph waits for the device). Captured on a side stream of its own and replayed
    on the samples' stream, as torch.cuda.graph's default is, PyTorch's rows read 0.3-0.6 us a
    call slower than ours, the same kernel at the same clock and power: fp8 16x4096x4096 1.043
    ours / PyTorch, bf16 128x6144x4096 1.023, bf16 128x4096x4096 1.026; captured here, 0.992,
    1.008 and 0.995 (GPU-681a5772, 2026-12-04). Before that, a new side stream for each
    capture had read the split-K decode rows 5-6% slower still."""
    here = torch.cuda.current_stream()
    fn()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=here):
        for _ in range(calls):
            fn()
    return g


class QueuedSampler:
    """TimingMode::queued as benchmarks/harness/src/engine.cpp's GpuSource runs it (a power
    plateau's samples): events around each batch on a stream kept busy, two samples in flight;
    the oldest is waited for only once the next has been queued behind it, so the card never
    idles between samples. A batch that changes waits for the old sample and starts afresh.
    graph: each sample's calls are one CUDA graph, captured once per batch size and replayed
    (MeasureOptions::graph, as power_plateau sets it): Python's ~12 us a call to queue an
    F.linear no longer bounds a 15 us call. probe(), when set, runs while a sample's calls run,
    when its ReadPacer says it is due (every second sample or so)."""

    class _Slot:
        def __init__(self):
            self.start = torch.cuda.Event(enable_timing=True)
            self.stop = torch.cuda.Event(enable_timing=True)
            self.calls, self.pending = 0, False

    def __init__(self, fn, probe=None, graph=False):
        self.fn, self.probe, self.graph = fn, probe, graph
        self.pacer = ReadPacer()  # probe() when due, as the engine's read_while_running
        self.slots, self.oldest = [self._Slot(), self._Slot()], 0
        self.issue_s = []  # host time per call to queue each sample's calls
        self.captured, self.captured_calls = None, 0

    def _calls(self, calls):
        for _ in range(calls):
            self.fn()

    def _enqueue(self, slot, calls):
        if self.graph and self.captured_calls != calls:  # captured once per batch size
            self.captured, self.captured_calls = capture_calls(self.fn, calls), calls
        t0 = time.perf_counter()
        slot.start.record()
        if self.graph:
            self.captured.replay()
        else:
            self._calls(calls)
        slot.stop.record()
        self.issue_s.append((time.perf_counter() - t0) / calls)
        slot.calls, slot.pending = calls, True

    def sample_ms(self, calls):
        old = self.slots[self.oldest]
        if old.pending and old.calls != calls:
            old.stop.synchronize()
            old.pending = False
        if not old.pending:
            self._enqueue(old, calls)
        self._enqueue(self.slots[1 - self.oldest], calls)
        if self.probe:
            t0 = time.perf_counter()
            if self.pacer.due(t0):
                self.probe()
                self.pacer.took(t0, time.perf_counter())
        old.stop.synchronize()
        old.pending = False
        self.oldest = 1 - self.oldest
        return old.start.elapsed_time(old.stop)

    def drain(self):
        torch.cuda.current_stream().synchronize()
        for slot in self.slots:
            slot.pending = False


def plateau_reads_clock(k):
    """energy.hpp's plateau_reads_clock: the k-th of a plateau's paced readings (from 0) reads
    the clock besides the energy counter, every second one from the first."""
    return k % 2 == 0


def probed(probe, energy):
    """What runs during a plateau's counted sample while the queue runs, when its ReadPacer says
    it is due, as the engine's read_while_running: the energy window's read each time and
    probe() (the clock) at every second one (plateau_reads_clock), the counter's steps wanting
    readings close together (about 4 ms of host a reading on an H200; between held samples it
    would idle the card that much longer, so a burst reads the counter at its ends only);
    probe alone without an energy window; None for neither. Made once a window: it counts."""
    if energy is None:
        return probe
    taken = [0]

    def both():
        if probe is not None and plateau_reads_clock(taken[0]):
            probe()
        taken[0] += 1
        energy.read()
    return both


def burst_ms(hold, fn, samples=20, warmup_calls=5, min_sample_ms=0.5, max_batch=64, settle_s=0.3, probe=None,
             cool_down=None, min_hold_ms=0.5, warmup_s=0.0, plateau=None, graph=False, batch_turns=1,
             before_warmup=None, energy=None):
    """gpucheck's power burst (harness::power_burst), step by step as the engine runs it for
    bench_matmul's cublaslt and bench_attention's cases (engine.cpp measure(), core/src/
    measure.cpp run_sampling()): the device idle settle_s; warmup_calls untimed calls, each
    waited for; one held call decides the batch (choose_batch: enough calls for a sample of
    min_sample_ms, at most 64); then exactly `samples` held samples of that batch; the median
    per call. No L2 flush and no CUDA graph, as ours. Returns (ms per call, batch, retries,
    the samples' cv in percent, the samples counted, and on a plateau the host's median time
    to queue a call in microseconds, else None). probe(), when given, runs once per timed sample while its
    calls run (the SM clock, as the engine reads it during samples). cool_down(), when given, runs
    after the settle (the engine's GPUCHECK_COOLDOWN wait). min_hold_ms: the spin kernel's least
    hold before a sample; the card idles under it, so parity lowers it towards ours (whose hold
    ends as soon as the calls are queued). warmup_s: the warm-up goes on, call by call, until
    it has lasted that long too (at most 1000 calls), as run_sampling's.
    plateau=(load_s, window_s): harness::power_plateau instead of the held samples: the batch
    sized from one queued call for PLATEAU_SAMPLE_MS (at most PLATEAU_MAX_BATCH calls), then
    queued samples (QueuedSampler, each a CUDA graph replay) for load_s + window_s, those that start in the first load_s
    run but are not counted nor probed (plateau_next), the batch following their time
    (follow_batch); pass no cool_down with it (ours waits for none). graph: the held samples are
    CUDA graph replays too (HeldSampler's graph; the plateau's always are). batch_turns: every
    batch a whole number of them (whole_turns), the copies a case's calls rotate over.
    before_warmup(), when given, runs after the settle and the cool-down, before the warm-up
    (redraw_memory_state: the engine's groups). energy (an EnergyWindow), when given, is
    started and stopped around the timed samples and, on a plateau, read during counted samples
    while the queue runs, as paced (probed, ReadPacer), as the engine's record_power.
    A burst because a 600+ TFLOP/s kernel draws past the power limit within tens of
    milliseconds: timed back to back instead, it reads 5-7% lower after the first samples."""
    torch.cuda.synchronize()
    time.sleep(settle_s)
    if cool_down is not None:
        cool_down()
    if before_warmup is not None:
        before_warmup()
    stream = torch.cuda.current_stream()
    issue = []
    w0 = time.perf_counter()
    while len(issue) < 1000 and (len(issue) < warmup_calls or time.perf_counter() - w0 < warmup_s):
        t0 = time.perf_counter()
        fn()
        issue.append(time.perf_counter() - t0)
        stream.synchronize()
    if plateau is None:
        sampler = HeldSampler(hold, fn, max(issue[1:] or issue), min_hold_ms=min_hold_ms,  # the first call may initialise
                              graph=graph)
        one_ms = sampler.sample_ms(1)
        batch = whole_turns(choose_batch(one_ms / 1e3, min_sample_ms / 1e3, 1, max_batch), batch_turns, max_batch)
        sampler.probe = probe  # no energy reading between held samples: engine.cpp's power_over says why
        if energy is not None:
            energy.start()
        times = [sampler.sample_ms(batch) / batch for _ in range(samples)]
        if energy is not None:
            energy.stop()
        retries, issue_us = sampler.retries, None
    else:
        queued = QueuedSampler(fn, graph=True)
        one_ms = queued.sample_ms(1)
        batch = whole_turns(choose_batch(one_ms / 1e3, PLATEAU_SAMPLE_MS / 1e3, 1, PLATEAU_MAX_BATCH), batch_turns,
                            PLATEAU_MAX_BATCH)
        times, t_start, retries = [], time.perf_counter(), 0
        counted_probe = probed(probe, energy)  # one a window: it alternates the clock
        while (step := plateau_next(time.perf_counter() - t_start, len(times), *plateau)) != "stop":
            first = step == "count" and queued.probe is None  # the counted samples start: counting_starts
            if first:
                queued.pacer.reset()
            queued.probe = counted_probe if step == "count" else None
            if step == "count" and energy is not None:
                t0 = time.perf_counter()
                energy.start()
                if first:  # the window's first reading is paced as the others
                    queued.pacer.took(t0, time.perf_counter())
            ms = queued.sample_ms(batch) / batch
            if step == "count":
                times.append(ms)
            else:  # the load: the batch follows the steady call time
                batch = whole_turns(follow_batch(batch, ms / 1e3, PLATEAU_SAMPLE_MS / 1e3, 1, PLATEAU_MAX_BATCH),
                                    batch_turns, PLATEAU_MAX_BATCH)
        queued.drain()
        if energy is not None:
            energy.stop()
        issue_us = statistics.median(queued.issue_s) * 1e6
    cv = 100.0 * statistics.stdev(times) / statistics.mean(times) if len(times) > 1 else 0.0
    return statistics.median(times), batch, retries, cv, len(times), issue_us


class _Driver:
    """The CUDA driver's calls redraw_memory_state makes (libcuda.so.1, through ctypes), loaded
    once: the same calls cudaMalloc, cudaMemsetAsync, cudaStreamSynchronize and cudaFree make
    for ours, past PyTorch's caching allocator."""
    lib = None

    @classmethod
    def get(cls):
        if cls.lib is None:
            import ctypes
            lib = ctypes.CDLL("libcuda.so.1")
            u64, size, ptr = ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p
            for fn, args in (("cuMemAlloc_v2", [ctypes.POINTER(u64), size]),
                             ("cuMemsetD8Async", [u64, ctypes.c_ubyte, size, ptr]),
                             ("cuStreamSynchronize", [ptr]), ("cuMemFree_v2", [u64]),
                             ("cuGetErrorName", [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)])):
                getattr(lib, fn).argtypes = args
                getattr(lib, fn).restype = ctypes.c_int
            cls.lib = lib
        return cls.lib

    @classmethod
    def check(cls, what, rc):
        if rc != 0:
            import ctypes
            name = ctypes.c_char_p()
            cls.get().cuGetErrorName(rc, ctypes.byref(name))
            raise RuntimeError(f"{what}: {(name.value or b'CUresult %d' % rc).decode()}")


def redraw_memory_state():
    """harness::redraw_memory_state: a write and a free of REDRAW_BYTES of device memory,
    waited for, through the driver as ours (cuMemAlloc, cuMemsetD8Async on the current stream,
    cuStreamSynchronize, cuMemFree), after PyTorch's allocator returned its cached blocks
    (ours keeps none): its own allocate, fill_ and empty_cache left the fp16 16x10240x8192 row's
    5 groups at one level in 3 of 3 processes, where ours found a level 4-5% faster in each
    (an H200, 2026-12-04)."""
    import ctypes
    torch.cuda.empty_cache()
    lib, check = _Driver.get(), _Driver.check
    scratch = ctypes.c_uint64()
    check("cuMemAlloc", lib.cuMemAlloc_v2(ctypes.byref(scratch), REDRAW_BYTES))
    try:
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        check("cuMemsetD8Async", lib.cuMemsetD8Async(scratch.value, 1, REDRAW_BYTES, stream))
        check("cuStreamSynchronize", lib.cuStreamSynchronize(stream))
    finally:
        check("cuMemFree", lib.cuMemFree_v2(scratch.value))


def old_burst_ms(hold, fn, samples=20, min_sample_ms=0.5, max_calls=64):
    """This script's burst before it followed the engine step by step, kept to measure what the
    change made (gemm_diagnostics): 0.3 s idle, the batch sized from 5 unheld calls (their
    time includes PyTorch's dispatch), then held_ms: a hold of twice an unheld batch's issue
    time, from the cycle calibration, checked against the host's clock only."""
    torch.cuda.synchronize()
    time.sleep(0.3)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        fn()
    end.record()
    end.synchronize()
    one_ms = start.elapsed_time(end) / 5
    calls = max(1, min(max_calls, math.ceil(min_sample_ms / one_ms))) if one_ms > 0 else max_calls
    return held_ms(hold, fn, calls=calls, samples=samples, warm=0)


_NOT_A_KERNEL = re.compile(r"^(Memset \(|Memcpy )")


def device_kernels(events):
    """The kernels among torch.profiler's device events, as (name, us): a memset or a copy
    (Kineto names them "Memset (Device)", "Memcpy DtoD (Device -> Device)") is not a kernel,
    as CUPTI's kernel records, which ours counts (kernel_name.cpp), hold none."""
    return [(e.name, e.time_range.elapsed_us()) for e in events
            if str(e.device_type).endswith("CUDA") and not _NOT_A_KERNEL.match(e.name)]


def kernel_census(fn, calls=4):
    """(kernels per call, {kernel name: count}) of `calls` calls, from torch.profiler; None
    when the profiler is unavailable. Only once every row is timed (profile_after)."""
    try:
        from torch.profiler import profile, ProfilerActivity
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
        names = collections.Counter(name for name, _ in device_kernels(prof.events()))
        return (sum(names.values()) / calls, dict(names)) if names else None
    except Exception as e:  # a diagnostic: never the reason a case fails
        print(f"  kernel census unavailable ({e.__class__.__name__}: {str(e)[:80]})", file=sys.stderr)
        return None


def kernel_of(fn):
    """(name, kernels) of one untimed call from torch.profiler, as pick_kernel chooses it
    (bench_matmul's label names its kernel the same way, from CUPTI); None when the profiler
    is unavailable or saw no kernel."""
    try:
        from torch.profiler import profile, ProfilerActivity
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return pick_kernel(device_kernels(prof.events()))
    except Exception as e:  # a label: never the reason a case fails
        print(f"  kernel name unavailable ({e.__class__.__name__}: {str(e)[:80]})", file=sys.stderr)
        return None


class SmClock:
    """NVML's SM clock of the GPU torch runs on, through libnvidia-ml (the library pynvml wraps,
    with the driver: nothing to install). Readings collect in `readings` (MHz)."""

    def __init__(self, device=0):
        import ctypes
        self.ct = ctypes
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        if self.lib.nvmlInit_v2() != 0:
            raise RuntimeError("nvmlInit failed")
        self.handle = ctypes.c_void_p()
        props = torch.cuda.get_device_properties(device)
        if all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
            bus = f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0".encode()
            rc = self.lib.nvmlDeviceGetHandleByPciBusId_v2(bus, ctypes.byref(self.handle))
        else:  # an older torch: NVML's index, right unless CUDA_VISIBLE_DEVICES reorders
            rc = self.lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(device), ctypes.byref(self.handle))
        if rc != 0:
            raise RuntimeError(f"no NVML handle for the device (NVML error {rc})")
        self.readings = []
        self.rule = None  # a Cooldown (GPUCHECK_COOLDOWN): cool_down() waits for it

    def _uint(self, fn, *args):
        v = self.ct.c_uint()
        return v.value if fn(self.handle, *args, self.ct.byref(v)) == 0 else None

    def read(self):
        mhz = self._uint(self.lib.nvmlDeviceGetClockInfo, 1)  # NVML_CLOCK_SM
        if mhz is not None:
            self.readings.append(mhz)

    def max_clock(self):
        """The SM clock's maximum (MHz; NVML_CLOCK_SM), as ours' context sm_clock_max_MHz."""
        return self._uint(self.lib.nvmlDeviceGetMaxClockInfo, 1)

    def energy_J(self):
        """The GPU's energy counter in joules since the driver loaded (nvmlDeviceGetTotalEnergy
        Consumption, mJ), None where NVML gave none: the counter the harness's power_W reads."""
        v = self.ct.c_ulonglong()
        return v.value / 1e3 if self.lib.nvmlDeviceGetTotalEnergyConsumption(self.handle, self.ct.byref(v)) == 0 \
            else None

    def power_temp(self):
        """(board power W, GPU temperature C) now, None where NVML gave none: the readings the
        harness's cool-down reads (nvmlDeviceGetPowerUsage, nvmlDeviceGetTemperature GPU)."""
        mw = self._uint(self.lib.nvmlDeviceGetPowerUsage)
        return (None if mw is None else mw / 1000.0), self._uint(self.lib.nvmlDeviceGetTemperature, 0)

    def cool_down(self):
        """The harness's cool-down (wait_cooled) on this GPU's readings."""
        return wait_cooled(self.rule, self.power_temp, time.perf_counter, time.sleep)


def census_text(census):
    per, names = census
    return f"{per:g} kernels/call: " + ", ".join(
        f"{n[:60]} x{c}" for n, c in sorted(names.items(), key=lambda x: -x[1]))


def set_reduced_precision_reduction(allowed):
    m = torch.backends.cuda.matmul
    m.allow_fp16_reduced_precision_reduction = allowed
    m.allow_bf16_reduced_precision_reduction = allowed


def gemm_diagnostics(hold, fn, amount):
    """What each of this script's two earlier differences from bench_matmul costs, measured in
    the same run as the compared figure (docs/TORCH_REFERENCE.md, "Small GEMMs"):
    TFLOPS_old_rule is the same burst with split-K reductions in the output type disallowed
    (the earlier setting; kernels_per_call_old_rule and the label say what a call launched
    then), TFLOPS_old_timing the earlier burst (old_burst_ms) with today's rule."""
    out = {}
    set_reduced_precision_reduction(False)
    try:
        ms = burst_ms(hold, fn)[0]
        out["TFLOPS_old_rule"] = amount / ms / 1e9
    finally:
        set_reduced_precision_reduction(True)
    out["TFLOPS_old_timing"] = amount / old_burst_ms(hold, fn) / 1e9
    return out


def differs(got, want, rtol, atol):
    """None when got is close to want, else how far it is."""
    if torch.allclose(got.float(), want.float(), rtol=rtol, atol=atol):
        return None
    return f"max abs err {(got.float() - want.float()).abs().max().item():g} (rtol {rtol:g}, atol {atol:g})"


def check_close(name, got, want, rtol, atol):
    err = differs(got, want, rtol, atol)
    if err:
        raise RuntimeError(f"{name}: output differs from the reference ({err})")


DT = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "tf32": torch.float32} if torch else {}
TOL = {"fp16": (2e-2, 2e-2), "bf16": (5e-2, 5e-2), "tf32": (2e-2, 2e-2), "fp32": (1e-3, 1e-3)}


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def bmm_cases(pattern):
    for tag in ("fp16", "bf16", "fp32"):
        for b, m, n, k in ((64, 512, 512, 512), (512, 128, 128, 64), (16, 2048, 2048, 128)):
            shape = f"b{b}m{m}n{n}k{k}"
            flops = 2.0 * b * m * n * k
            if not any(pattern.search(f"bmm/{p}/{tag}/{shape}") for p in ("strided", "strided_mbk")):
                continue

            def setup(tag=tag, b=b, m=m, n=n, k=k):
                set_tf32(False)
                dt = DT[tag]
                a = torch.rand(b, m, k, device="cuda", dtype=dt) * 2 - 1
                bb = torch.rand(b, k, n, device="cuda", dtype=dt) * 2 - 1
                a_mbk = a.permute(1, 0, 2).contiguous()
                ref = torch.bmm(a, bb)
                out = torch.einsum("mbk,bkn->bmn", a_mbk, bb)
                rtol, atol = TOL[tag]
                check_close(f"bmm/strided_mbk/{tag}/{shape}", out, ref, rtol, atol * k ** 0.5)
                return {
                    f"bmm/strided/{tag}/{shape}": ("torch.bmm", lambda: torch.bmm(a, bb)),
                    f"bmm/strided_mbk/{tag}/{shape}": ('torch.einsum("mbk,bkn->bmn")',
                                                        lambda: torch.einsum("mbk,bkn->bmn", a_mbk, bb)),
                }

            yield setup, flops, "TFLOPS"


CONV_SHAPES = ((64, 64, 56, 64, 3), (64, 256, 56, 64, 1), (64, 128, 28, 128, 3))  # n, c, h(=w), k, r(=s)


def conv_cases(pattern):
    for tag in ("fp16", "bf16", "tf32", "fp32"):
        for n, c, h, k, r in CONV_SHAPES:
            shape = f"n{n}c{c}h{h}w{h}k{k}r{r}s{r}"
            flops = 2.0 * n * k * c * r * r * h * h
            if not any(pattern.search(f"conv/{lay}{d}/{tag}/{shape}") for lay in ("nchw", "nhwc")
                       for d in ("", "_bwd_data", "_bwd_filter")):
                continue

            def setup(tag=tag, n=n, c=c, h=h, k=k, r=r, shape=shape):
                set_tf32(tag == "tf32")
                dt = DT[tag]
                pad = r // 2
                x = torch.rand(n, c, h, h, device="cuda", dtype=dt) * 2 - 1
                w = torch.rand(k, c, r, r, device="cuda", dtype=dt) * 2 - 1
                dy = torch.rand(n, k, h, h, device="cuda", dtype=dt) * 2 - 1
                cl = torch.channels_last
                xl, wl, dyl = x.to(memory_format=cl), w.to(memory_format=cl), dy.to(memory_format=cl)
                ops = {}
                # The backward passes as autograd runs them: aten.convolution_backward with the
                # real input and weight (their layout picks cuDNN's), one gradient per call.
                bwd = torch.ops.aten.convolution_backward
                for lay, (xx, ww, gg) in (("nchw", (x, w, dy)), ("nhwc", (xl, wl, dyl))):
                    ops[lay] = {
                        "": lambda xx=xx, ww=ww: F.conv2d(xx, ww, padding=pad),
                        "_bwd_data": lambda xx=xx, ww=ww, gg=gg: bwd(gg, xx, ww, None, [1, 1], [pad, pad], [1, 1], False,
                                                                     [0, 0], 1, [True, False, False])[0],
                        "_bwd_filter": lambda xx=xx, ww=ww, gg=gg: bwd(gg, xx, ww, None, [1, 1], [pad, pad], [1, 1],
                                                                       False, [0, 0], 1, [False, True, False])[1],
                    }
                rtol, atol = TOL[tag]
                cases = {}
                for d in ("", "_bwd_data", "_bwd_filter"):
                    ref, got = ops["nchw"][d](), ops["nhwc"][d]()
                    red = c * r * r if d != "_bwd_filter" else n * h * h
                    check_close(f"conv/nhwc{d}/{tag}/{shape}", got, ref, rtol, atol * red ** 0.5)
                    for lay in ("nchw", "nhwc"):
                        what = "F.conv2d" if d == "" else "aten.convolution_backward " + ("input" if d == "_bwd_data" else "weight")
                        cases[f"conv/{lay}{d}/{tag}/{shape}"] = (f"{what} {lay}, cudnn.benchmark", ops[lay][d])
                return cases

            yield setup, flops, "TFLOPS"



ATTN_SHAPES = ((8, 16, 1024, 64), (4, 16, 4096, 64), (4, 16, 4096, 128), (1, 32, 16384, 128), (16, 16, 512, 64))


def first_line(e, limit=160):
    text = str(e).strip().splitlines()
    return (text[0] if text else e.__class__.__name__)[:limit]


def attention_cases(pattern):
    """bench_attention's cases in PyTorch: naive attention as it is usually written (matmul,
    scale, [masked_fill], softmax, matmul: the usual composition), naive_s16 (the fewest
    kernels PyTorch's public ops allow: one GEMM with the scale as its alpha writing fp16 S,
    [masked_fill_ in place], softmax, GEMM; bench_attention's naive_s16 moves the same bytes
    of S and P, minus the masked_fill pass: PyTorch has no fused causal softmax for rows of
    more than 1024), and SDPA's FLASH_ATTENTION (FlashAttention-2: our fused kernel's
    yardstick, under the name attention/flash/...), CUDNN_ATTENTION and, as a reference row
    only, EFFICIENT_ATTENTION (attention/torch_efficient/...) backends."""
    from torch.nn.attention import sdpa_kernel, SDPBackend
    for tag in ("fp16", "bf16"):
        for b, h, s, d in ATTN_SHAPES:
            for causal in (False, True):
                shape = f"b{b}h{h}s{s}d{d}" + ("/causal" if causal else "")
                flops = attention_flops(AttnShape(b, h, h, s, s, d), causal)
                if not any(pattern.search(f"attention/{be}/{tag}/{shape}")
                           for be in ("naive", "naive_s16", "flash", "cudnn", "torch_efficient")):
                    continue  # nothing of this configuration is asked for: no set-up either

                def setup(tag=tag, b=b, h=h, s=s, d=d, causal=causal, shape=shape):
                    dt = DT[tag]
                    q = torch.rand(b, h, s, d, device="cuda", dtype=dt) * 2 - 1
                    k = torch.rand(b, h, s, d, device="cuda", dtype=dt) * 2 - 1
                    v = torch.rand(b, h, s, d, device="cuda", dtype=dt) * 2 - 1
                    scale = 1.0 / math.sqrt(d)
                    mask = torch.ones(s, s, device="cuda", dtype=torch.bool).triu(1) if causal else None

                    def naive():
                        sc = torch.matmul(q, k.transpose(-2, -1)) * scale
                        if mask is not None:
                            sc = sc.masked_fill(mask, float("-inf"))
                        return torch.matmul(torch.softmax(sc, -1), v)

                    q3, k3t, v3 = q.view(b * h, s, d), k.view(b * h, s, d).transpose(1, 2), v.view(b * h, s, d)
                    wanted = tag == "fp16" and s * s * b * h <= 2 ** 33 and pattern.search(f"attention/naive_s16/{tag}/{shape}")
                    s16 = torch.empty(b * h, s, s, device="cuda", dtype=dt) if wanted else None

                    def naive_s16():
                        s16.baddbmm_(q3, k3t, beta=0.0, alpha=scale)  # in place, beta 0: one GEMM, no copy
                        if mask is not None:
                            s16.masked_fill_(mask, float("-inf"))
                        return torch.bmm(torch.softmax(s16, -1), v3).view(b, h, s, d)

                    def sdpa(backend):
                        def run():
                            with sdpa_kernel(backend):
                                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        return run

                    cases = {}
                    ref = None
                    rows = [(f"attention/naive/{tag}/{shape}", "matmul, scale, [masked_fill], softmax, matmul", naive)]
                    if s16 is not None:
                        rows.append((f"attention/naive_s16/{tag}/{shape}",
                                     "baddbmm_(alpha=scale), [masked_fill_], softmax, bmm", naive_s16))
                    for name, what, fn in (*rows,
                                           (f"attention/flash/{tag}/{shape}", "SDPA FLASH_ATTENTION (FA2)",
                                            sdpa(SDPBackend.FLASH_ATTENTION)),
                                           (f"attention/cudnn/{tag}/{shape}", "SDPA CUDNN_ATTENTION",
                                            sdpa(SDPBackend.CUDNN_ATTENTION)),
                                           (f"attention/torch_efficient/{tag}/{shape}",
                                            "SDPA EFFICIENT_ATTENTION (reference only)",
                                            sdpa(SDPBackend.EFFICIENT_ATTENTION))):
                        if not pattern.search(name) and fn is not naive:
                            continue
                        if s * s * b * h > 2 ** 33 and fn is naive:
                            continue  # S and P would not fit beside the rest
                        try:
                            out = fn()
                        except RuntimeError as e:
                            print(f"{name}: unavailable ({first_line(e)})", file=sys.stderr)
                            cases[name] = f"PyTorch refused it: {first_line(e)}"
                            continue
                        if ref is None:
                            ref = out
                        elif differs(out, ref, 2e-2, 2e-2):
                            cases[name] = "output differs from the naive form's: " + differs(out, ref, 2e-2, 2e-2)
                            continue
                        cases[name] = (what, fn)
                    return cases

                yield setup, flops, "TFLOPS"


# ---- --cases: PyTorch's counterpart of each case a bench_* --list named ---------------------

Skip = collections.namedtuple("Skip", "name reason")


def gemm_operands(tag, m, n, k):
    """Two row-major operands, (m, k) and (n, k), uniform in [-1, 1) drawn in fp32 and rounded
    once to the dtype of `tag` (so -1 to 1), as bench_matmul fills its operands (kernels/src/fill.cu).
    Drawn in the dtype itself, torch.rand(..., dtype=bf16) is a multiple of 2^-8, so
    rand * 2 - 1 takes at most 256 values: other data, and a GEMM's power draw, hence its clock
    in a burst, follows the data (docs/MATMUL.md gives the figures)."""
    target = torch.float8_e4m3fn if tag == "fp8e4m3" else DT[tag]
    return tuple((torch.rand(r, k, device="cuda") * 2 - 1).to(target) for r in (m, n))


def scaled_mm(p, q):
    """A call of p q^T in fp8 (torch._scaled_mm, unit scales, bf16 out)."""
    one = torch.ones((), device="cuda")
    return lambda: torch._scaled_mm(p, q.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


def checked_gemm(name, what, fn, p, q):
    """{name: (what, fn)} when fn() (p q^T, p (r, K), q (c, K)) is right on a 16 x 16 corner
    against a float reference; else {name: why}, PyTorch's refusal or the error."""
    try:
        out = fn()
    except RuntimeError as e:
        return {name: f"PyTorch refused it: {first_line(e)}"}
    r, c = min(16, p.shape[0]), min(16, q.shape[0])
    err = differs(out[:r, :c], p[:r].float() @ q[:c].float().t(), 5e-2, 5e-2 * p.shape[1] ** 0.5)
    if err:
        return {name: "wrong result on a 16 x 16 corner: " + err}
    return {name: (what, fn)}


def matmul_case(name, variant, tag, mnk):
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", mnk)
    if not m or tag not in ("fp32", "tf32", "fp16", "bf16", "fp8e4m3"):
        return Skip(name, "not a GEMM name this script reads")
    if variant not in ("cublaslt", "torch_cublaslt", "linear"):
        return Skip(name, f"no PyTorch counterpart of {variant} here (the bursts, cublaslt and linear, are compared)")
    M, N, K = (int(x) for x in m.groups())
    if tag == "fp8e4m3" and (M % 16 or N % 16 or K % 16):
        return Skip(name, "cuBLASLt's fp8 GEMMs want M, N and K multiples of 16 (ours skips it too)")
    lt = variant == "torch_cublaslt"
    if variant == "linear":
        return linear_case(name, tag, M, N, K)

    def setup():
        set_tf32(tag == "tf32")
        # PyTorch's defaults, which are cuBLAS's defaults and what bench_matmul's cuBLASLt
        # preference allows (it sets no REDUCTION_SCHEME_MASK: every split-K reduction scheme,
        # in the output type too). Accumulation is fp32 on both sides either way.
        set_reduced_precision_reduction(True)
        # bench_matmul: D (M x N, column-major) = A^T B with A stored K x M and B K x N
        # (K contiguous in both), cublasLtMatmul(T, N, m=M, n=N, k=K). Row-major a (M, K) and
        # b (N, K) hold the same bytes, and torch.mm(b, a.t()) (an (N, M) row-major result,
        # the same bytes as D) is cuBLAS's gemm(T, N, m=M, n=N, k=K): the very problem.
        # torch.mm(a, b.t()) would be its transpose (m and n swapped), another problem for
        # cuBLAS's heuristic wherever M != N.
        a, b = gemm_operands(tag, M, N, K)
        if tag == "fp8e4m3":
            what = "torch._scaled_mm(b, a.t(), bf16 out): cuBLASLt T,N m=M n=N k=K"
            fn = scaled_mm(b, a)
        else:
            if lt:
                what = "torch.mm(b, a.t()) with preferred_blas_library('cublaslt') (reference only)"

                def fn():
                    prev = torch.backends.cuda.preferred_blas_library()
                    torch.backends.cuda.preferred_blas_library("cublaslt")
                    try:
                        return torch.mm(b, a.t())
                    finally:
                        torch.backends.cuda.preferred_blas_library(prev)
            else:
                what = "torch.mm(b, a.t()): cuBLAS T,N m=M n=N k=K, fp32 accumulate"

                def fn():
                    return torch.mm(b, a.t())
        return checked_gemm(name, what, fn, b, a)  # out[j, i] = sum_k b[j, k] a[i, k]

    return setup, 2.0 * M * N * K, "TFLOPS"


def linear_case(name, tag, M, N, K):
    """bench_matmul's matmul/linear/...: F.linear(x, w), y = x w^T with x (M, K), w (N, K), y
    (M, N), all row-major: cuBLAS's gemm(T, N, m=N, n=M, k=K), the problem bench_matmul gives
    cuBLASLt for this variant; fp8 through torch._scaled_mm(x, w.t()) (bf16 out), the same."""
    def setup():
        set_tf32(tag == "tf32")
        set_reduced_precision_reduction(True)  # PyTorch's default, as matmul_case says
        x, w = gemm_operands(tag, M, N, K)
        # Rotated over copies, as bench_matmul's linear rows (the first call reads x, w).
        n = linear_copies(x.nbytes + w.nbytes, torch.cuda.get_device_properties(0).L2_cache_size)
        pairs = [(x, w)] + [(x.clone(), w.clone()) for _ in range(n - 1)]
        if tag == "fp8e4m3":
            what = "torch._scaled_mm(x, w.t(), bf16 out): cuBLASLt T,N m=N n=M k=K"
            calls = [scaled_mm(p, q) for p, q in pairs]
        else:
            lib = "cuBLASLt" if blas_library() == "cublaslt" else "cuBLAS"  # PyTorch's preferred library
            what = f"F.linear(x, w): {lib} T,N m=N n=M k=K, fp32 accumulate"
            calls = [(lambda p=p, q=q: F.linear(p, q)) for p, q in pairs]
        if n > 1:
            what += f", copies={n}"
        turn = itertools.cycle(calls)

        def fn():
            return next(turn)()
        return checked_gemm(name, what, fn, x, w)
    return setup, 2.0 * M * N * K, "TFLOPS"


def attention_case(name, backend, tag, shape, causal):
    sh = parse_attention_shape(shape)
    if sh is None or tag not in ("fp16", "bf16"):
        return Skip(name, "not an attention name this script reads")
    if backend not in ("naive", "flash", "cudnn", "torch_efficient"):
        return Skip(name, f"no PyTorch counterpart of {backend} here")
    why = attention_unrunnable(sh, causal)
    if why:
        return Skip(name, why)
    b, h, kv, s, sk, d = sh
    g, gqa, lower_right = h // kv, kv != h, causal and s != sk
    if backend == "naive" and b * h * s * sk > 2 ** 33:
        return Skip(name, "S and P would not fit beside the rest (b*h*s_q*s_k > 2^33)")

    def setup():
        from torch.nn.attention import sdpa_kernel, SDPBackend
        dt = DT[tag]
        q = torch.rand(b, h, s, d, device="cuda", dtype=dt) * 2 - 1
        k = torch.rand(b, kv, sk, d, device="cuda", dtype=dt) * 2 - 1  # K, V: [b, kv, s_k, d]
        v = torch.rand(b, kv, sk, d, device="cuda", dtype=dt) * 2 - 1
        scale = 1.0 / math.sqrt(d)
        # True where a key is hidden: bottom-right aligned, as bench_attention's mask
        # (causal_masked); SDPA's is_causal is the same only when seq_q == seq_k.
        mask = torch.ones(s, sk, device="cuda", dtype=torch.bool).triu(sk - s + 1) if causal else None
        # Grouped-query attention without copies: query head kv_i * g + j reads K/V head kv_i
        # (SDPA's enable_gqa), so Q [b, h, s, d] viewed as [b, kv, g*s, d] meets K/V directly.
        qg = q.view(b, kv, g * s, d)

        def naive():
            sc = torch.matmul(qg, k.transpose(-2, -1)) * scale
            if mask is not None:
                sc = sc.view(b, kv, g, s, sk).masked_fill(mask, float("-inf")).view(b, kv, g * s, sk)
            return torch.matmul(torch.softmax(sc, -1), v).view(b, h, s, d)

        kw, notes = {}, []
        if gqa:
            kw["enable_gqa"] = True
            notes.append("enable_gqa")
        if lower_right:
            # PyTorch routes it per backend: FA2's own causal (bottom-right), the efficient
            # kernel's lower-right mask type, else the mask materialised (cuDNN).
            from torch.nn.attention.bias import causal_lower_right
            kw["attn_mask"] = causal_lower_right(s, sk)
            notes.append("causal_lower_right")
        else:
            kw["is_causal"] = causal

        def sdpa(which):
            def run():
                with sdpa_kernel(which):
                    return F.scaled_dot_product_attention(q, k, v, **kw)
            return run

        fn, what = {"naive": (naive, "matmul, scale, [masked_fill], softmax, matmul" + (" (Q viewed per K/V head)" if gqa else "")),
                    "flash": (sdpa(SDPBackend.FLASH_ATTENTION), "SDPA FLASH_ATTENTION (FA2)"),
                    "cudnn": (sdpa(SDPBackend.CUDNN_ATTENTION), "SDPA CUDNN_ATTENTION"),
                    "torch_efficient": (sdpa(SDPBackend.EFFICIENT_ATTENTION),
                                        "SDPA EFFICIENT_ATTENTION (reference only)")}[backend]
        if backend != "naive" and notes:
            what += ", " + ", ".join(notes)
        try:
            out = fn()
        except RuntimeError as e:
            print(f"{name}: unavailable in PyTorch ({first_line(e, 120)})", file=sys.stderr)
            return {name: f"PyTorch refused it: {first_line(e)}"}
        if backend != "naive" and b * h * s * sk <= 2 ** 31:
            err = differs(out, naive(), 2e-2, 2e-2)
            if err:
                return {name: "output differs from the naive form's: " + err}
        return {name: (what, fn)}

    return setup, attention_flops(sh, causal), "TFLOPS"


def bmm_case(name, path, tag, shape):
    m = re.fullmatch(r"b(\d+)m(\d+)n(\d+)k(\d+)", shape)
    if not m or tag not in ("fp16", "bf16", "fp32"):
        return Skip(name, "not a bmm name this script reads")
    if path not in ("strided", "strided_mbk", "permute_bmm"):
        return Skip(name, f"no PyTorch counterpart of {path} here")
    b, mm, n, k = (int(x) for x in m.groups())

    def setup():
        set_tf32(False)
        dt = DT[tag]
        a = torch.rand(b, mm, k, device="cuda", dtype=dt) * 2 - 1
        bb = torch.rand(b, k, n, device="cuda", dtype=dt) * 2 - 1
        if path == "strided":
            return {name: ("torch.bmm", lambda: torch.bmm(a, bb))}
        a_mbk = a.permute(1, 0, 2).contiguous()
        rtol, atol = TOL[tag]
        if path == "permute_bmm":  # materialise [m,b,k] as [b,m,k] (PyTorch's copy kernel), then bmm
            return {name: ("a_mbk.permute(1, 0, 2).contiguous(), then torch.bmm",
                           lambda: torch.bmm(a_mbk.permute(1, 0, 2).contiguous(), bb))}
        check_close(name, torch.einsum("mbk,bkn->bmn", a_mbk, bb), torch.bmm(a, bb), rtol, atol * k ** 0.5)
        return {name: ('torch.einsum("mbk,bkn->bmn")', lambda: torch.einsum("mbk,bkn->bmn", a_mbk, bb))}

    return setup, 2.0 * b * mm * n * k, "TFLOPS"


def nccl_case(name, variant, size, ranks):
    nbytes = parse_bytes(size)
    if nbytes is None or nbytes < 4:
        return Skip(name, "not a size this script reads")
    what, why = nccl_counterpart(variant, ranks)
    if why:
        return Skip(name, why)

    def setup():
        import torch.distributed as dist
        if not dist.is_initialized():
            os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
            os.environ.setdefault("MASTER_PORT", "29533")
            dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
        x = torch.rand(nbytes // 4, device="cuda")
        y = torch.empty_like(x)  # world size 1: the gathered output and the scattered input are x's size
        fn = {"allgather": lambda: dist.all_gather_into_tensor(y, x),
              "reducescatter": lambda: dist.reduce_scatter_tensor(y, x)}[variant]
        return {name: (what + " (out of place, world size 1)", fn)}

    return setup, float(nbytes), "algbw_GBps"


def named_cases(names, pattern):
    """Each name (and its reference twins) as (setup, amount, counter, name) or Skip."""
    for name in with_reference_rows(names):
        if not pattern.search(name):
            continue
        parts = name.split("/")
        made = None
        if parts[0] == "matmul" and len(parts) == 4:
            made = matmul_case(name, parts[1], parts[2], parts[3])
        elif parts[0] == "attention" and len(parts) in (4, 5) and (len(parts) == 4 or parts[4] == "causal"):
            made = attention_case(name, parts[1], parts[2], parts[3], len(parts) == 5)
        elif parts[0] == "bmm" and len(parts) == 4:
            made = bmm_case(name, parts[1], parts[2], parts[3])
        elif parts[0] == "nccl" and len(parts) == 5:
            made = nccl_case(name, parts[1], parts[3], parts[4])
        if made is None:
            made = Skip(name, "no PyTorch counterpart here")
        if isinstance(made, Skip):
            print(f"{name}: skipped ({made.reason})", file=sys.stderr)
            yield made
        else:
            yield (*made, name)


# ---- The run ---------------------------------------------------------------------------------

def library_versions():
    """The libraries this PyTorch loaded, under gpucheck's context keys (so `gpucheck compare`
    shows a difference): cuBLAS(Lt) from the loaded shared object, cuDNN, NCCL."""
    ctx = {}
    try:
        ctx["cudnn_version"] = dotted_version(torch.backends.cudnn.version())
    except Exception:
        pass
    try:
        v = torch.cuda.nccl.version()
        ctx["nccl_version"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else dotted_version(v)
    except Exception:
        pass
    try:
        import ctypes
        with open("/proc/self/maps") as f:
            paths = sorted({l.split()[-1] for l in f if "libcublasLt.so" in l})
        if paths:
            lt = ctypes.CDLL(paths[0])
            lt.cublasLtGetVersion.restype = ctypes.c_size_t
            ctx["cublas_version"] = dotted_version(lt.cublasLtGetVersion())
    except Exception:
        pass
    return ctx


def blas_library():
    """PyTorch's preferred BLAS library for its GEMMs ("cublas", or "cublaslt" with
    TORCH_BLAS_PREFER_CUBLASLT=1 or torch.backends.cuda.preferred_blas_library), or None."""
    try:
        b = torch.backends.cuda.preferred_blas_library()
    except Exception:
        return None
    return str(getattr(b, "name", b)).lower()


def skipped_entry(name, reason):
    return {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
            "threads": 1, "iterations": 0, "time_unit": "us", "skipped": True, "skip_message": reason}


def write_json(path, out):
    if not path:
        return
    out["context"].update(library_versions())
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, path)


class ProfileLater:
    """A timed row's torch.profiler work, done by profile_after once every row is timed: the
    kernel one call ran (name_kernel, --parity: kernel=NAME after the row's `what` in its
    label), the kernels a call launched (census, --kernels: counter kernels_per_call, the
    census at the label's end), and that under the old reduction rule (old_rule,
    --gemm-diagnostics: kernels_per_call_old_rule). Why later: so that no profiler session
    (Kineto leaves CUPTI loaded after one unless TEARDOWN_CUPTI=1, pytorch/pytorch issue 144455)
    runs in the process before a row is timed, as none runs before ours'. On an H200 this alone
    did not move the split-K rows that read PyTorch 5-6% slower (1.051-1.061, 2026-12-04); the
    capture stream did (capture_calls, docs/MATMUL.md)."""

    def __init__(self, name, what, entry, name_kernel=False, census=False, old_rule=False):
        self.name, self.what, self.entry = name, what, entry
        self.name_kernel, self.census, self.old_rule = name_kernel, census, old_rule


def with_kernel(label, what, picked):
    """label with kernel_label(picked) right after the row's `what` (where ours' label has its
    kernel=NAME, before the timing notes), or at its end when label does not start with it."""
    k = kernel_label(picked)
    if label.startswith(what):
        return f"{what} {k}{label[len(what):]}"
    return f"{label} {k}"


def profile_after(pending, setups, name_of=None, census_of=None, rule=None):
    """Runs each timed row's ProfileLater work, after the last row is timed: the rows of one
    set-up share one new call of it (setups[i], the i-th pending row's), its operands freed
    after. A set-up or a row that fails now leaves kernel=? (name_kernel) and no census: the
    figures stand without them. name_of, census_of and rule (set_reduced_precision_reduction)
    default to kernel_of, kernel_census and the real rule; the tests pass fakes."""
    name_of = name_of or kernel_of
    census_of = census_of or kernel_census
    rule = rule or set_reduced_precision_reduction
    groups = {}
    for p, setup in zip(pending, setups):
        groups.setdefault(id(setup), (setup, []))[1].append(p)
    for setup, rows in groups.values():
        try:
            cases = setup()
        except Exception as e:
            print(f"  profiler pass: set-up failed ({e.__class__.__name__}: {first_line(e, 80)})", file=sys.stderr)
            cases = {}
        for p in rows:
            spec = cases.get(p.name)
            fn = spec[1] if isinstance(spec, tuple) else None
            if p.name_kernel:
                p.entry["label"] = with_kernel(p.entry["label"], p.what, name_of(fn) if fn else None)
            if fn is None:
                continue
            if p.census:
                census = census_of(fn)
                if census:
                    p.entry["kernels_per_call"] = census[0]
                    p.entry["label"] += " [" + census_text(census) + "]"
            if p.old_rule:
                rule(False)
                try:
                    census = census_of(fn)
                finally:
                    rule(True)
                if census:
                    p.entry["kernels_per_call_old_rule"] = census[0]
                    p.entry["label"] += " [old rule: " + census_text(census) + "]"
        cases = spec = fn = None  # this set-up's operands go before the next one's
        if torch is not None:
            torch.cuda.empty_cache()


def time_case(hold, name, what, fn, amount, counter, kernels, diagnose, clock=None, parity=False):
    """One case's entry. clock (SmClock): read during a burst's samples (counters sm_clock_MHz,
    the lowest reading as bench_matmul reports it, and sm_clock_mean_MHz). parity (a GEMM, for
    ci/gemm_parity.sh): timed as bench_matmul times it, step for step (the kernel is named
    by profile_after, once every row is timed), no
    per-call timing after it (ours has none: its 55 calls would heat the card before the next
    case), the card cooled to clock.rule's limits after the settle (GPUCHECK_COOLDOWN, as
    ours; not before the F.linear rows timed on the plateau, which ours does not cool), and
    a spin-kernel hold of at least PARITY_MIN_HOLD_MS instead of 0.5 ms; the label
    ends with kernel=NAME and, when cooled, the wait and the temperature it ended at."""
    per_ms = 1e9 if counter == "TFLOPS" else 1e6  # FLOP/ms -> TFLOP/s; bytes/ms -> GB/s
    gemm_parity = parity and name.startswith("matmul/")
    if clock is not None:
        clock.readings = []
    cool_result = []  # (waited, capped, temperature, settled) of the cool-down
    if name.startswith(("attention/", "matmul/")):  # power bursts, as bench_attention and bench_matmul
        probe = clock.read if clock is not None else None
        tokens = gemm_m(name, "linear")
        linear = tokens is not None
        tokens = tokens or 0
        warm = linear_warmup_s(tokens) if linear else 0.0  # as bench_matmul's linear rows
        plateau = (LINEAR_PLATEAU_LOAD_S, LINEAR_PLATEAU_S) if linear and linear_plateau(tokens) else None
        # F.linear rows as bench_matmul's: graph replays, whole turns of the copies, up to 128 tokens in groups
        as_linear = dict(graph=bool(linear), batch_turns=copies_of(what) if linear else 1)
        groups = linear_groups(tokens) if linear else LINEAR_GROUPS if weight_bound(name) else 1
        cool = (lambda: cool_result.append(clock.cool_down())) if gemm_parity and clock is not None and clock.rule \
            else None

        def burst(first):
            if clock is not None:
                clock.readings = []
            window = EnergyWindow(clock.energy_J) if clock is not None else None
            kw = dict(probe=probe, warmup_s=warm, plateau=plateau, **as_linear, energy=window,
                      before_warmup=redraw_memory_state if groups > 1 else None)
            if not first:
                kw["settle_s"] = 0.0  # the settle and the cool-down once, before the first group
            if gemm_parity:
                kw.update(cool_down=None if plateau or not first else cool, min_hold_ms=PARITY_MIN_HOLD_MS)
            return burst_ms(hold, fn, **kw), (list(clock.readings) if clock is not None else [],
                                              window.power_W() if window is not None else None)
        (held, batch, retries, cv, samples, issue_us), spread, (readings, power_W) = burst_groups(groups, burst)
        if clock is not None:
            clock.readings = readings
    else:
        held, batch, retries, cv, samples, issue_us = held_ms(hold, fn), CALLS, 0, None, SAMPLES, None
        spread = power_W = None
    entry = {
        "name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
        "repetition_index": 0, "threads": 1, "iterations": batch * samples,
        "real_time": held * 1e3, "cpu_time": held * 1e3, "time_unit": "us",
        counter: amount / held / per_ms, "batch": batch, "samples": samples,
        "hold_retries": retries, "label": what,
    }
    if name.startswith("matmul/linear/"):
        entry["method"] = LINEAR_METHOD  # timed as ours: gpucheck compare lines the two up
    elif weight_bound(name):
        entry["method"] = WEIGHT_BOUND_METHOD
    if not gemm_parity:
        per_call = per_call_ms(fn)
        entry["per_call_" + counter] = amount / per_call / per_ms
        entry["dispatch_us"] = max(0.0, (per_call - held) * 1e3)
    if cv is not None:
        entry["cv_pct"] = cv
    if spread is not None:
        entry["groups"], entry["group_spread_pct"] = groups, 100.0 * spread  # the engine's counters
    if issue_us is not None:
        entry["issue_us"] = issue_us  # the host's time to queue a call (a plateau's samples)
    if clock is not None and clock.readings:
        entry["sm_clock_MHz"] = min(clock.readings)
        entry["sm_clock_mean_MHz"] = statistics.mean(clock.readings)
    if power_W is not None:
        entry["power_W"] = power_W  # the energy counter over the timed samples, as ours' power_W
    if gemm_parity and cool_result:
        entry["label"] += cooldown_note(*cool_result[0])
    old_rule = diagnose and name.startswith("matmul/cublaslt/") and name.split("/")[2] in ("bf16", "fp16")
    if old_rule:
        try:  # a diagnostic: never the reason the compared figure is lost
            entry.update(gemm_diagnostics(hold, fn, amount))
        except Exception as e:
            print(f"  {name}: GEMM diagnostics failed ({e.__class__.__name__}: {first_line(e, 80)})", file=sys.stderr)
            old_rule = False
    census = (kernels or diagnose) and name.startswith("matmul/")
    return entry, (ProfileLater(name, what, entry, name_kernel=gemm_parity, census=census, old_rule=old_rule)
                   if gemm_parity or census else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write Google Benchmark JSON here (rewritten after every case)")
    ap.add_argument("--filter", default="", help="only names matching this regular expression")
    ap.add_argument("--cases", help="time PyTorch's counterparts of these gpucheck names (one a line: bench_X --list)")
    ap.add_argument("--kernels", action="store_true",
                    help="matmul: also count the kernels one call launches (torch.profiler, after timing): "
                         "label and counter kernels_per_call")
    ap.add_argument("--gemm-diagnostics", action="store_true",
                    help="matmul/cublaslt bf16/fp16: also time the two earlier differences from bench_matmul "
                         "(counters TFLOPS_old_rule, TFLOPS_old_timing, kernels_per_call_old_rule); implies --kernels")
    ap.add_argument("--parity", action="store_true",
                    help="matmul: timed as bench_matmul times it (no per-call timing, a 0.1 ms least hold, "
                         "GPUCHECK_COOLDOWN's cool-down before each burst), with the kernel each case ran "
                         "(torch.profiler, one untimed call once every row is timed: kernel=NAME in the label) and NVML's "
                         "SM clock during the burst's samples (sm_clock_MHz, sm_clock_mean_MHz), for "
                         "ci/gemm_parity.sh")
    ap.add_argument("--parity-table", metavar="OUT",
                    help="write ci/gemm_parity.sh's table (OUT/parity.md, OUT/parity.csv) from OUT/cases.txt and "
                         "OUT/run<i>/{ours-*,torch}.json, print it (no torch needed) and exit")
    ap.add_argument("--parity-machines", nargs="+", metavar="OUT",
                    help="print several machines' ci/gemm_parity.sh folders (or parity.csv files kept from them) "
                         "side by side, with issue 40's criteria on each and over all (no torch needed), and exit")
    ap.add_argument("--table", metavar="OUT.md", help="write the axes session's table (no torch needed) and exit")
    ap.add_argument("--section", nargs=3, action="append", default=[], metavar=("TITLE", "METRIC", "PREFIX"),
                    help="--table: a family; PREFIX.cases.txt, PREFIX.ours.json, PREFIX.torch.json")
    ap.add_argument("--band", action="append", default=[], metavar="PREFIX=PCT|PREFIX=report:WHY",
                    help="--table: a family's agreement band (docs/TORCH_REFERENCE.md), longest prefix wins")
    args = ap.parse_args()
    if args.parity_table:
        try:
            print(write_parity(args.parity_table))
        except OSError as e:
            print(f"torch_reference.py: {e}", file=sys.stderr)
            return 2
        return 0
    if args.parity_machines:
        try:
            print("\n".join(parity_machines(args.parity_machines)))
        except (OSError, ValueError) as e:
            print(f"torch_reference.py: {e}", file=sys.stderr)
            return 2
        return 0
    if args.table:
        try:
            bands = [parse_band(b) for b in args.band]
        except ValueError as e:
            print(f"torch_reference.py: {e}", file=sys.stderr)
            return 2
        write_table(args.table, args.section, bands)
        return 0
    if torch is None:
        print("torch_reference.py: PyTorch is not installed (import torch failed)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("torch_reference.py: no CUDA device", file=sys.stderr)
        return 2
    pattern = re.compile(args.filter)
    rule = None
    if os.environ.get("GPUCHECK_COOLDOWN"):
        try:
            rule = parse_cooldown(os.environ["GPUCHECK_COOLDOWN"])
        except ValueError as e:
            print(f"torch_reference.py: GPUCHECK_COOLDOWN: {e}", file=sys.stderr)
            return 2
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    props = torch.cuda.get_device_properties(0)
    out = {
        "context": {
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "executable": "ci/torch_reference.py",
            "gpu_name": props.name,
            "library": "torch " + torch.__version__,
            "blas_library": blas_library() or "?",
            "cuda_runtime": str(torch.version.cuda),
            "timing": f"held: {CALLS} calls queued behind torch.cuda._sleep, median of {SAMPLES} samples; "
                      "matmul and attention as gpucheck's power burst (0.3 s idle, 5 warm-up calls, one held call "
                      "sets the batch (samples of >= 0.5 ms, at most 64 calls), median of 20 held samples whose "
                      "hold is checked; F.linear rows: each sample one CUDA graph replay, every batch whole turns "
                      f"of the rotated copies; rows of at most {LINEAR_GROUPS_MAX_TOKENS} tokens: the fastest of "
                      f"{LINEAR_GROUPS} groups (bursts or plateaus), each after a write and free of "
                      f"{REDRAW_BYTES >> 20} MiB); on a non-blocking stream, as gpucheck's",
        },
        "benchmarks": [],
    }
    if args.cases:
        with open(args.cases) as f:
            gens = (named_cases([l.strip() for l in f if l.strip()], pattern),)
    else:
        gens = (bmm_cases(pattern), conv_cases(pattern), attention_cases(pattern))
    failed = 0
    # gpucheck's cases run on a stream of their own (cudaStreamNonBlocking); PyTorch's side
    # streams are created so too, and the legacy default stream is left out of the comparison.
    clock = None
    if args.parity:
        try:
            clock = SmClock(torch.cuda.current_device())
            clock.rule = rule
            if clock.max_clock():
                out["context"]["sm_clock_max_MHz"] = str(clock.max_clock())
        except Exception as e:  # the clock is shown, not judged: the figures stand without it
            print(f"torch_reference.py: no SM clock readings ({e.__class__.__name__}: {first_line(e, 80)})",
                  file=sys.stderr)
        if rule is not None and clock is None:
            print("torch_reference.py: GPUCHECK_COOLDOWN is set but NVML cannot be read: no cool-down",
                  file=sys.stderr)
    pending, pending_setups = [], []  # ProfileLater of the timed rows, and each one's set-up
    with torch.cuda.stream(torch.cuda.Stream()):
        hold = Hold()
        print(f"{'name':52s} {'held rate':>11s} {'per-call':>9s} {'dispatch us':>12s} {'batch':>5s}  call")
        for gen in gens:
            for item in gen:
                if isinstance(item, Skip):
                    out["benchmarks"].append(skipped_entry(item.name, item.reason))
                    continue
                setup, amount, counter = item[:3]
                owner = item[3] if len(item) > 3 else None
                try:
                    cases = setup()  # operands, and the outputs checked against the reference
                except Exception as e:
                    failed += 1
                    reason = f"set-up failed: {e.__class__.__name__}: {first_line(e)}"
                    print(f"{owner or 'a configuration'}: {reason}", file=sys.stderr)
                    if owner:
                        out["benchmarks"].append(skipped_entry(owner, reason))
                    torch.cuda.empty_cache()
                    continue
                for name, spec in cases.items():
                    if not pattern.search(name):
                        continue
                    if isinstance(spec, str):
                        print(f"{name}: skipped ({spec})", file=sys.stderr)
                        out["benchmarks"].append(skipped_entry(name, spec))
                        continue
                    what, fn = spec
                    try:
                        e, later = time_case(hold, name, what, fn, amount, counter, args.kernels,
                                             args.gemm_diagnostics, clock, args.parity)
                    except Exception as ex:
                        failed += 1
                        reason = f"timing failed: {ex.__class__.__name__}: {first_line(ex)}"
                        print(f"{name}: {reason}", file=sys.stderr)
                        out["benchmarks"].append(skipped_entry(name, reason))
                        continue
                    out["benchmarks"].append(e)
                    if later is not None:
                        pending.append(later)
                        pending_setups.append(setup)
                    print(f"{name:52s} {e[counter]:11.2f} {e.get('per_call_' + counter, math.nan):9.2f} "
                          f"{e.get('dispatch_us', math.nan):12.2f} "
                          f"{e['batch']:5d}  {e['label']}" + (f" (hold retries {e['hold_retries']})" if e["hold_retries"] else "")
                          + "".join(f" {k} {e[k]:.2f}" for k in ("TFLOPS_old_rule", "TFLOPS_old_timing") if k in e),
                          flush=True)
                    write_json(args.json, out)  # after every case: a run cut short keeps what it measured
                del cases
                torch.cuda.empty_cache()
        if pending:  # torch.profiler only now: see ProfileLater
            print(f"torch.profiler on {len(pending)} row(s), once every row is timed", flush=True)
            profile_after(pending, pending_setups)
    set_tf32(False)
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    write_json(args.json, out)
    if failed:
        print(f"torch_reference.py: {failed} case(s) failed (written as skipped, with the reason)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
