#!/usr/bin/env python3
"""ci/torch_reference.py's pure helpers, without torch or a GPU: bench_attention's shape labels
(kv, sk), the bottom-right causal mask, the reference rows, the engine's batch rule, the
one-rank NCCL counterparts, the axes session's table from both sides' JSON, and the GEMM parity
table's kernel names as bench_matmul makes them (the table itself: test_gemm_parity.py). The timing
needs PyTorch and a GPU (ci/axes_session.sh); a test of it here would skip, so there is none."""
import json
import os
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_reference_module import SCRIPT, gb_entry, load  # noqa: E402

tr = load()


class AttentionNames(unittest.TestCase):
    def test_labels_round_trip(self):
        for label in ("b4h16s4096d128", "b4h32kv8s4096d128", "b8h32kv8s1sk8192d128", "b8h32kv8s128sk8192d128",
                      "b1h16s1sk8192d128", "b4h16s4096d256"):
            sh = tr.parse_attention_shape(label)
            self.assertIsNotNone(sh, label)
            self.assertEqual(tr.attention_label(sh), label)

    def test_kv_and_sk_default_to_h_and_s(self):
        sh = tr.parse_attention_shape("b4h16s4096d128")
        self.assertEqual((sh.b, sh.h, sh.kv, sh.s, sh.sk, sh.d), (4, 16, 16, 4096, 4096, 128))
        sh = tr.parse_attention_shape("b8h32kv8s1sk8192d128")
        self.assertEqual((sh.b, sh.h, sh.kv, sh.s, sh.sk, sh.d), (8, 32, 8, 1, 8192, 128))
        # a label that spells kv == h is read, and printed the way bench_attention prints it
        self.assertEqual(tr.attention_label(tr.parse_attention_shape("b2h8kv8s64d64")), "b2h8s64d64")

    def test_not_a_label(self):
        for bad in ("", "b4h16s4096", "b4h16s4096d128x", "h16s4096d128", "b0h16s4096d128", "b4h16kvs4096d128"):
            self.assertIsNone(tr.parse_attention_shape(bad), bad)

    def test_unrunnable(self):
        p = tr.parse_attention_shape
        self.assertIsNone(tr.attention_unrunnable(p("b4h32kv8s4096d128"), True))
        self.assertIsNone(tr.attention_unrunnable(p("b8h32kv8s128sk8192d128"), True))
        self.assertIn("multiple", tr.attention_unrunnable(p("b4h32kv6s64d64"), False))
        self.assertIn("seq_q <= seq_k", tr.attention_unrunnable(p("b1h8s128sk64d64"), True))
        self.assertIsNone(tr.attention_unrunnable(p("b1h8s128sk64d64"), False))

    def test_flops_count_query_heads_and_both_lengths(self):
        sh = tr.parse_attention_shape("b8h32kv8s128sk8192d128")
        self.assertEqual(tr.attention_flops(sh, False), 4.0 * 8 * 32 * 128 * 8192 * 128)
        # bench_attention's causal count: s_q * (s_k - s_q / 2) pairs (the diagonal by half)
        self.assertEqual(tr.attention_flops(sh, True), 4.0 * 8 * 32 * 128 * (8192 - 64) * 128)
        sq = tr.parse_attention_shape("b4h16s4096d128")  # s_q == s_k: the usual s^2 / 2
        self.assertEqual(tr.attention_flops(sq, True), 2.0 * 4 * 16 * 4096 * 4096 * 128)

    def test_causal_mask_is_bottom_right_aligned(self):
        # torch.nn.attention.bias.causal_lower_right's docstring, shape (3, 4): 1 = attended
        seen = [[0 if tr.causal_masked(i, j, 3, 4) else 1 for j in range(4)] for i in range(3)]
        self.assertEqual(seen, [[1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]])
        # square: the usual triangle (SDPA's is_causal)
        self.assertEqual([[int(not tr.causal_masked(i, j, 3, 3)) for j in range(3)] for i in range(3)],
                         [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
        # one query against 8192 keys (a decode step) sees every key
        self.assertFalse(any(tr.causal_masked(0, j, 1, 8192) for j in range(8192)))


class ReferenceRows(unittest.TestCase):
    def test_twins(self):
        self.assertEqual(tr.reference_twins("attention/flash/fp16/b4h16s4096d256"),
                         ["attention/torch_efficient/fp16/b4h16s4096d256"])
        self.assertEqual(tr.reference_twins("attention/cudnn/fp16/b4h32kv8s4096d128/causal"),
                         ["attention/torch_efficient/fp16/b4h32kv8s4096d128/causal"])
        self.assertEqual(tr.reference_twins("matmul/cublaslt/bf16/512x512x512"), ["matmul/torch_cublaslt/bf16/512x512x512"])
        for none in ("matmul/cublaslt/fp8e4m3/512x512x512", "matmul/cublaslt_sustained/bf16/8192x8192x8192",
                     "attention/torch_efficient/fp16/b4h16s4096d64", "bmm/strided/fp16/b64m512n512k512",
                     "nccl/allgather/fp32/1MiB/g1"):
            self.assertEqual(tr.reference_twins(none), [], none)

    def test_each_name_once_twin_after_its_first_case(self):
        names = ["attention/naive/fp16/b4h16s4096d64", "attention/flash/fp16/b4h16s4096d64",
                 "attention/cudnn/fp16/b4h16s4096d64", "attention/flash/fp16/b4h16s4096d64/causal"]
        self.assertEqual(tr.with_reference_rows(names), [
            "attention/naive/fp16/b4h16s4096d64", "attention/torch_efficient/fp16/b4h16s4096d64",
            "attention/flash/fp16/b4h16s4096d64", "attention/cudnn/fp16/b4h16s4096d64",
            "attention/flash/fp16/b4h16s4096d64/causal", "attention/torch_efficient/fp16/b4h16s4096d64/causal"])


class Engine(unittest.TestCase):
    def test_choose_batch_as_measure_cpp(self):
        # tests/unit/test_measure.cpp's cases of the C++ rule, one for one
        nan = float("nan")
        for args, want in (((1e-3, 5e-4, 1, 64), 1), ((1e-4, 5e-4, 1, 64), 5), ((1.01e-4, 5e-4, 1, 64), 5),
                           ((1e-6, 5e-4, 1, 64), 64), ((1e-3, 5e-4, 20, 64), 20), ((0.0, 5e-4, 1, 64), 64),
                           ((nan, 5e-4, 1, 64), 64), ((1e-6, 5e-4, 1, 1), 1), ((1e-6, 5e-4, 5, 0), 1)):
            self.assertEqual(tr.choose_batch(*args), want, args)
        # the defaults are the burst's: samples of >= 0.5 ms, 1..64 calls
        self.assertEqual(tr.choose_batch(1e-5), 50)
        self.assertEqual(tr.choose_batch(5e-4), 1)
        self.assertEqual(tr.choose_batch(1e-2), 1)
        self.assertEqual(tr.choose_batch(3e-6), 64)  # a 512^3 bf16 GEMM: capped
        self.assertEqual(tr.choose_batch(0.0), 64)
        self.assertEqual(tr.choose_batch(-1.0), 64)
        self.assertEqual(tr.choose_batch(float("nan")), 64)
        self.assertEqual(tr.choose_batch(2.6e-5), 20)  # 2048^3 bf16 at ~660 TFLOP/s

    def test_whole_turns_as_measure_cpp(self):
        # tests/unit/test_measure.cpp's figures, one for one
        for args, want in (((193, 1, 1024), 193), ((193, 0, 1024), 193), ((193, -3, 1024), 193),
                           ((193, 4, 1024), 196), ((196, 4, 1024), 196), ((27, 4, 64), 28), ((1, 3, 64), 3),
                           ((0, 3, 64), 3), ((1023, 5, 1024), 1020), ((64, 5, 64), 60), ((1, 8, 4), 8)):
            self.assertEqual(tr.whole_turns(*args), want, args)

    def test_copies_read_from_a_label(self):
        self.assertEqual(tr.copies_of("F.linear(x, w): cuBLAS T,N m=N n=M k=K, fp32 accumulate, copies=4"), 4)
        self.assertEqual(tr.copies_of("F.linear(x, w): cuBLAS T,N m=N n=M k=K, fp32 accumulate"), 1)
        self.assertEqual(tr.copies_of("ncopies=3"), 1)
        self.assertEqual(tr.copies_of(""), 1)
        self.assertEqual(tr.copies_of(None), 1)

    def test_linear_copies_warmup_and_plateau_as_matmul_hpp(self):
        # tests/unit/test_case_tables.cpp's figures of the C++ rule, one for one
        mib, l2 = 1 << 20, 50 << 20
        gib = mib << 10
        for args, want in (((32 * mib + 8192, l2), 5), ((48 * mib + 131072, l2), 4), ((100 * mib, l2), 4),
                           ((100 * mib - 1, l2), 4), ((940 * mib, l2), 4), ((2 * gib, l2), 4), ((2 * gib + 1, l2), 1),
                           ((1 << 62, l2), 1), ((mib, l2), tr.MAX_LINEAR_COPIES), ((0, l2), 1), ((mib, 0), 4)):
            self.assertEqual(tr.linear_copies(*args), want, args)
        self.assertEqual(tr.MAX_LINEAR_COPIES, 8)
        self.assertEqual((tr.MIN_LINEAR_COPIES, tr.PLACEMENT_COPIES_BYTES), (4, 8 << 30))
        self.assertEqual(tr.LINEAR_WARMUP_S, 0.2)
        self.assertEqual(tr.LINEAR_METHOD, 8)
        self.assertEqual((tr.LINEAR_GROUPS, tr.LINEAR_GROUPS_MAX_TOKENS, tr.REDRAW_BYTES), (5, 128, 256 << 20))  # matmul.hpp, engine.hpp
        self.assertEqual((tr.LINEAR_PLATEAU_LOAD_S, tr.LINEAR_PLATEAU_S), (0.2, 0.4))
        self.assertEqual((tr.PLATEAU_SAMPLE_MS, tr.PLATEAU_MAX_BATCH), (5.0, 1024))  # test_measure.cpp's
        self.assertEqual(tr.choose_batch(14e-6, tr.PLATEAU_SAMPLE_MS / 1e3, 1, tr.PLATEAU_MAX_BATCH), 358)
        for tokens, warm, plateau, groups in ((1, 0.2, False, 5), (16, 0.2, False, 5), (17, 0.0, True, 5),
                                              (128, 0.0, True, 5), (129, 0.0, True, 1), (1024, 0.0, True, 1),
                                              (8192, 0.0, True, 1)):
            self.assertEqual(tr.linear_warmup_s(tokens), warm, tokens)
            self.assertEqual(tr.linear_plateau(tokens), plateau, tokens)
            self.assertEqual(tr.linear_groups(tokens), groups, tokens)

    def test_weight_bound_bursts_as_matmul_hpp(self):
        # matmul.hpp weight_bound / case_groups / kWeightBoundMethod (test_case_tables.cpp)
        self.assertEqual(tr.WEIGHT_BOUND_METHOD, 2)
        for name, bound in (("matmul/cublaslt/bf16/16x28672x8192", True), ("matmul/cublaslt/fp16/1x4096x4096", True),
                            ("matmul/cublaslt/bf16/17x28672x8192", False), ("matmul/cublaslt/bf16/8192x8192x8192", False),
                            ("matmul/cublaslt_sustained/bf16/16x28672x8192", False),
                            ("matmul/linear/bf16/16x28672x8192", False), ("matmul/cublaslt/bf16/16x28672", False),
                            ("attention/flash/fp16/b4h16s4096d128", False)):
            self.assertEqual(tr.weight_bound(name), bound, name)

    def test_gemm_m_reads_m_of_that_variant_only(self):
        self.assertEqual(tr.gemm_m("matmul/linear/bf16/1024x4096x4096", "linear"), 1024)
        self.assertEqual(tr.gemm_m("matmul/linear/fp8e4m3/16x4096x14336", "linear"), 16)
        self.assertEqual(tr.gemm_m("matmul/cublaslt/bf16/16x28672x8192", "cublaslt"), 16)
        for name, variant in (("matmul/linear/bf16/1024x4096x4096", "cublaslt"),
                              ("matmul/cublaslt_sustained/bf16/16x28672x8192", "cublaslt"),
                              ("matmul/linear/bf16/1024x4096", "linear"), ("matmul/linear/bf16/ax4096x4096", "linear"),
                              ("matmul/linear/1024x4096x4096", "linear"), ("attention/flash/fp16/b4h16s4096d128", "linear")):
            self.assertIsNone(tr.gemm_m(name, variant), (name, variant))

    def test_fastest_group_as_measure_cpp(self):
        # tests/unit/test_measure.cpp's figures, one for one
        index, spread = tr.fastest_group([234.2e-6, 213.6e-6, 234.0e-6, 213.8e-6, 213.7e-6])
        self.assertEqual(index, 1)
        self.assertAlmostEqual(spread, 234.2 / 213.6 - 1, places=12)
        self.assertEqual(tr.fastest_group([5e-6]), (0, 0.0))
        self.assertEqual(tr.fastest_group([7e-6, 5e-6, 5e-6])[0], 1)
        self.assertIsNone(tr.fastest_group([]))
        for bad in (0.0, -1e-6, float("nan"), float("inf")):
            self.assertIsNone(tr.fastest_group([5e-6, bad, 4e-6]), bad)

    def test_blas_library_names_pytorchs_preferred_one(self):
        import types
        saved = tr.torch
        try:
            for got, want in ((types.SimpleNamespace(name="Cublaslt"), "cublaslt"), ("Cublas", "cublas")):
                tr.torch = types.SimpleNamespace(backends=types.SimpleNamespace(
                    cuda=types.SimpleNamespace(preferred_blas_library=lambda got=got: got)))
                self.assertEqual(tr.blas_library(), want)
            tr.torch = types.SimpleNamespace(backends=types.SimpleNamespace(cuda=types.SimpleNamespace()))
            self.assertIsNone(tr.blas_library())  # an older torch without it
        finally:
            tr.torch = saved

    @staticmethod
    def steps(readings):
        e = tr.EnergySteps()
        for t, joules in readings:
            e.add(t, joules)
        return e

    def test_read_pacer_as_energy_cpp(self):
        # test_precision.cpp's PlateauReadings cases, one for one
        p = tr.ReadPacer()
        self.assertTrue(p.due(0.0))
        p.took(0.000, 0.006)
        self.assertFalse(p.due(0.006))
        self.assertFalse(p.due(0.0119))
        self.assertTrue(p.due(0.012))
        p.took(0.012, 0.013)
        self.assertFalse(p.due(0.0135))
        self.assertTrue(p.due(0.014))
        p.reset()
        self.assertTrue(p.due(0.0131))
        nan, inf = float("nan"), float("inf")
        for start, end in ((0.0, nan), (nan, 0.1), (0.0, inf), (0.2, 0.1)):
            p = tr.ReadPacer()
            p.took(0.0, 0.05)
            self.assertFalse(p.due(0.06))
            p.took(start, end)
            self.assertTrue(p.due(0.06), (start, end))
        p = tr.ReadPacer()
        p.took(0.0, 0.05)
        self.assertTrue(p.due(nan))

    def test_a_plateaus_readings_take_the_clock_at_every_second_one_as_engine_cpp(self):
        self.assertEqual([tr.plateau_reads_clock(k) for k in (0, 1, 2, 81)], [True, False, True, False])
        marks = []
        window = types.SimpleNamespace(read=lambda: marks.append("energy"))
        both = tr.probed(lambda: marks.append("clock"), window)
        for _ in range(4):
            both()
        self.assertEqual(marks, ["clock", "energy", "energy", "clock", "energy", "energy"])
        probe = lambda: None  # noqa: E731
        self.assertIs(tr.probed(probe, None), probe)
        self.assertIsNone(tr.probed(None, None))
        marks.clear()
        only = tr.probed(None, window)
        only()
        only()
        self.assertEqual(marks, ["energy", "energy"])

    def test_energy_steps_as_energy_cpp(self):
        # test_precision.cpp's BurstPower cases, one for one
        self.assertEqual(tr.MAX_STEP_TIMING_FRACTION, 0.1)
        e = self.steps([(0.000, 1000.0), (0.095, 1000.0), (0.100, 1070.0), (0.195, 1070.0), (0.200, 1140.0),
                        (0.295, 1140.0), (0.300, 1210.0), (0.400, 1210.0)])
        self.assertEqual(e.moves, 3)
        self.assertAlmostEqual(e.power_W(), 140.0 / 0.2)
        for readings in ([], [(0.0, 5.0), (0.01, 5.0)], [(0.0, 5.0), (0.005, 5.0), (0.01, 77.0)],
                         [(0.0, None), (0.1, None), (0.2, None)],
                         [(0.00, 0.0), (0.03, 70.0), (0.10, 70.0), (0.13, 140.0)],
                         [(0.000, 0.0), (0.011, 70.0), (0.100, 70.0), (0.111, 140.0)],
                         [(0.0, 5000.0), (0.005, 5070.0), (0.1, 12.0), (0.105, 82.0), (0.2, 152.0)]):
            self.assertIsNone(self.steps(readings).power_W(), readings)
        self.assertAlmostEqual(self.steps([(0.000, 0.0), (0.005, 70.0), (0.100, 70.0), (0.105, 140.0)]).power_W(), 700.0)
        self.assertAlmostEqual(self.steps([(0.000, 0.0), (0.006, 70.0), (0.100, 70.0), (0.106, 140.0)]).power_W(), 700.0)
        self.assertAlmostEqual(self.steps([(0.000, 0.0), (0.002, 70.0), (0.099, 70.0), (0.117, 140.0)]).power_W(),
                               70.0 / (0.108 - 0.001))
        nan, inf = float("nan"), float("inf")
        e = self.steps([(0.000, 0.0), (0.005, 70.0), (0.05, nan), (0.06, inf), (nan, 500.0), (0.004, 900.0),
                        (0.100, 70.0), (0.105, 140.0)])
        self.assertAlmostEqual(e.power_W(), 700.0)

    def test_energy_window_reads_between_start_and_stop_and_keeps_its_first_start(self):
        clock = iter([0.0, 0.005, 0.1, 0.105, 0.2])
        joules = iter([0.0, 70.0, 70.0, 140.0, 140.0])
        w = tr.EnergyWindow(lambda: next(joules), lambda: next(clock))
        w.read()  # before the start: not read
        self.assertIsNone(w.power_W())
        w.start()
        w.start()  # a later start reads nothing and keeps the window
        w.read()
        w.read()
        self.assertIsNone(w.power_W())  # not stopped
        w.read()
        w.stop()
        self.assertAlmostEqual(w.power_W(), 700.0)
        w.read()  # after the stop: not read (the clock has nothing left)
        w.stop()
        self.assertAlmostEqual(w.power_W(), 700.0)
        unread = tr.EnergyWindow(lambda: None, iter([0.0, 0.1, 0.2]).__next__)
        unread.start()
        unread.read()
        unread.stop()
        self.assertIsNone(unread.power_W())  # NVML gave no counter

    def test_burst_groups_settle_once_and_report_the_fastest(self):
        calls, medians = [], iter([0.234, 0.2136, 0.2342])

        def burst(first):
            calls.append(first)
            m = next(medians)
            return (m, 8, 0, 0.1, 20, None), [1980 + len(calls)]
        run, spread, readings = tr.burst_groups(3, burst)
        self.assertEqual(calls, [True, False, False])  # settle and cool-down before the first only
        self.assertEqual(run[0], 0.2136)
        self.assertAlmostEqual(spread, 0.2342 / 0.2136 - 1)
        self.assertEqual(readings, [1982])  # the chosen group's clock readings, as power_over's
        calls.clear()
        run, spread, _ = tr.burst_groups(1, lambda first: (calls.append(first) or ((0.5, 1, 0, 0, 20, None), [])))
        self.assertEqual((calls, run[0], spread), ([True], 0.5, None))
        with self.assertRaises(RuntimeError):
            tr.burst_groups(2, lambda first: ((float("nan"), 1, 0, 0, 20, None), []))

    def test_follow_batch_as_the_engine(self):
        # test_measure.cpp's APlateausLoadFollowsTheSteadyCallTimeWhenItIsAQuarterAway
        for batch, per_call, want in ((100, 15e-6, 334), (1024, 15e-6, 334), (300, 15e-6, 300), (267, 15e-6, 334),
                                      (268, 15e-6, 268), (417, 15e-6, 417), (418, 15e-6, 334), (1, 11e-3, 1),
                                      (5, 0.0, 1024)):
            self.assertEqual(tr.follow_batch(batch, per_call, 5e-3, 1, 1024), want, (batch, per_call))

    def test_plateau_counts_only_the_window_as_the_engine(self):
        # test_measure.cpp's APlateauDiscardsItsLoadAndCountsTheWindowOnly, one for one: samples
        # of 1/1024 s during the load, 2/1024 s after it; 0.25 s not counted, 0.5 s counted.
        unit, elapsed, counted, discarded = 1.0 / 1024, 0.0, 0, 0
        while (step := tr.plateau_next(elapsed, counted, 0.25, 0.5)) != "stop":
            if step == "count":
                counted += 1
                elapsed += 2 * unit
            else:
                discarded += 1
                elapsed += unit
        self.assertEqual((discarded, counted, elapsed), (256, 256, 0.75))
        # Boundaries: the load ends exactly at load_s; the window needs its 10 counted samples.
        self.assertEqual(tr.plateau_next(0.0, 0), "discard")
        self.assertEqual(tr.plateau_next(0.2, 0), "count")
        self.assertEqual(tr.plateau_next(0.2 + 0.4, 10), "stop")  # the same sum as the engine's limit
        self.assertEqual(tr.plateau_next(0.59, 10), "count")
        self.assertEqual(tr.plateau_next(0.61, 9), "count")  # a long call still gets its 10
        self.assertEqual(tr.plateau_next(5.0, 9), "count")

    def test_dotted_versions_as_our_context(self):
        self.assertEqual(tr.dotted_version(130100), "13.1.0")
        self.assertEqual(tr.dotted_version(91900), "9.19.0")
        self.assertEqual(tr.dotted_version(22809), "2.28.9")


class FakeCuda:
    """torch.cuda as the plateau's sampler uses it, on a simulated device that never idles: each
    call adds call_s of device time, an event records the device time queued before it, a
    graph counts the calls captured into it and adds them on each replay."""

    class Event:
        def __init__(self, cuda, enable_timing=False):
            self.cuda, self.at = cuda, None

        def record(self):
            assert self.cuda.capturing is None, "an event recorded inside a capture"
            self.at = self.cuda.t

        def synchronize(self):
            pass

        def query(self):  # the device never reaches a held sample's start before it is queued
            return False

        def elapsed_time(self, other):
            return (other.at - self.at) * 1e3

    class Stream:
        def wait_stream(self, other):
            pass

        def synchronize(self):
            pass

    class Graph:
        def __init__(self, cuda):
            self.cuda, self.calls = cuda, 0

        def replay(self):
            self.cuda.t += self.calls * self.cuda.call_s
            self.cuda.replays += 1

    def __init__(self, call_s):
        self.call_s, self.t, self.capturing, self.replays, self.captures, self.eager = call_s, 0.0, None, 0, [], 0
        self.holds = []

    def call(self):
        if self.capturing is not None:
            self.capturing.calls += 1
        else:
            self.t += self.call_s
            self.eager += 1

    def synchronize(self):
        pass

    def _sleep(self, cycles):  # a hold: before the start event, so never timed
        self.holds.append(cycles)

    def current_stream(self):
        return self.Stream()

    def stream(self, s):
        import contextlib
        return contextlib.nullcontext()

    def CUDAGraph(self):  # noqa: N802 (torch's name)
        return self.Graph(self)

    def graph(self, g, stream=None):
        import contextlib
        cuda = self

        @contextlib.contextmanager
        def capture():
            cuda.capturing = g
            try:
                yield
            finally:
                cuda.capturing = None
                cuda.captures.append(g.calls)
        return capture()


class PlateauSampler(unittest.TestCase):
    """burst_ms's plateau (harness::power_plateau) on FakeCuda: no GPU, no torch."""

    def setUp(self):
        self.saved = tr.torch

    def tearDown(self):
        tr.torch = self.saved

    def fake(self, call_s):
        import types
        cuda = FakeCuda(call_s)
        cuda.Event = lambda enable_timing=False: FakeCuda.Event(cuda, enable_timing)
        cuda.made = []  # every stream made with torch.cuda.Stream, in order
        main = FakeCuda.Stream()
        cuda.current_stream = lambda: main

        def stream():
            cuda.made.append(FakeCuda.Stream())
            return cuda.made[-1]
        cuda.Stream = stream
        tr.torch = types.SimpleNamespace(cuda=cuda)
        return cuda

    def test_every_capture_runs_on_the_stream_its_graph_replays_on(self):
        # Captured on a side stream and replayed on the samples' stream, PyTorch's 128-token and
        # fp8 decode rows read 0.3-0.5 us a call slower than ours, which captures on the stream
        # it replays on (2026-12-04); a new side stream a capture had read the split-K rows 5-6%
        # slower before that.
        cuda = self.fake(15e-6)
        used = []
        real_graph = cuda.graph
        cuda.graph = lambda g, stream=None: (used.append(stream), real_graph(g, stream))[1]
        tr.burst_ms(None, cuda.call, settle_s=0, plateau=(0.02, 0.04))
        tr.burst_ms(None, cuda.call, settle_s=0, plateau=(0.02, 0.04))
        self.assertEqual(cuda.captures, [1, 334, 1, 334])
        self.assertEqual(cuda.made, [])  # no side stream
        self.assertEqual(len(used), 4)
        self.assertTrue(all(s is cuda.current_stream() for s in used))

    def test_graph_replays_of_a_batch_sized_for_5_ms_and_only_the_window_counted(self):
        cuda = self.fake(15e-6)
        ms, batch, retries, cv, n, issue_us = tr.burst_ms(None, cuda.call, settle_s=0, plateau=(0.02, 0.04))
        self.assertAlmostEqual(ms, 15e-3)  # per call, in ms
        self.assertEqual(batch, 334)  # 5 ms of 15 us calls
        self.assertEqual(retries, 0)
        self.assertAlmostEqual(cv, 0.0, places=6)
        self.assertGreaterEqual(n, 10)
        # Captured once per batch size (1 to size it, then 334), each after one warm-up call on
        # its side stream; the 5 warm-up calls of the burst are eager.
        self.assertEqual(cuda.captures, [1, 334])
        self.assertEqual(cuda.eager, 5 + 2)
        self.assertGreater(cuda.replays, n)  # the discarded load's samples replay too
        self.assertLess(issue_us, 15.0)

    def test_plateau_batches_are_whole_turns_of_the_copies(self):
        cuda = self.fake(15e-6)
        ms, batch, *_ = tr.burst_ms(None, cuda.call, settle_s=0, plateau=(0.02, 0.04), batch_turns=3)
        self.assertAlmostEqual(ms, 15e-3)
        self.assertEqual(batch, 336)  # 334, up to a multiple of 3
        self.assertEqual(cuda.captures, [1, 336])  # the calibration's one call is not rounded up

    def test_held_graph_samples_capture_before_the_hold_and_replay_whole_turns(self):
        import types
        cuda = self.fake(16e-6)
        hold = types.SimpleNamespace(cycles=lambda ms: int(ms * 1e6))
        ms, batch, retries, cv, n, issue_us = tr.burst_ms(hold, cuda.call, settle_s=0, graph=True, batch_turns=4)
        self.assertAlmostEqual(ms, 16e-3)  # per call: neither the capture nor the hold is timed
        self.assertEqual(batch, 32)  # 0.5 ms of 16 us calls is 32: already whole turns of 4
        self.assertEqual((retries, n), (0, 20))
        self.assertIsNone(issue_us)
        self.assertEqual(cuda.captures, [1, 32])
        # one untimed replay after each capture, then the calibration's and the 20 samples'
        self.assertEqual(cuda.replays, 2 + 1 + 20)
        self.assertEqual(cuda.eager, 5 + 2)  # the warm-up, and one call before each capture
        self.assertEqual(len(cuda.holds), 21)

    def test_the_redraw_runs_after_the_cool_down_and_before_the_warm_up(self):
        import types
        cuda = self.fake(16e-6)
        hold = types.SimpleNamespace(cycles=lambda ms: int(ms * 1e6))
        order = []
        tr.burst_ms(hold, cuda.call, settle_s=0, graph=True, batch_turns=4,
                    cool_down=lambda: order.append(("cool", cuda.eager)),
                    before_warmup=lambda: order.append(("redraw", cuda.eager)))
        self.assertEqual(order, [("cool", 0), ("redraw", 0)])  # no call of the case before either
        self.assertEqual(cuda.eager, 5 + 2)

    def test_the_energy_window_spans_the_timed_samples_as_power_over(self):
        import types
        cuda = self.fake(16e-6)
        hold = types.SimpleNamespace(cycles=lambda ms: int(ms * 1e6))
        marks = []

        class Window:
            def start(self):
                marks.append(("start", cuda.replays))

            def read(self):
                marks.append(("read", cuda.replays))

            def stop(self):
                marks.append(("stop", cuda.replays))
        tr.burst_ms(hold, cuda.call, settle_s=0, graph=True, batch_turns=4, energy=Window())
        # held: after the batch-sizing sample (the first capture's untimed replay and its own),
        # the stop after the 20 samples (the second capture and its untimed replay come with
        # the first); no read between them (a reading's ~4 ms would idle the card between samples)
        self.assertEqual(marks, [("start", 1 + 1), ("stop", 2 + 1 + 20)])
        cuda = self.fake(15e-6)
        marks.clear()
        ms, batch, retries, cv, n, issue_us = tr.burst_ms(None, cuda.call, settle_s=0, plateau=(0.02, 0.04),
                                                          energy=Window())
        # a plateau: started before its first counted sample (each counted one calls start,
        # which keeps the first mark), read during counted samples as paced (ReadPacer: at most
        # one a sample), stopped once the last is drained
        starts = [m for m in marks if m[0] == "start"]
        reads = [m for m in marks if m[0] == "read"]
        self.assertEqual(len(starts), n)
        self.assertTrue(1 <= len(reads) <= n, (len(reads), n))
        self.assertEqual(marks[-1], ("stop", cuda.replays))
        self.assertEqual(len(marks), n + len(reads) + 1)
        self.assertEqual(starts[0][1], cuda.replays - n)  # the load's samples replayed before it

    def test_held_eager_samples_round_to_whole_turns_too(self):
        import types
        cuda = self.fake(16e-6)
        hold = types.SimpleNamespace(cycles=lambda ms: int(ms * 1e6))
        ms, batch, *_ = tr.burst_ms(hold, cuda.call, settle_s=0, batch_turns=3)
        self.assertAlmostEqual(ms, 16e-3)
        self.assertEqual(batch, 33)  # 32, up to a multiple of 3
        self.assertEqual(cuda.captures, [])
        self.assertEqual(cuda.eager, 5 + 1 + 20 * 33)

    def test_a_plateaus_readings_are_paced_as_the_engines(self):
        # Read every sample, 6 ms of readings against 5.4 ms samples left the card idle between
        # them (energy.hpp ReadPacer); paced, a reading waits until the host has spent as long
        # again since the last one ended. A fake host clock: each reading adds 6 ms, a wait for
        # a sample's end moves the host to it.
        import types
        cuda = self.fake(5.4e-3)
        clock = [0.0]
        saved_time, saved_sync = tr.time, FakeCuda.Event.synchronize
        tr.time = types.SimpleNamespace(perf_counter=lambda: clock[0], sleep=lambda s: None)
        FakeCuda.Event.synchronize = lambda ev: clock.__setitem__(0, max(clock[0], ev.at))
        try:
            for paced in (True, False):
                clock[0], cuda.t, reads = 0.0, 0.0, []

                def probe():
                    reads.append(clock[0])
                    clock[0] += 6e-3
                q = tr.QueuedSampler(cuda.call, probe=probe)
                if not paced:
                    q.pacer.due = lambda now: True
                for _ in range(75):
                    self.assertAlmostEqual(q.sample_ms(1), 5.4)
                if paced:
                    self.assertTrue(20 <= len(reads) <= 38, len(reads))
                    self.assertTrue(all(b - a >= 12e-3 - 1e-12 for a, b in zip(reads, reads[1:])))
                else:
                    self.assertEqual(len(reads), 75)
        finally:
            tr.time, FakeCuda.Event.synchronize = saved_time, saved_sync

    def test_the_windows_first_energy_reading_is_paced_as_the_others(self):
        # engine.cpp counting_starts: the energy window's first reading counts as one, so the
        # first counted sample does not read again at once. A fake host clock as above: each
        # reading adds 6 ms; 5.4 ms calls, one a sample.
        import types
        cuda = self.fake(5.4e-3)
        clock, marks = [0.0], []
        saved_time, saved_sync = tr.time, FakeCuda.Event.synchronize
        tr.time = types.SimpleNamespace(perf_counter=lambda: clock[0], sleep=lambda s: None)
        FakeCuda.Event.synchronize = lambda ev: clock.__setitem__(0, max(clock[0], ev.at))

        class Window:
            def __init__(self):
                self.started = False

            def start(self):
                if not self.started:
                    self.started = True
                    marks.append(("start", clock[0]))
                    clock[0] += 6e-3

            def read(self):
                marks.append(("read", clock[0]))
                clock[0] += 6e-3

            def stop(self):
                marks.append(("stop", clock[0]))
        try:
            *_, n, _ = tr.burst_ms(None, cuda.call, settle_s=0, plateau=(0.02, 0.1), energy=Window())
        finally:
            tr.time, FakeCuda.Event.synchronize = saved_time, saved_sync
        reads = [t for what, t in marks if what in ("start", "read")]
        self.assertEqual(marks[0][0], "start")
        self.assertGreater(len(reads), 3)
        self.assertLess(len(reads) - 1, n)  # fewer readings than counted samples
        self.assertTrue(all(b - a >= 12e-3 - 1e-12 for a, b in zip(reads, reads[1:])), reads[:4])

    def test_queued_samples_without_a_graph_time_each_batch(self):
        cuda = self.fake(2e-3)
        q = tr.QueuedSampler(cuda.call)
        self.assertAlmostEqual(q.sample_ms(1), 2.0)
        self.assertAlmostEqual(q.sample_ms(3), 6.0)  # the batch changed: the queue starts afresh
        self.assertAlmostEqual(q.sample_ms(3), 6.0)
        q.drain()
        self.assertEqual(cuda.captures, [])
        self.assertEqual(len(q.issue_s), 5)  # 2 + 2 queued, 1 more behind the third


class Nccl(unittest.TestCase):
    def test_only_what_moves_data_is_compared(self):
        self.assertEqual(tr.nccl_counterpart("allgather", "g1")[0], "dist.all_gather_into_tensor")
        self.assertEqual(tr.nccl_counterpart("reducescatter", "g1")[0], "dist.reduce_scatter_tensor")
        for variant in ("allreduce", "allreduce_inplace", "allgather_inplace", "reducescatter_inplace"):
            what, why = tr.nccl_counterpart(variant, "g1")
            self.assertIsNone(what, variant)
            self.assertIn("report only", why)
        self.assertIsNone(tr.nccl_counterpart("allgather", "g2")[0])

    def test_sizes(self):
        self.assertEqual(tr.parse_bytes("1MiB"), 1 << 20)
        self.assertEqual(tr.parse_bytes("1GiB"), 1 << 30)
        self.assertIsNone(tr.parse_bytes("1M"))


class Table(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, doc):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            if isinstance(doc, str):
                f.write(doc)
            else:
                json.dump(doc, f)
        return path

    def test_key_strips_google_benchmark_suffixes(self):
        self.assertEqual(tr.benchmark_key("matmul/cublaslt/bf16/512x512x512/iterations:1/manual_time"),
                         "matmul/cublaslt/bf16/512x512x512")
        self.assertEqual(tr.benchmark_key("bmm/strided/fp16/b64m512n512k512/threads:1"),
                         "bmm/strided/fp16/b64m512n512k512/threads:1")

    def test_bands(self):
        bands = [tr.parse_band("matmul/cublaslt/=5"), tr.parse_band("attention/=report:different kernels"),
                 tr.parse_band("attention/cudnn/=2.2")]
        self.assertEqual(tr.band_for("matmul/cublaslt/bf16/512x512x512", bands)[1], 5.0)
        self.assertEqual(tr.band_for("attention/cudnn/fp16/b4h16s4096d64", bands)[1], 2.2)  # the longer prefix
        self.assertIsNone(tr.band_for("attention/flash/fp16/b4h16s4096d64", bands)[1])
        self.assertIsNone(tr.band_for("nccl/allgather/fp32/1MiB/g1", bands))
        for bad in ("matmul", "=5", "matmul/=x", "matmul/=0"):
            with self.assertRaises(ValueError):
                tr.parse_band(bad)

    def test_rows_and_verdicts(self):
        ours = {"benchmarks": [
            gb_entry("matmul/cublaslt/bf16/512x512x512", TFLOPS=65.0),
            gb_entry("matmul/cublaslt/bf16/4096x4096x4096", TFLOPS=807.5),
            gb_entry("attention/flash/fp16/b4h16s4096d256", error_occurred=True,
                     error_message="unsupported: our flash kernels are built for head_dim 64 and 128 (got 256)"),
            gb_entry("attention/cudnn/fp16/b4h16s4096d64", skipped=True, skip_message="no engine"),
            gb_entry("nccl/allreduce/fp32/1MiB/g1", algbw_GBps=900.0),
            gb_entry("bmm/strided/fp16/b64m512n512k512", TFLOPS=float("nan"))],
            "context": {"cublas_version": "13.1.0"}}
        torch_doc = {"benchmarks": [
            {"name": "matmul/cublaslt/bf16/512x512x512", "run_type": "iteration", "TFLOPS": 60.0},
            {"name": "matmul/cublaslt/bf16/4096x4096x4096", "run_type": "iteration", "TFLOPS": 818.1},
            {"name": "matmul/torch_cublaslt/bf16/512x512x512", "run_type": "iteration", "TFLOPS": 64.0},
            {"name": "attention/flash/fp16/b4h16s4096d256", "run_type": "iteration", "TFLOPS": 328.8},
            {"name": "nccl/allreduce/fp32/1MiB/g1", "skipped": True, "skip_message": "in place only: report only"}],
            "context": {"cublas_version": "13.0.2"}}
        names = ["matmul/cublaslt/bf16/512x512x512", "matmul/cublaslt/bf16/4096x4096x4096",
                 "attention/flash/fp16/b4h16s4096d256", "attention/cudnn/fp16/b4h16s4096d64",
                 "nccl/allreduce/fp32/1MiB/g1", "bmm/strided/fp16/b64m512n512k512", "bmm/strided_mbk/fp16/b64m512n512k512"]
        octx, o = tr.read_results(self.write("ours.json", json.dumps(ours)))  # NaN written bare, as GB 1.7 does
        tctx, t = tr.read_results(self.write("torch.json", torch_doc))
        bands = [tr.parse_band(b) for b in ("matmul/cublaslt/=5", "attention/cudnn/=2.2", "bmm/=5",
                                            "attention/flash/=report:different kernels",
                                            "nccl/allreduce/=report:moves no data in place")]
        rows = {r[0]: r for r in tr.table_rows(names, o, t, "TFLOPS", bands)}
        self.assertEqual(rows["matmul/cublaslt/bf16/512x512x512"][5], "**outside**")  # +8.3%
        self.assertAlmostEqual(rows["matmul/cublaslt/bf16/512x512x512"][3], 65.0 / 60.0)
        self.assertEqual(rows["matmul/cublaslt/bf16/4096x4096x4096"][5], "inside")  # -1.3%
        self.assertEqual(rows["attention/flash/fp16/b4h16s4096d256"][5],
                         "skipped (ours): our flash kernels are built for head_dim 64 and 128 (got 256)")
        self.assertEqual(rows["attention/cudnn/fp16/b4h16s4096d64"][5], "skipped (ours): no engine")
        self.assertTrue(rows["nccl/allreduce/fp32/1MiB/g1"][5].startswith("ours has no TFLOPS"))
        self.assertEqual(rows["bmm/strided/fp16/b64m512n512k512"][5], "ours has no TFLOPS")  # NaN is no figure
        self.assertEqual(rows["bmm/strided_mbk/fp16/b64m512n512k512"][5], "missing: ours wrote no result")
        self.assertTrue(rows["matmul/torch_cublaslt/bf16/512x512x512"][5].startswith("PyTorch reference only"))
        # order: the case list, then PyTorch's reference rows
        self.assertEqual(list(rows)[-1], "matmul/torch_cublaslt/bf16/512x512x512")
        lines = tr.render_section("GEMM", "TFLOPS", list(rows.values()), octx, tctx)
        text = "\n".join(lines)
        self.assertIn("cuBLAS ours 13.1.0, PyTorch 13.0.2", text)
        self.assertIn("| matmul/cublaslt/bf16/512x512x512 | 65.0 | 60.0 | 1.083 | 5% | **outside** |", text)
        self.assertIn("1 of 2 compared cases inside their band", text)

    def test_report_only_and_pytorch_skips(self):
        ours = {"benchmarks": [gb_entry("nccl/allreduce/fp32/1MiB/g1", algbw_GBps=900.0),
                               gb_entry("nccl/allgather/fp32/1MiB/g1", algbw_GBps=848.0)]}
        theirs = {"benchmarks": [
            {"name": "nccl/allreduce/fp32/1MiB/g1", "skipped": True, "skip_message": "in place only"},
            {"name": "nccl/allgather/fp32/1MiB/g1", "algbw_GBps": 851.0}]}
        _, o = tr.read_results(self.write("o.json", ours))
        _, t = tr.read_results(self.write("t.json", theirs))
        bands = [tr.parse_band("nccl/allgather/=5"), tr.parse_band("nccl/allreduce/=report:in place only")]
        rows = tr.table_rows(["nccl/allreduce/fp32/1MiB/g1", "nccl/allgather/fp32/1MiB/g1"], o, t, "algbw_GBps", bands)
        self.assertEqual(rows[0][5], "skipped (PyTorch): in place only")
        self.assertEqual(rows[1][5], "inside")

    def test_write_table_says_what_is_missing(self):
        prefix = os.path.join(self.dir.name, "gemm")
        self.write("gemm.cases.txt", "matmul/cublaslt/bf16/512x512x512\n\n")
        self.write("gemm.ours.json", {"benchmarks": [gb_entry("matmul/cublaslt/bf16/512x512x512", TFLOPS=65.0)]})
        out = os.path.join(self.dir.name, "table.md")
        tr.write_table(out, [("GEMM bf16", "TFLOPS", prefix), ("nccl", "algbw_GBps", os.path.join(self.dir.name, "nccl"))],
                       [tr.parse_band("matmul/cublaslt/=5")])
        with open(out) as f:
            text = f.read()
        self.assertIn("## GEMM bf16", text)
        self.assertIn("| matmul/cublaslt/bf16/512x512x512 | 65.0 |  |  | 5% | missing: PyTorch wrote no result |", text)
        self.assertIn("torch: no readable JSON", text)
        self.assertIn("## nccl", text)
        self.assertIn("no case list", text)


class ParityKernels(unittest.TestCase):
    """The twin of tests/unit/test_kernel_name.cpp: the same names give the same words."""

    def test_short_names_as_kernel_name_cpp(self):
        self.assertEqual(tr.short_kernel_name("void cutlass::Kernel2<cutlass_80_tensorop_bf16_128x128>"
                                              "(cutlass_80_tensorop_bf16_128x128::Params)"),
                         "cutlass::Kernel2<cutlass_80_tensorop_bf16_128x128>")
        self.assertEqual(tr.short_kernel_name("nvjet_sm90_tst_192x192_64x4_1x2_h_bz_coopB_TNN"),
                         "nvjet_sm90_tst_192x192_64x4_1x2_h_bz_coopB_TNN")
        self.assertEqual(tr.short_kernel_name("kernel(float*, int)"), "kernel")
        self.assertEqual(tr.short_kernel_name("(anonymous namespace)::fill(float*, (anonymous namespace)::Args)"),
                         "(anonymousnamespace)::fill")
        self.assertEqual(tr.short_kernel_name("(unbalanced"), "(unbalanced")
        self.assertEqual(tr.short_kernel_name(
            "void gemv2T_kernel_val<int, int, __nv_bfloat16, float, 128, 16, 4, 4, false, false, "
            "cublasGemvParamsEx<int, cublasGemvTensorStrided<__nv_bfloat16 const>, float> >"
            "(cublasGemvParamsEx<int, cublasGemvTensorStrided<__nv_bfloat16 const>, float>, float, float)"),
            "gemv2T_kernel_val<int,int,__nv_bfloat16,float,128,16,4,4,false,false,cublasGemvParamsEx<int,"
            "cublasGemvTensorStrided<__nv_bfloat16const>,float>>")

    def test_the_longest_kernel_names_the_call(self):
        self.assertIsNone(tr.pick_kernel([]))
        self.assertEqual(tr.pick_kernel([("kernel(float*, int)", 9.0), ("splitKreduce_kernel", 1.0)]), ("kernel", 2))
        self.assertEqual(tr.pick_kernel([("a", 1.0), ("b", 1.0)]), ("a", 2))
        self.assertIsNone(tr.pick_kernel([("", 3.0)]))
        self.assertEqual(tr.kernel_label(("kernel", 2)), "kernel=kernel kernels=2")
        self.assertEqual(tr.kernel_label(("nvjet_x", 1)), "kernel=nvjet_x")
        self.assertEqual(tr.kernel_label(None), "kernel=?")

    def test_a_memset_or_a_copy_is_not_a_kernel(self):
        # As CUPTI's kernel records (ours): a call's memset and copies are not counted.
        def ev(name, us, device="DeviceType.CUDA"):
            return types.SimpleNamespace(name=name, device_type=device,
                                         time_range=types.SimpleNamespace(elapsed_us=lambda us=us: us))
        events = [ev("Memset (Device)", 0.5), ev("nvjet_sm90_tst_x", 400.0), ev("Memcpy DtoD (Device -> Device)", 2.0),
                  ev("cudaLaunchKernel", 3.0, "DeviceType.CPU"), ev("MemsetLike_kernel(int*)", 1.0)]
        self.assertEqual(tr.device_kernels(events), [("nvjet_sm90_tst_x", 400.0), ("MemsetLike_kernel(int*)", 1.0)])
        self.assertEqual(tr.pick_kernel(tr.device_kernels(events)), ("nvjet_sm90_tst_x", 2))
        self.assertEqual(tr.device_kernels([ev("Memset (Device)", 0.5)]), [])

    def test_kernel_from_either_sides_label(self):
        ours = "algo=66 tile=18 stages=10 splitk=1 ws=0 kernel=nvjet_sm90_tst_192x192_64x4_1x2_h_bz_coopB_TNN"
        self.assertEqual(tr.kernel_from_label(ours), "nvjet_sm90_tst_192x192_64x4_1x2_h_bz_coopB_TNN")
        self.assertEqual(tr.kernel_from_label("F.linear(x, w): cuBLAS T,N kernel=gemv2T kernels=2"), "gemv2T")
        self.assertIsNone(tr.kernel_from_label("algo=1 kernel=?"))
        self.assertIsNone(tr.kernel_from_label("algo=1 subkernel=x"))
        self.assertIsNone(tr.kernel_from_label(None))

    def test_what_a_gemm_is(self):
        self.assertEqual(tr.projection_of("matmul/linear/bf16/8192x57344x8192"), "Llama-3 70B gate/up, 8192 tokens")
        self.assertEqual(tr.projection_of("matmul/linear/fp16/1x6144x4096"), "Llama-3 8B QKV, 1 token")
        self.assertEqual(tr.projection_of("matmul/linear/fp16/16x8192x28672"), "Llama-3 70B down, 16 tokens")
        self.assertEqual(tr.projection_of("matmul/linear/bf16/128x10240x8192"), "Llama-3 70B QKV, 128 tokens")
        self.assertEqual(tr.projection_of("matmul/cublaslt/bf16/4096x4096x4096"), "square")
        self.assertEqual(tr.projection_of("matmul/linear/bf16/4096x4096x4096"), "Llama-3 8B O, 4096 tokens")
        self.assertEqual(tr.projection_of("matmul/linear/bf16/512x512x512"), "square")
        self.assertEqual(tr.projection_of("matmul/cublaslt/bf16/16x28672x8192"), "")  # not F.linear's order
        self.assertEqual(tr.projection_of("matmul/linear/bf16/3x5x7"), "")
        self.assertEqual(tr.projection_of("attention/flash/fp16/b4h16s4096d128"), "")


class ProfilerAfterTiming(unittest.TestCase):
    """torch.profiler leaves CUPTI loaded, and rows timed after it ran about 0.4 us a kernel
    slower (ProfileLater): so no row is timed after a profiler session. Every session runs in
    profile_after, once the last row is timed."""

    def test_no_profiler_session_outside_the_pass_after_timing(self):
        import ast
        with open(SCRIPT) as f:
            tree = ast.parse(f.read())
        callers = set()
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef):
                for node in ast.walk(fn):
                    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                            and node.func.id in ("kernel_of", "kernel_census", "name_of", "census_of")):
                        callers.add(fn.name)
        self.assertEqual(callers, {"profile_after"})

    def test_kernel_after_what_and_before_the_timing_notes(self):
        what = "F.linear(x, w): cuBLAS T,N m=N n=M k=K, fp32 accumulate, copies=4"
        self.assertEqual(tr.with_kernel(what + " cooldown=0.7s start=44C", what, ("nvjet_a", 2)),
                         what + " kernel=nvjet_a kernels=2 cooldown=0.7s start=44C")
        self.assertEqual(tr.with_kernel(what, what, ("nvjet_a", 1)), what + " kernel=nvjet_a")
        self.assertEqual(tr.with_kernel("other", what, None), "other kernel=?")
        self.assertEqual(tr.kernel_from_label(tr.with_kernel(what + " cooldown=0.1s start=40C", what, ("k", 1))), "k")

    def _rows(self):
        calls = {"setups": 0, "rule": []}

        def setup():
            calls["setups"] += 1
            return {"a": ("A", lambda: None), "b": ("B", lambda: None), "s": "skipped: no such shape"}
        entries = {n: {"name": n, "label": w + " cooldown=0.1s start=40C"} for n, w in (("a", "A"), ("b", "B"))}
        return calls, setup, entries

    def test_rows_of_one_set_up_share_one_call_of_it(self):
        calls, setup, entries = self._rows()
        pending = [tr.ProfileLater("a", "A", entries["a"], name_kernel=True, census=True),
                   tr.ProfileLater("b", "B", entries["b"], name_kernel=True)]
        tr.profile_after(pending, [setup, setup], name_of=lambda fn: ("nvjet_x", 1),
                         census_of=lambda fn: (2.0, {"nvjet_x": 4, "splitKreduce_kernel": 4}),
                         rule=calls["rule"].append)
        self.assertEqual(calls["setups"], 1)
        self.assertEqual(entries["a"]["label"].split()[:2], ["A", "kernel=nvjet_x"])
        self.assertIn("cooldown=0.1s", entries["a"]["label"])
        self.assertEqual(entries["a"]["kernels_per_call"], 2.0)
        self.assertTrue(entries["a"]["label"].endswith("]"))
        self.assertNotIn("kernels_per_call", entries["b"])
        self.assertEqual(calls["rule"], [])

    def test_old_rule_census_restores_the_rule(self):
        calls, setup, entries = self._rows()
        seen = []

        def census(fn):
            seen.append(list(calls["rule"]))
            raise RuntimeError("profiler broke")
        with self.assertRaises(RuntimeError):
            tr.profile_after([tr.ProfileLater("a", "A", entries["a"], old_rule=True)], [setup],
                             census_of=census, rule=calls["rule"].append)
        self.assertEqual(seen, [[False]])
        self.assertEqual(calls["rule"], [False, True])

    def test_a_set_up_that_fails_now_leaves_kernel_unknown_and_the_figures(self):
        entry = {"name": "a", "label": "A", "TFLOPS": 3.2}

        def setup():
            raise RuntimeError("out of memory")
        tr.profile_after([tr.ProfileLater("a", "A", entry, name_kernel=True, census=True)], [setup],
                         name_of=lambda fn: self.fail("no call to name"), census_of=lambda fn: self.fail("no census"))
        self.assertEqual(entry, {"name": "a", "label": "A kernel=?", "TFLOPS": 3.2})


