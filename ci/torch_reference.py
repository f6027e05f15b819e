#!/usr/bin/env python3
"""PyTorch's figures for gpucheck's bmm, convolution and attention cases, timed both ways.

With --cases FILE (names one a line, as `bench_X -a ... --list` prints them) it times PyTorch's
counterpart of each named case instead, at the user's shapes: matmul/cublaslt (torch.mm in
the TN layout, fp8 through torch._scaled_mm, as a power burst like bench_matmul),
attention/{naive,flash,cudnn} (any batch, heads, seq_q, seq_k, head_dim, causal),
bmm/{strided,strided_mbk} (torch.bmm, torch.einsum) and, on one GPU, nccl's
allreduce_inplace, allgather and reducescatter (torch.distributed, one rank: algbw_GBps).
A name it has no counterpart for is left out, said on stderr.

Why: a short op (bmm b64 512^3 takes ~35 us, a ResNet-50 convolution at batch 64 30-150 us)
timed one call at a time (`start.record(); fn(); end.record(); sync`, the method of
../shared/anchors/torch_anchors.py) encloses PyTorch's host dispatch of that call, so the
figure is lower than the device's. gpucheck holds the stream with a spin kernel while it
queues the timed calls, so its events enclose device time only. This script times the very
same PyTorch calls both ways, on the same GPU in the same session:

  held      torch.cuda._sleep holds the stream while CALLS calls are queued, events around
            the CALLS calls: the device time per call (gpucheck's method); the JSON figure
            Attention cases are timed as bench_attention times them, as a power burst
            (burst_ms: 0.3 s idle, 5 warm-up calls, 20 held samples).
  per_call  the anchor's method, median of 50 calls: counter per_call_TFLOPS, and
            dispatch_us = per-call time - held time (what the anchor adds)

It writes Google Benchmark JSON under gpucheck's names, so `gpucheck compare REF OURS` and
`gpucheck report` line the two up. Outputs are checked before timing: einsum and the NHWC
convolutions must equal bmm and NCHW within the dtype's tolerance.

Usage: python3 ci/torch_reference.py [--json OUT.json] [--filter REGEX] [--cases FILE]
"""
import argparse
import json
import math
import re
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

CALLS = 20  # calls per held sample
SAMPLES = 15  # held samples per case (median)


def per_call_ms(fn, iters=50, warm=5):
    """The anchor's method: one call between events, synchronised, median."""
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


def burst_ms(hold, fn, samples=20, min_sample_ms=0.5, max_calls=64):
    """gpucheck's power burst (harness::power_burst), for work that draws past the power limit
    within tens of milliseconds (attention): 0.3 s idle, 5 warm-up calls, then exactly 20 held
    samples of at least 0.5 ms each. Timed back to back instead, a 600+ TFLOP/s kernel runs
    at a lower SM clock after the first samples and reads 5-7% lower."""
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


def check_close(name, got, want, rtol, atol):
    if not torch.allclose(got.float(), want.float(), rtol=rtol, atol=atol):
        err = (got.float() - want.float()).abs().max().item()
        raise RuntimeError(f"{name}: output differs from the reference (max abs err {err:g})")


DT = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "tf32": torch.float32}
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


def attention_cases(pattern):
    """bench_attention's cases in PyTorch: naive attention as it is usually written (matmul,
    scale, [masked_fill], softmax, matmul: the anchors' composition), naive_s16 (the fewest
    kernels PyTorch's public ops allow: one GEMM with the scale as its alpha writing fp16 S,
    [masked_fill_ in place], softmax, GEMM; bench_attention's naive_s16 moves the same bytes
    of S and P, minus the masked_fill pass: PyTorch has no fused causal softmax for rows of
    more than 1024), and SDPA's FLASH_ATTENTION (FlashAttention-2: our fused kernel's
    yardstick, under the name attention/flash/...) and CUDNN_ATTENTION backends."""
    from torch.nn.attention import sdpa_kernel, SDPBackend
    for tag in ("fp16", "bf16"):
        for b, h, s, d in ATTN_SHAPES:
            for causal in (False, True):
                shape = f"b{b}h{h}s{s}d{d}" + ("/causal" if causal else "")
                flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
                if not any(pattern.search(f"attention/{be}/{tag}/{shape}")
                           for be in ("naive", "naive_s16", "flash", "cudnn")):
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
                                            sdpa(SDPBackend.CUDNN_ATTENTION))):
                        if s * s * b * h > 2 ** 33 and fn is naive:
                            continue  # S and P would not fit beside the rest
                        try:
                            out = fn()
                        except RuntimeError as e:
                            print(f"{name}: unavailable ({e.__class__.__name__})")
                            continue
                        if ref is None:
                            ref = out
                        else:
                            check_close(name, out, ref, 2e-2, 2e-2)
                        cases[name] = (what, fn)
                    return cases

                yield setup, flops, "TFLOPS"