class GemmOperands(unittest.TestCase):
    """PyTorch's GEMM operands are drawn as bench_matmul draws its own: uniform in [-1, 1) in
    fp32, rounded once. Drawn in bf16 (rand * 2 - 1 in bf16) they had at most 256 distinct values and
    ran a burst up to 2.5% faster (less power at the same clock): parity compared different data."""

    def test_drawn_in_fp32_and_rounded_once(self):
        try:
            import torch
        except ImportError:
            self.skipTest("PyTorch is not installed")
        if not torch.cuda.is_available():
            self.skipTest("no CUDA device")
        torch.manual_seed(0)
        x, w = tr.gemm_operands("bf16", 64, 32, 4096)
        self.assertEqual((x.dtype, tuple(x.shape), tuple(w.shape)), (torch.bfloat16, (64, 4096), (32, 4096)))
        v = x.float()
        # [-1, 1) in fp32; rounding to bf16 may carry a draw just under 1 up to 1.0 (fill.cu too)
        self.assertGreaterEqual(float(v.min()), -1.0)
        self.assertLessEqual(float(v.max()), 1.0)
        # rand in bf16 is a multiple of 2^-8, so rand * 2 - 1 takes at most 256 values; 262,144
        # fp32 draws rounded once to bf16 take ~2,650 (counted in pure Python, same rounding)
        self.assertGreater(int(torch.unique(v).numel()), 1000)
        self.assertAlmostEqual(float(v.mean()), 0.0, delta=0.02)


class Cli(unittest.TestCase):
    def test_timing_without_torch_is_exit_2_table_is_not(self):
        import subprocess
        with tempfile.TemporaryDirectory() as d:
            have_torch = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0
            if not have_torch:
                r = subprocess.run([sys.executable, SCRIPT, "--cases", os.devnull], capture_output=True, text=True)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("PyTorch is not installed", r.stderr)
            out = os.path.join(d, "t.md")
            r = subprocess.run([sys.executable, SCRIPT, "--table", out, "--band", "x/=5"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(os.path.exists(out))
            r = subprocess.run([sys.executable, SCRIPT, "--table", out, "--band", "x/=abc"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            r = subprocess.run([sys.executable, SCRIPT, "--parity-table", os.path.join(d, "none")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)  # no cases.txt there: one line, exit 2
            self.assertIn("cases.txt", r.stderr)


if __name__ == "__main__":
    unittest.main()