# --cases: PyTorch's counterpart of each case a bench_* --list named.
SIZE_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def parse_bytes(label):
    m = re.fullmatch(r"(\d+)(B|KiB|MiB|GiB|TiB)", label)
    return int(m.group(1)) * SIZE_UNITS[m.group(2)] if m else None


def matmul_case(name, tag, mnk):
    m, n, k = (int(x) for x in mnk.split("x"))

    def setup():
        set_tf32(tag == "tf32")
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False  # fp32 accumulate, as ours
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        if tag == "fp8e4m3":  # e4m3 in, bf16 out, unit scales: bench_matmul's fp8 GEMM
            a = (torch.rand(m, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)
            b = (torch.rand(n, k, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)
            one = torch.ones((), device="cuda")
            return {name: ("torch._scaled_mm (TN, bf16 out)",
                           lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))}
        a = torch.rand(m, k, device="cuda", dtype=DT[tag]) * 2 - 1
        b = torch.rand(n, k, device="cuda", dtype=DT[tag]) * 2 - 1  # K contiguous in both: cuBLAS's TN
        return {name: ("torch.mm(a, b.t())", lambda: torch.mm(a, b.t()))}

    return setup, 2.0 * m * n * k, "TFLOPS"


def attention_case(name, backend, tag, shape, causal):
    m = re.fullmatch(r"b(\d+)h(\d+)(?:kv(\d+))?s(\d+)(?:sk(\d+))?d(\d+)", shape)
    if not m or backend not in ("naive", "flash", "cudnn"):
        return None
    b, h, s, d = (int(m.group(i)) for i in (1, 2, 4, 6))
    if int(m.group(3) or h) != h:
        return None  # grouped-query: bench_attention skips it
    sk = int(m.group(5) or s)

    def setup():
        from torch.nn.attention import sdpa_kernel, SDPBackend
        dt = DT[tag]
        q = torch.rand(b, h, s, d, device="cuda", dtype=dt) * 2 - 1
        k = torch.rand(b, h, sk, d, device="cuda", dtype=dt) * 2 - 1
        v = torch.rand(b, h, sk, d, device="cuda", dtype=dt) * 2 - 1
        scale = 1.0 / math.sqrt(d)
        # Bottom-right aligned, as bench_attention's mask (SDPA's is_causal is the same when seq_q == seq_k).
        mask = torch.ones(s, sk, device="cuda", dtype=torch.bool).triu(sk - s + 1) if causal else None

        def naive():
            sc = torch.matmul(q, k.transpose(-2, -1)) * scale
            if mask is not None:
                sc = sc.masked_fill(mask, float("-inf"))
            return torch.matmul(torch.softmax(sc, -1), v)

        def sdpa(which):
            if causal and s != sk:  # an explicit mask (FLASH_ATTENTION takes none: unavailable)
                kw = {"attn_mask": ~mask}
            else:
                kw = {"is_causal": causal}

            def run():
                with sdpa_kernel(which):
                    return F.scaled_dot_product_attention(q, k, v, **kw)
            return run

        fn, what = {"naive": (naive, "matmul, scale, [masked_fill], softmax, matmul"),
                    "flash": (sdpa(SDPBackend.FLASH_ATTENTION), "SDPA FLASH_ATTENTION (FA2)"),
                    "cudnn": (sdpa(SDPBackend.CUDNN_ATTENTION), "SDPA CUDNN_ATTENTION")}[backend]
        try:
            out = fn()
        except RuntimeError as e:
            print(f"{name}: unavailable in PyTorch ({str(e).splitlines()[0][:120]})", file=sys.stderr)
            return {}
        if backend != "naive" and b * h * s * sk <= 2 ** 31:
            check_close(name, out, naive(), 2e-2, 2e-2)
        return {name: (what, fn)}

    return setup, 4.0 * b * h * s * sk * d / (2 if causal else 1), "TFLOPS"


def bmm_case(name, path, tag, shape):
    m = re.fullmatch(r"b(\d+)m(\d+)n(\d+)k(\d+)", shape)
    if not m or path not in ("strided", "strided_mbk"):
        return None
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
        check_close(name, torch.einsum("mbk,bkn->bmn", a_mbk, bb), torch.bmm(a, bb), rtol, atol * k ** 0.5)
        return {name: ('torch.einsum("mbk,bkn->bmn")', lambda: torch.einsum("mbk,bkn->bmn", a_mbk, bb))}

    return setup, 2.0 * b * mm * n * k, "TFLOPS"


def nccl_case(name, variant, size, ranks):
    nbytes = parse_bytes(size)
    if ranks != "g1" or nbytes is None or nbytes < 4 or variant not in ("allreduce_inplace", "allgather", "reducescatter"):
        return None  # one process, one GPU: what this script can be beside bench_nccl on one GPU

    def setup():
        import torch.distributed as dist
        if not dist.is_initialized():
            os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
            os.environ.setdefault("MASTER_PORT", "29533")
            dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda", 0))
        x = torch.rand(nbytes // 4, device="cuda")
        y = torch.empty_like(x)
        what, fn = {"allreduce_inplace": ("dist.all_reduce (in place)", lambda: dist.all_reduce(x)),
                    "allgather": ("dist.all_gather_into_tensor", lambda: dist.all_gather_into_tensor(y, x)),
                    "reducescatter": ("dist.reduce_scatter_tensor", lambda: dist.reduce_scatter_tensor(y, x))}[variant]
        return {name: (what, fn)}

    return setup, float(nbytes), "algbw_GBps"


def named_cases(names, pattern):
    for name in names:
        if not pattern.search(name):
            continue
        parts = name.split("/")
        made = None
        if parts[0] == "matmul" and len(parts) == 4 and parts[1] == "cublaslt":
            made = matmul_case(name, parts[2], parts[3])
        elif parts[0] == "attention" and len(parts) in (4, 5):
            made = attention_case(name, parts[1], parts[2], parts[3], len(parts) == 5 and parts[4] == "causal")
        elif parts[0] == "bmm" and len(parts) == 4:
            made = bmm_case(name, parts[1], parts[2], parts[3])
        elif parts[0] == "nccl" and len(parts) == 5:
            made = nccl_case(name, parts[1], parts[3], parts[4])
        if made is None:
            print(f"{name}: no PyTorch counterpart here, left out", file=sys.stderr)
            continue
        yield made


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write Google Benchmark JSON here")
    ap.add_argument("--filter", default="", help="only names matching this regular expression")
    ap.add_argument("--cases", help="time PyTorch's counterparts of these gpucheck names (one a line: bench_X --list)")
    args = ap.parse_args()
    pattern = re.compile(args.filter)
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    hold = Hold()
    props = torch.cuda.get_device_properties(0)
    out = {
        "context": {
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "executable": "ci/torch_reference.py",
            "gpu_name": props.name,
            "library": "torch " + torch.__version__,
            "cuda_runtime": str(torch.version.cuda),
            "cudnn": str(torch.backends.cudnn.version()),
            "timing": f"held: {CALLS} calls queued behind torch.cuda._sleep, median of {SAMPLES} samples; "
                      "attention as a power burst (0.3 s idle, 5 warm-up calls, median of 20 held samples of >= 0.5 ms)",
        },
        "benchmarks": [],
    }
    if args.cases:
        with open(args.cases) as f:
            gens = (named_cases([l.strip() for l in f if l.strip()], pattern),)
    else:
        gens = (bmm_cases(pattern), conv_cases(pattern), attention_cases(pattern))
    print(f"{'name':48s} {'held rate':>13s} {'per-call':>9s} {'dispatch us':>12s}  call")
    for gen in gens:
        for setup, amount, counter in gen:
            per_ms = 1e9 if counter == "TFLOPS" else 1e6  # FLOP/ms -> TFLOP/s; bytes/ms -> GB/s
            cases = setup()  # operands, and the outputs checked against the reference
            for name, (what, fn) in cases.items():
                if not pattern.search(name):
                    continue
                burst = name.startswith(("attention/", "matmul/"))  # timed as power bursts, like ours
                held = burst_ms(hold, fn) if burst else held_ms(hold, fn)
                per_call = per_call_ms(fn)
                rate = amount / held / per_ms
                out["benchmarks"].append({
                    "name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
                    "repetition_index": 0, "threads": 1, "iterations": CALLS * SAMPLES,
                    "real_time": held * 1e3, "cpu_time": held * 1e3, "time_unit": "us",
                    counter: rate, "per_call_" + counter: amount / per_call / per_ms,
                    "dispatch_us": (per_call - held) * 1e3, "label": what,
                })
                print(f"{name:48s} {rate:13.2f} {amount / per_call / per_ms:9.2f} {(per_call - held) * 1e3:12.2f}  {what}",
                      flush=True)
            del cases
            torch.cuda.empty_cache()
    set_tf32(False)
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
