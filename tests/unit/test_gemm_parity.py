#!/usr/bin/env python3
"""ci/gemm_parity.sh's table, without torch or a GPU (ci/torch_reference.py's pure helpers):
medians, ratios, the clock-normalised ratio and the power-capped mark over N alternations, the
spreads, issue 40's criteria as PASS/FAIL lines naming the rows that miss them, rows with a
side missing or NaN, the GPUCHECK_COOLDOWN rule (the twin of energy.cpp's parse_cooldown and
cooled, tests/unit/test_energy.cpp) and its note in the labels; and the script's choice of rows
(PARITY_FP8, PARITY_ROWS) with a stand-in bench_matmul and PyTorch side."""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_reference_module import gb_entry, load  # noqa: E402

tr = load()


def run(tflops, clock, kernel, ms=2.0, cool=""):
    """One side's result for one case in one run, as read_results gives it."""
    return {"values": [{"TFLOPS": tflops, "real_time": ms * 1e3, "time_unit": "us", "sm_clock_mean_MHz": clock}],
            "skipped": None, "label": f"algo=1 kernel={kernel}{cool}"}


def row(case, ratio, ok="a", tk="a", ms=2.0, so=1.0, st=1.0):
    return {"case": case, "ratio": ratio, "ours_kernel": ok, "torch_kernel": tk, "ms": ms, "ours_spread": so,
            "torch_spread": st, "note": "", "capped": None, "norm_ratio": None}


class CoolingCard:
    """A fake card giving one reading a poll (the last one again once they run out), and a fake
    clock the sleeps advance (test_energy.cpp's CoolingCard)."""

    def __init__(self, readings):
        self.readings, self.next, self.t, self.slept = readings, 0, 100.0, []

    def read(self):
        self.next += 1
        return self.readings[min(self.next - 1, len(self.readings) - 1)]

    def sleep(self, s):
        self.slept.append(s)
        self.t += s

    def wait(self, rule):
        return tr.wait_cooled(rule, self.read, lambda: self.t, self.sleep)


class Cooldown(unittest.TestCase):
    def test_parses_as_energy_cpp(self):
        self.assertEqual(tr.parse_cooldown("power_W=120,temp_C=42.5,max_s=20"), tr.Cooldown(120.0, 42.5, 20.0, 0.1))
        self.assertEqual(tr.parse_cooldown("temp_C=40"), tr.Cooldown(None, 40.0, 30.0, 0.1))
        self.assertEqual(tr.parse_cooldown("max_s=5,power_W=.5"), tr.Cooldown(0.5, None, 5.0, 0.1))
        self.assertIsNone(tr.parse_cooldown("temp_C=40").settle_s)  # no settle unless asked
        self.assertEqual(tr.parse_cooldown("settle_s=2.5,temp_C=44"), tr.Cooldown(None, 44.0, 30.0, 0.1, 2.5))
        for bad in ("", "max_s=10", "settle_s=2", "max_s=10,settle_s=2", "settle_s=0,temp_C=40", "temp_C=40,settle_s=-1", "power_W", "power_W=", "power_W=0", "power_W=-5", "power_W=1e999", "power_W=12x",
                    "watts=100", "power_W=100,", "power_W=nan", "power_W=inf", "temp_C=40,,max_s=3", "power_W=+3",
                    "power_W=1_0", "power_W= 3", " power_W=3"):
            with self.assertRaises(ValueError, msg=bad):
                tr.parse_cooldown(bad)

    def test_every_limit_met_and_missing_readings_do_not_hold(self):
        c = tr.Cooldown(120.0, 40.0, 30.0, 0.1)
        self.assertTrue(tr.cooled(c, 119.0, 40))
        self.assertTrue(tr.cooled(c, 120.0, 39))
        self.assertFalse(tr.cooled(c, 121.0, 35))
        self.assertFalse(tr.cooled(c, 90.0, 41))
        self.assertTrue(tr.cooled(c, None, 38))
        self.assertFalse(tr.cooled(c, None, 45))
        self.assertTrue(tr.cooled(c, None, None))
        self.assertTrue(tr.cooled(tr.Cooldown(100.0, None, 30.0, 0.1), 99.5, 90))

    def test_waits_until_cooled_or_capped_as_the_engine(self):  # test_energy.cpp's twin
        rule = tr.Cooldown(120.0, 40.0, 1.0, 0.25)
        card = CoolingCard([(300.0, 45), (150.0, 42), (110.0, 40), (100.0, 39)])
        self.assertEqual(card.wait(rule), (0.5, False, 40, False))
        self.assertEqual(card.slept, [0.25, 0.25])
        card = CoolingCard([(300.0, 60)])  # never cools: the cap, at the first reading at or past max_s
        self.assertEqual(card.wait(rule), (1.0, True, 60, False))
        self.assertEqual(len(card.slept), 4)
        card = CoolingCard([(None, None)])  # NVML gave nothing: no wait
        self.assertEqual(card.wait(rule), (0.0, False, None, False))
        self.assertEqual(card.slept, [])

    def test_a_soaked_card_settles_instead_of_waiting_out_the_cap(self):  # test_energy.cpp's twin
        def wait(rule, readings):
            return CoolingCard(readings).wait(rule)
        rule = tr.Cooldown(130.0, 44.0, 10.0, 0.5, 1.0)
        # lows at 0, 0.5, 1.0 and 1.5 s; 45 again at 2.0, 46 at 2.5: 1.0 s since the last low
        self.assertEqual(wait(rule, [(300.0, 50), (150.0, 47), (120.0, 46), (120.0, 45), (110.0, 45), (110.0, 46)]),
                         (2.5, False, 46, True))
        # still cooling a degree a poll: the limit, not a settle
        self.assertEqual(wait(rule, [(120.0, t) for t in range(50, 43, -1)]), (3.0, False, 44, False))
        short = rule._replace(max_s=3.0)
        self.assertEqual(wait(short, [(200.0, 45)]), (3.0, True, 45, False))  # the power holds it: the cap
        self.assertEqual(wait(short, [(200.0, None)]), (3.0, True, None, False))  # no temperature to settle on
        self.assertEqual(wait(short._replace(settle_s=None), [(120.0, 45)]), (3.0, True, 45, False))  # as before

    def test_the_labels_note_as_the_engine_writes_it(self):
        self.assertEqual(tr.cooldown_note(1.84, False, 41), " cooldown=1.8s start=41C")
        self.assertEqual(tr.cooldown_note(10.0, True, None), " cooldown=10.0s(cap) start=?")
        self.assertEqual(tr.cooldown_note(2.54, False, 46, True), " cooldown=2.5s(settled) start=46C")
        self.assertEqual(tr.cooldown_from_label("F.linear(x, w) kernel=y cooldown=2.5s(settled) start=46C"),
                         (2.5, False, 46))  # a settle is not a cap
        ours = "algo=66 tile=18 stages=10 splitk=1 ws=0 kernel=nvjet_x cooldown=2.3s start=38C"
        self.assertEqual(tr.cooldown_from_label(ours), (2.3, False, 38))
        self.assertEqual(tr.cooldown_from_label("F.linear(x, w) kernel=y cooldown=10.0s(cap) start=?"), (10.0, True, None))
        self.assertIsNone(tr.cooldown_from_label("algo=1 kernel=x"))
        self.assertIsNone(tr.cooldown_from_label(None))
        self.assertEqual(tr.kernel_from_label(ours), "nvjet_x")  # the note does not change the kernel read


class Rows(unittest.TestCase):
    SQ = "matmul/cublaslt/bf16/8192x8192x8192"
    ONE = "matmul/linear/bf16/1x6144x4096"
    FP8 = "matmul/linear/fp8e4m3/1x6144x4096"

    def test_medians_ratios_clocks_and_spreads(self):
        ours = [{self.SQ: run(t, c, "nvjet_a", cool=f" cooldown=1.0s start={s}C"),
                 self.ONE: run(1.0, 1980, "gemvx", ms=0.01)}
                for t, c, s in ((700.0, 1470, 40), (720.0, 1500, 41), (710.0, 1485, 39))]
        theirs = [{self.SQ: run(t, c, "nvjet_a", cool=" cooldown=0.4s start=40C"),
                   self.ONE: run(2.0, 1980, "gemv2T", ms=0.01)}
                  for t, c in ((700.0, 1965), (705.0, 1950), (714.0, 1980))]
        sq, one, missing = tr.parity_rows([self.SQ, self.ONE, "matmul/linear/bf16/16x4096x4096"], ours, theirs,
                                          1980.0, None)
        self.assertEqual((sq["ours"], sq["torch"]), (710.0, 705.0))
        self.assertAlmostEqual(sq["ratio"], 710.0 / 705.0)
        self.assertEqual((sq["ours_clock"], sq["torch_clock"]), (1485, 1965))
        self.assertAlmostEqual(sq["norm_ratio"], 710.0 / 705.0 * 1965 / 1485)
        self.assertTrue(sq["capped"])  # ours' 1485 MHz < 0.95 x 1980 (PyTorch's maximum taken from ours)
        self.assertAlmostEqual(sq["ours_spread"], 100.0 * 20.0 / 710.0)
        self.assertAlmostEqual(sq["torch_spread"], 100.0 * 14.0 / 705.0)
        self.assertEqual((sq["ours_start_C"], sq["torch_start_C"]), (40, 40))
        self.assertEqual((sq["ours_kernel"], sq["torch_kernel"], sq["note"]), ("nvjet_a", "nvjet_a", ""))
        self.assertEqual((sq["what"], sq["ms"]), ("square", 2.0))
        self.assertFalse(one["capped"])  # both at 1980 MHz
        self.assertEqual(one["norm_ratio"], 0.5)
        self.assertEqual(one["note"], "kernels differ")
        self.assertIsNone(one["ours_start_C"])  # no cool-down in its labels
        self.assertEqual(missing["note"], "no figure (ours); no figure (PyTorch)")
        self.assertIsNone(missing["ratio"])
        self.assertIsNone(missing["norm_ratio"])
        self.assertIsNone(missing["capped"])

    def test_capped_needs_a_maximum_and_both_clocks(self):
        ours = [{self.SQ: run(700.0, 1800, "a")}]
        theirs = [{self.SQ: run(700.0, None, "a")}]
        self.assertIsNone(tr.parity_rows([self.SQ], ours, [{self.SQ: run(700.0, 1800, "a")}])[0]["capped"])
        r = tr.parity_rows([self.SQ], ours, theirs, 1980.0, 1980.0)[0]
        self.assertIsNone(r["capped"])
        self.assertIsNone(r["norm_ratio"])
        self.assertEqual(r["ratio"], 1.0)
        self.assertFalse(tr.parity_rows([self.SQ], ours, ours, 1890.0, 1890.0)[0]["capped"])  # 1800 >= 0.95 x 1890
        self.assertTrue(tr.parity_rows([self.SQ], ours, ours, 1900.0, 1900.0)[0]["capped"])   # 1800 < 1805
        self.assertEqual(tr.max_clock_of({"sm_clock_max_MHz": "1980"}), 1980.0)
        for ctx in ({}, {"sm_clock_max_MHz": "unknown"}, {"sm_clock_max_MHz": "0"}, {"sm_clock_max_MHz": "nan"}):
            self.assertIsNone(tr.max_clock_of(ctx), ctx)

    def test_nan_figures_and_skips_and_changed_kernels(self):
        skipped = {"values": [], "skipped": "cuBLASLt's fp8 GEMMs want M, N and K multiples of 16", "label": ""}
        ours = [{self.FP8: skipped, self.SQ: run(v, 1800, k, cool=c)} for v, k, c in
                ((700.0, "a", ""), (math.nan, "b", " cooldown=30.0s(cap) start=55C"), (720.0, "a", ""))]
        theirs = [{self.FP8: skipped, self.SQ: run(math.nan, 1800, "?")} for _ in range(3)]
        fp8, sq = tr.parity_rows([self.FP8, self.SQ], ours, theirs)
        self.assertTrue(fp8["note"].startswith("skipped (ours): cuBLASLt's fp8 GEMMs want"))
        self.assertIn("skipped (PyTorch)", fp8["note"])
        self.assertEqual(sq["ours"], 710.0)  # the NaN run left out of the median
        self.assertAlmostEqual(sq["ours_spread"], 100.0 * 20.0 / 710.0)
        self.assertIsNone(sq["torch"])
        self.assertIsNone(sq["torch_spread"])
        self.assertIsNone(sq["ratio"])
        self.assertEqual(sq["ours_kernel"], "a")  # the most common over the runs
        self.assertEqual(sq["note"], "kernel changed between runs (ours); cool-down hit its cap (ours); "
                                     "no figure (PyTorch)")


class HostBound(unittest.TestCase):
    ROW = "matmul/linear/bf16/128x4096x4096"

    def test_a_side_queueing_a_call_in_75_percent_of_its_time_is_named(self):
        self.assertEqual(tr.host_bound_note("PyTorch", 12.2, 0.015),
                         "host-bound (PyTorch: queues a call in 12.2 us, runs it in 15.0)")
        self.assertEqual(tr.host_bound_note("PyTorch", 15.0, 0.02), "host-bound (PyTorch: queues a call in "
                                                                   "15.0 us, runs it in 20.0)")  # exactly 75%
        self.assertIsNone(tr.host_bound_note("PyTorch", 14.9, 0.02))
        self.assertIsNone(tr.host_bound_note("ours", 4.0, 0.015))
        for issue, ms in ((None, 0.015), (12.2, None), (12.2, 0.0), (12.2, math.nan)):
            self.assertIsNone(tr.host_bound_note("PyTorch", issue, ms), (issue, ms))

    def test_the_row_notes_it_from_the_median_over_runs(self):
        def side(issue):
            r = run(280.0, 1980, "a", ms=0.015)
            if issue is not None:
                r["values"][0]["issue_us"] = issue
            return {self.ROW: r}
        ours = [side(None) for _ in range(3)]  # ours writes no issue_us: never named
        theirs = [side(v) for v in (11.0, 12.2, 12.5)]
        r = tr.parity_rows([self.ROW], ours, theirs, 1980.0, 1980.0)[0]
        self.assertEqual(r["note"], "host-bound (PyTorch: queues a call in 12.2 us, runs it in 15.0)")
        theirs = [side(v) for v in (5.0, 6.0, 13.0)]
        self.assertEqual(tr.parity_rows([self.ROW], ours, theirs, 1980.0, 1980.0)[0]["note"], "")
        # A starved side's own time holds its gaps: the call's time is the faster side's.
        slow = [side(v) for v in (11.5, 11.6, 11.7)]
        for r in slow:
            r[self.ROW]["values"][0]["real_time"] = 17.6
        self.assertEqual(tr.parity_rows([self.ROW], ours, slow, 1980.0, 1980.0)[0]["note"],
                         "host-bound (PyTorch: queues a call in 11.6 us, runs it in 15.0)")


class Idle(unittest.TestCase):
    ROW = "matmul/linear/bf16/1024x4096x4096"

    def test_the_fill_of_a_plateaus_window(self):
        # 65 samples of 108 calls of 49.9 us in 0.4 s: 88% (GPU-4c0d3cfe, ours, read every sample)
        self.assertAlmostEqual(tr.plateau_fill(self.ROW, 65, 108, 0.0499), 65 * 108 * 0.0499 / 400)
        self.assertAlmostEqual(tr.plateau_fill(self.ROW, 10, 4, 10.0, window_s=0.4), 1.0)
        for name in ("matmul/linear/bf16/128x4096x4096",  # grouped: its samples are a group's
                     "matmul/linear/bf16/16x4096x4096", "matmul/cublaslt/bf16/8192x8192x8192", "attention/x"):
            self.assertIsNone(tr.plateau_fill(name, 65, 108, 0.05), name)
        self.assertIsNotNone(tr.plateau_fill("matmul/linear/fp8e4m3/129x4096x4096", 65, 108, 0.05))
        for bad in ((None, 108, 0.05), (65, None, 0.05), (65, 108, None), (0, 108, 0.05), (65, 108, math.nan),
                    (65, 108, -1.0), (math.inf, 108, 0.05)):
            self.assertIsNone(tr.plateau_fill(self.ROW, *bad), bad)

    def test_a_side_that_idled_in_any_run_is_named_with_its_least_fill(self):
        self.assertEqual(tr.IDLE_BELOW, 0.95)
        self.assertIsNone(tr.idle_note("ours", [1.02, 0.95, None]))  # the boundary: not idle
        self.assertEqual(tr.idle_note("ours", [1.02, 0.949, 0.7, None]),
                         "idle (ours: its counted samples filled 70% of the window)")
        # Rounded down: a fill just under the boundary never reads as the boundary itself.
        self.assertEqual(tr.idle_note("ours", [0.9496]), "idle (ours: its counted samples filled 94.9% of the window)")
        self.assertIsNone(tr.idle_note("PyTorch", []))
        self.assertIsNone(tr.idle_note("PyTorch", [None, math.nan]))

    def test_the_row_notes_it(self):
        def side(samples):
            out = []
            for n in samples:
                r = run(690.0, 1600, "a", ms=0.0499)
                r["values"][0].update(samples=n, batch=108)
                out.append({self.ROW: r})
            return out
        r = tr.parity_rows([self.ROW], side((76, 75, 77)), side((76, 60, 75)), 1980.0, 1980.0)[0]
        # 60 x 108 x 0.0499 ms against 0.4 s: 80.8%, rounded down to 0.1.
        self.assertEqual(r["note"], "idle (PyTorch: its counted samples filled 80.8% of the window)")
        self.assertEqual(tr.parity_rows([self.ROW], side((76, 75, 77)), side((75, 76, 74)), 1980.0, 1980.0)[0]["note"],
                         "")


class TimedApart(unittest.TestCase):
    ROW = "matmul/linear/bf16/128x6144x4096"

    def test_methods_or_batches_a_quarter_apart_are_named(self):
        self.assertIsNone(tr.timed_apart_note(284, 284, 5, 5))
        self.assertIsNone(tr.timed_apart_note(284, 228, 5, 5))  # 284 < 1.25 x 228
        self.assertEqual(tr.timed_apart_note(285, 228, 5, 5), "batches differ (ours 285, PyTorch 228)")
        self.assertEqual(tr.timed_apart_note(193, 284, 5, 5), "batches differ (ours 193, PyTorch 284)")
        self.assertEqual(tr.timed_apart_note(284, 284, 5, 4), "methods differ (ours 5, PyTorch 4)")
        self.assertEqual(tr.timed_apart_note(20, 64, 4, 5),
                         "methods differ (ours 4, PyTorch 5); batches differ (ours 20, PyTorch 64)")
        for args in ((None, 284, 5, 5), (284, None, None, 5), (0, 284, 5, None), (None, None, None, None)):
            self.assertIsNone(tr.timed_apart_note(*args), args)

    def test_the_row_notes_it_from_the_median_over_runs(self):
        def side(batches, method=5):
            out = []
            for b in batches:
                r = run(390.0, 1650, "a", ms=0.0165)
                r["values"][0].update(batch=b, method=method)
                out.append({self.ROW: r})
            return out
        r = tr.parity_rows([self.ROW], side((193, 191, 141)), side((284, 278, 282)), 1980.0, 1980.0)[0]
        self.assertEqual(r["note"], "batches differ (ours 191, PyTorch 282)")
        r = tr.parity_rows([self.ROW], side((280, 284, 288)), side((284, 278, 282)), 1980.0, 1980.0)[0]
        self.assertEqual(r["note"], "")
        r = tr.parity_rows([self.ROW], side((280, 284, 288)), side((284, 278, 282), 4), 1980.0, 1980.0)[0]
        self.assertEqual(r["note"], "methods differ (ours 5, PyTorch 4)")


class Criteria(unittest.TestCase):
    def test_pass_and_fail_lines_name_the_rows(self):
        rows = [row("sq", 1.01), row("down", 0.905, so=4.2), row("gemv", 0.99, "a", "b", ms=0.1, so=9.0, st=9.0),
                row("qkv", 0.90, "a", "b", st=None), row("gone", None, None, None, None, None, None)]
        got = tr.parity_criteria(rows)
        self.assertEqual([ok for ok, _ in got], [False, False, False, True])
        self.assertEqual(got[3][1], "PASS rows with both figures, both kernels named: 4 of 4 rows.")
        self.assertEqual(got[0][1], "FAIL same kernel on both sides, median ours / PyTorch in [0.98, 1.02]: 1 of 2 "
                                    "rows; outside: down (0.905).")
        self.assertEqual(got[1][1], "FAIL kernels differ, median ours / PyTorch >= 0.98: 1 of 2 rows; below: "
                                    "qkv (0.900).")
        self.assertEqual(got[2][1], "FAIL rows of 1 ms or more, spread across the runs under 3% on both sides: 1 of 3 "
                                    "rows; missed: down (ours 4.2%, PyTorch 1.0%), qkv (ours 1.0%, PyTorch unknown).")

    def test_all_pass_at_the_edges_and_with_nothing_to_judge(self):
        rows = [row("lo", 0.98), row("hi", 1.02), row("diff", 0.98, "a", "b"), row("short", 0.5, ms=0.999, so=50.0)]
        rows[3]["ours_kernel"] = rows[3]["torch_kernel"] = None  # not compared: no kernel
        got = tr.parity_criteria(rows)
        self.assertEqual([ok for ok, _ in got], [True, True, True, False])
        self.assertEqual(got[3][1], "FAIL rows with both figures, both kernels named: 3 of 4 rows; unnamed: short (both).")
        rows[3]["ours_kernel"] = "a"  # PyTorch's run cut short before it named its kernels
        self.assertEqual(tr.parity_criteria(rows)[3][1], "FAIL rows with both figures, both kernels named: 3 of 4 rows; "
                                                         "unnamed: short (PyTorch).")
        rows[3]["ours_kernel"], rows[3]["torch_kernel"] = None, "a"
        self.assertTrue(tr.parity_criteria(rows)[3][1].endswith("unnamed: short (ours)."))
        rows[3]["ours_kernel"] = "a"  # named on both sides: now judged (0.5 is outside), and named
        self.assertEqual([ok for ok, _ in tr.parity_criteria(rows)], [False, True, True, True])
        self.assertEqual(got[0][1], "PASS same kernel on both sides, median ours / PyTorch in [0.98, 1.02]: 2 of 2 rows.")
        self.assertEqual(got[2][1], "PASS rows of 1 ms or more, spread across the runs under 3% on both sides: "
                                    "3 of 3 rows.")
        self.assertEqual(tr.parity_criteria([])[1], (True, "PASS kernels differ, median ours / PyTorch >= 0.98: "
                                                           "no such row."))
        self.assertTrue(all(ok for ok, _ in tr.parity_criteria([])))
        self.assertTrue(tr.parity_criteria([row("x", 1.0, so=3.0)])[2][1].startswith("FAIL"))  # under 3%, not at 3%

    def test_summary_adds_rows_not_compared_and_capped(self):
        rows = [row("sq", 1.0), row("gone", None, None, None, None, None, None)]
        rows[1]["note"] = "no figure (ours)"
        rows[0].update(capped=True, norm_ratio=1.031)
        lines = tr.parity_summary(rows)
        self.assertEqual(len(lines), 7)
        self.assertEqual(lines[4], "Not compared: 1 of 2 rows: gone (no figure (ours)).")
        self.assertEqual(lines[5], "Power-capped (a side's mean SM clock under 95% of its maximum): 1 of 1 rows with "
                                   "both clocks known: sq (clock-normalised 1.031).")
        self.assertEqual(lines[6], "Idle (a side's counted samples filled under 95% of the plateau's window in some "
                                   "run): 0 of 0 plateau rows.")
        rows += [row("p1", 1.0), row("p2", 1.0), row("p3", 1.0)]
        rows[2]["least_fill"] = (0.81, 1.01)
        rows[3]["least_fill"] = (0.95, None)  # the boundary: not idle
        rows[4]["least_fill"] = (0.62, 0.70)
        self.assertEqual(tr.parity_summary(rows)[6], "Idle (a side's counted samples filled under 95% of the "
                                                     "plateau's window in some run): 2 of 3 plateau rows: p1 (ours "
                                                     "81%), p3 (ours 62%, PyTorch 70%).")


class Files(unittest.TestCase):
    SQ = "matmul/cublaslt/bf16/8192x8192x8192"
    ONE = "matmul/linear/bf16/1x6144x4096"

    def test_write_parity_from_the_scripts_files(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "cases.txt"), "w") as f:
                f.write(self.SQ + "\n" + self.ONE + "\n")
            with open(os.path.join(d, "cooldown.txt"), "w") as f:
                f.write("power_W=150,temp_C=38,max_s=10\n")
            for i, (o, t) in enumerate(((700.0, 702.0), (720.0, 698.0)), 1):
                rd = os.path.join(d, f"run{i}")
                os.mkdir(rd)
                with open(os.path.join(rd, "ours-squares.json"), "w") as f:
                    json.dump({"context": {"gpu_name": "NVIDIA H200", "cublas_version": "13.1.0",
                                           "sm_clock_max_MHz": "1980"},
                               "benchmarks": [gb_entry(self.SQ, TFLOPS=o, sm_clock_mean_MHz=1800.0, power_W=690.0 + 10 * i,
                                                       label="algo=1 kernel=nvjet_a cooldown=2.0s start=37C")]}, f)
                with open(os.path.join(rd, "torch.json"), "w") as f:
                    json.dump({"context": {"library": "torch 2.11", "sm_clock_max_MHz": "1980", "blas_library": "cublas"},
                               "benchmarks": [gb_entry(self.SQ, TFLOPS=t, sm_clock_mean_MHz=1890.0,
                                                       label="torch.mm kernel=nvjet_a cooldown=1.0s start=38C",
                                                       **({"power_W": 698.4} if i == 1 else {}))]}, f)
            with open(os.path.join(d, "run2", "ours-llm.json"), "w") as f:
                f.write("{")  # not JSON: said under the table, the rest is shown
            text = tr.write_parity(d)
            with open(os.path.join(d, "parity.md")) as f:
                self.assertEqual(f.read(), text)
            self.assertIn("2 alternations", text)
            self.assertIn("cuBLAS ours 13.1.0, PyTorch ? (torch 2.11, its GEMMs through cublas).", text)
            self.assertIn("GPUCHECK_COOLDOWN=power_W=150,temp_C=38,max_s=10", text)
            self.assertIn("| matmul/cublaslt/bf16/8192x8192x8192 | square | 0.010 | 710.0 | 700.0 | 1.014 | 1.065 | "
                          "1800 | 1890 | capped | 705 / 698 | 2.8% | 0.6% | 37 / 38 | nvjet_a | (same) |  |", text)
            self.assertIn("PASS same kernel on both sides", text)
            self.assertIn("Not compared: 1 of 2 rows: matmul/linear/bf16/1x6144x4096", text)
            self.assertIn("Not read: run2/ours-llm.json", text)
            os.mkdir(os.path.join(d, "run3"))  # a run that wrote nothing: said, and counted
            text = tr.write_parity(d)
            self.assertIn("3 alternations", text)
            self.assertIn("run3: no ours-*.json", text)
            self.assertIn("run3/torch.json", text)
            with open(os.path.join(d, "parity.csv")) as f:
                lines = f.read().splitlines()
            self.assertEqual(lines[0], ",".join(tr.PARITY_COLUMNS))
            self.assertTrue(lines[1].startswith(self.SQ + ",square,0.01,710.0,700.0,1.0142857142857142,"), lines[1])
            self.assertIn(",1800.0,1890.0,True,705.0,698.4,", lines[1])
            self.assertTrue(lines[2].startswith(self.ONE + ',"Llama-3 8B QKV, 1 token",,,,,'))


class Machines(unittest.TestCase):
    SQ = "matmul/cublaslt/bf16/8192x8192x8192"
    ONE = "matmul/linear/bf16/1x6144x4096"

    @staticmethod
    def machine(d, uuid, figures):
        """A ci/gemm_parity.sh folder: figures[case] = [(ours, torch) per run] TFLOP/s, one kernel."""
        os.mkdir(d)
        with open(os.path.join(d, "cases.txt"), "w") as f:
            f.write("".join(c + "\n" for c in figures))
        runs = len(next(iter(figures.values())))
        for i in range(runs):
            rd = os.path.join(d, f"run{i + 1}")
            os.mkdir(rd)
            ours = [gb_entry(c, TFLOPS=v[i][0], label="algo=1 kernel=nvjet_a") for c, v in figures.items()]
            torch_side = [gb_entry(c, TFLOPS=v[i][1], label="F.linear kernel=nvjet_a") for c, v in figures.items()]
            with open(os.path.join(rd, "ours-llm.json"), "w") as f:
                json.dump({"context": {"gpu_name": "NVIDIA H200", "gpu_uuid": uuid}, "benchmarks": ours}, f)
            with open(os.path.join(rd, "torch.json"), "w") as f:
                json.dump({"context": {"library": "torch 2.11"}, "benchmarks": torch_side}, f)

    def two_machines(self, d):
        """d/a, all in range; d/b, whose 1x6144x4096 row reads 0.960 (median): their folders."""
        a, b = os.path.join(d, "a"), os.path.join(d, "b")
        self.machine(a, "GPU-aaaa1111-2222", {self.SQ: [(700, 700), (702, 700), (701, 700)],
                                              self.ONE: [(10.0, 10.0), (10.1, 10.0), (10.0, 10.0)]})
        self.machine(b, "GPU-bbbb3333-4444", {self.SQ: [(700, 700), (700, 701), (700, 700)],
                                              self.ONE: [(9.6, 10.0), (9.6, 10.0), (9.7, 10.0)]})
        return a, b

    def test_two_machines_side_by_side_with_the_criteria_on_each_and_over_both(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = self.two_machines(d)
            lines = tr.parity_machines([a, b])
            self.assertEqual(lines[0], "# ours / PyTorch on 2 machines")
            self.assertIn("| GPU-aaaa1111 ratio | GPU-aaaa1111 spread % | GPU-aaaa1111 kernels | GPU-bbbb3333 ratio", lines[2])
            sq = next(l for l in lines if l.startswith("| " + self.SQ))
            self.assertEqual(sq, f"| {self.SQ} | 1.001 | 0.3 / 0.0 | same | 1.000 | 0.0 / 0.1 | same |")
            one = next(l for l in lines if l.startswith("| " + self.ONE))
            self.assertIn("| 0.960 |", one)  # machine b's median: outside [0.98, 1.02]
            self.assertIn("## GPU-aaaa1111 (" + a + ", 3 alternations)", lines)
            first = lines.index("## All 2 machines")
            self.assertEqual(lines[first + 2], "FAIL same kernel on both sides, median ours / PyTorch in [0.98, 1.02]: "
                                               "fails on GPU-bbbb3333.")
            self.assertEqual(lines[first + 3], "PASS kernels differ, median ours / PyTorch >= 0.98: on all 2.")
            self.assertEqual(len(lines) - first - 2, 4)  # one line per criterion

    def test_a_kept_parity_csv_stands_for_its_machine(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = self.two_machines(d)
            tr.write_parity(b)
            kept = os.path.join(d, "GPU-bbbb3333.csv")
            os.rename(os.path.join(b, "parity.csv"), kept)
            from_folders = tr.parity_machines([a, b])
            from_csv = tr.parity_machines([a, kept])
            # The same rows and verdicts; only the second machine's heading differs.
            self.assertEqual([l for l in from_csv if not l.startswith("## GPU-bbbb3333")],
                             [l for l in from_folders if not l.startswith("## GPU-bbbb3333")])
            self.assertIn(f"## GPU-bbbb3333 ({kept}, alternations not kept)", from_csv)
            with open(os.path.join(d, "bad.csv"), "w") as f:
                f.write("case,ratio\nx,1.0\n")
            with self.assertRaisesRegex(ValueError, "bad.csv: not a parity.csv"):
                tr.parity_machines([os.path.join(d, "bad.csv")])
            with open(kept) as f:
                lines = f.read().splitlines()
            lines[1] = lines[1].replace(",1.", ",x1.", 1)
            with open(kept, "w") as f:
                f.write("\n".join(lines) + "\n")
            with self.assertRaisesRegex(ValueError, "a figure that is not a number"):
                tr.parity_machines([kept])

    def test_one_machine_given_twice_is_one_line_and_exit_2(self):
        script = os.path.join(HERE, "..", "..", "ci", "torch_reference.py")
        with tempfile.TemporaryDirectory() as d:
            a, b = self.two_machines(d)
            tr.write_parity(a)
            for twice in ([a, a], [a, os.path.join(a, "parity.csv")], [a, a + os.sep, b]):
                p = subprocess.run([sys.executable, script, "--parity-machines", *twice], capture_output=True,
                                   text=True, timeout=60)
                self.assertEqual(p.returncode, 2, (twice, p.stdout))
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn("given twice", p.stderr)
                self.assertIn(a, p.stderr)

    def test_a_folder_without_cases_is_an_os_error(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(OSError):
                tr.parity_machines([d])


# A stand-in bench_matmul: --list prints the names its --benchmark_filter keeps (Google
# Benchmark's rule: a leading '-' keeps those that do not match), a bad expression is an error
# (exit 2, as bench_matmul's), and a run records its arguments in $FAKE_LOG and writes nothing.
FAKE_BENCH = """import json, os, re, sys
args = sys.argv[1:]
llm = ["matmul/linear/bf16/16x4096x4096", "matmul/linear/fp16/128x8192x8192",
       "matmul/linear/fp8e4m3/16x4096x4096", "matmul/linear/fp8e4m3/128x8192x8192"]
squares = ["matmul/cublaslt/bf16/4096x4096x4096", "matmul/cublaslt/fp16/8192x8192x8192"]
names = llm if "llm" in args else squares
pattern = ([a.split("=", 1)[1] for a in args if a.startswith("--benchmark_filter=")] or [""])[-1]
negate = pattern.startswith("-")
try:
    rx = re.compile(pattern[1:] if negate else pattern)
except re.error as e:
    sys.exit(f"gpucheck: --benchmark_filter={pattern}: not a regex ({e})")
if "--list" in args:
    for n in names:
        if bool(rx.search(n)) != negate:
            print(n)
    sys.exit(0)
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(json.dumps(["bench"] + args) + "\\n")
"""
# A stand-in python3: the table (--parity-table) by the real one, PyTorch's side recorded only.
FAKE_PYTHON = """import json, os, sys
if "--parity-table" in sys.argv:
    os.execv(REAL, [REAL] + sys.argv[1:])
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(json.dumps(["python"] + sys.argv[1:]) + "\\n")
"""


@unittest.skipUnless(shutil.which("bash"), "no bash")
class Script(unittest.TestCase):
    """ci/gemm_parity.sh's rows: which cases it lists, and the filter each run of ours gets."""
    SCRIPT = os.path.join(HERE, "..", "..", "ci", "gemm_parity.sh")

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        os.makedirs(os.path.join(self.dir, "build", "bin"))
        for path, text in ((os.path.join(self.dir, "build", "bin", "bench_matmul"), FAKE_BENCH),
                           (os.path.join(self.dir, "python"), FAKE_PYTHON.replace("REAL", repr(sys.executable)))):
            with open(path, "w") as f:
                f.write(f"#!{sys.executable}\n" + text)
            os.chmod(path, 0o755)
        self.log = os.path.join(self.dir, "calls.jsonl")
        self.out = os.path.join(self.dir, "out")

    def parity(self, **env):
        """One call of the script (1 alternation): its result, OUT/cases.txt, each side's call."""
        shutil.rmtree(self.out, ignore_errors=True)
        if os.path.exists(self.log):
            os.remove(self.log)
        e = dict(os.environ, PYTHON=os.path.join(self.dir, "python"), FAKE_LOG=self.log, PARITY_COOLDOWN="off")
        for k in ("PARITY_FP8", "PARITY_ROWS", "PARITY_APPEND", "GPUCHECK_COOLDOWN"):
            e.pop(k, None)
        e.update(env)
        p = subprocess.run(["bash", self.SCRIPT, os.path.join(self.dir, "build"), self.out, "1"], env=e,
                           capture_output=True, text=True, timeout=60)
        cases, runs = None, {}
        if os.path.exists(os.path.join(self.out, "cases.txt")):
            with open(os.path.join(self.out, "cases.txt")) as f:
                cases = f.read().splitlines()
        if os.path.exists(self.log):
            with open(self.log) as f:
                for call in map(json.loads, f):
                    key = "torch" if call[0] == "python" else ("llm" if "llm" in call else "squares")
                    runs[key] = call
        return p, cases, runs

    @staticmethod
    def run_filter(call):
        return [a for a in call if a.startswith("--benchmark_filter=")]

    def test_default_rows_leave_fp8_out(self):
        p, cases, runs = self.parity()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(cases, ["matmul/linear/bf16/16x4096x4096", "matmul/linear/fp16/128x8192x8192",
                                 "matmul/cublaslt/bf16/4096x4096x4096", "matmul/cublaslt/fp16/8192x8192x8192"])
        self.assertEqual(self.run_filter(runs["llm"]), ["--benchmark_filter=-/fp8e4m3/"])
        self.assertEqual(self.run_filter(runs["squares"]), [])
        self.assertIn("--cases", runs["torch"])

    def test_fp8_only_runs_the_fp8_rows_and_no_squares(self):
        p, cases, runs = self.parity(PARITY_FP8="only")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(cases, ["matmul/linear/fp8e4m3/16x4096x4096", "matmul/linear/fp8e4m3/128x8192x8192"])
        self.assertEqual(self.run_filter(runs["llm"]), ["--benchmark_filter=/fp8e4m3/"])
        self.assertNotIn("squares", runs)

    def test_rows_list_by_the_expression_and_run_the_exact_names(self):
        p, cases, runs = self.parity(PARITY_ROWS="fp16/128x8192x8192$|cublaslt/bf16/4096x")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(cases, ["matmul/linear/fp16/128x8192x8192", "matmul/cublaslt/bf16/4096x4096x4096"])
        # the run's names end in /iterations:1/manual_time, where the expression's $ matches nothing
        self.assertEqual(self.run_filter(runs["llm"]), ["--benchmark_filter=^(matmul/linear/fp16/128x8192x8192)/"])
        self.assertEqual(self.run_filter(runs["squares"]),
                         ["--benchmark_filter=^(matmul/cublaslt/bf16/4096x4096x4096)/"])

    def test_rows_of_one_side_only_run_that_side(self):
        p, cases, runs = self.parity(PARITY_ROWS="cublaslt/fp16/")
        self.assertEqual((p.returncode, cases), (0, ["matmul/cublaslt/fp16/8192x8192x8192"]), p.stderr)
        self.assertNotIn("llm", runs)
        p, cases, runs = self.parity(PARITY_ROWS="fp8e4m3/16x|bf16/16x")
        self.assertEqual((p.returncode, cases), (0, ["matmul/linear/bf16/16x4096x4096",
                                                     "matmul/linear/fp8e4m3/16x4096x4096"]), p.stderr)
        self.assertEqual(self.run_filter(runs["llm"]),
                         ["--benchmark_filter=^(matmul/linear/bf16/16x4096x4096|matmul/linear/fp8e4m3/16x4096x4096)/"])
        self.assertNotIn("squares", runs)

    def test_bad_choices_are_one_line_and_exit_2_with_nothing_run(self):
        for env, said in (({"PARITY_ROWS": "("}, "not a regex"), ({"PARITY_ROWS": "nothing/like/it"}, "no case matches"),
                          ({"PARITY_FP8": "yes"}, "PARITY_FP8=yes")):
            p, _, runs = self.parity(**env)
            self.assertEqual(p.returncode, 2, env)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
            self.assertIn(said, p.stderr)
            self.assertEqual(runs, {}, env)


    def call(self, *args, **env):
        """The script with ARGS in place of BUILD_DIR OUT 1 (env as parity's)."""
        e = dict(os.environ, PYTHON=os.path.join(self.dir, "python"), FAKE_LOG=self.log, PARITY_COOLDOWN="off")
        for k in ("PARITY_FP8", "PARITY_ROWS", "PARITY_APPEND", "GPUCHECK_COOLDOWN", "PARITY_COOL_DW", "PARITY_COOL_DT",
                  "PARITY_COOL_MAX_S", "PARITY_COOL_SETTLE_S"):
            e.pop(k, None)
        e.update(env)
        return subprocess.run(["bash", self.SCRIPT, *args], env=e, capture_output=True, text=True, timeout=60)

    def assert_refused(self, p, names):
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(names, p.stderr)
        self.assertFalse(os.path.exists(self.log), "something ran")

    def test_bad_arguments_and_settings_are_one_line_and_exit_2_before_anything_is_made(self):
        build = os.path.join(self.dir, "build")
        for n in ("08", "0", "x", "-1"):  # 08: bash's arithmetic reads it as octal
            self.assert_refused(self.call(build, self.out, n), "usage")
        self.assert_refused(self.call(os.path.join(self.dir, "nobuild"), self.out, "1"), "nobuild")
        for name, value in (("PARITY_COOL_DW", "abc"), ("PARITY_COOL_DT", "-1"), ("PARITY_COOL_MAX_S", "1x"),
                            ("PARITY_COOL_SETTLE_S", "nan"), ("PARITY_APPEND", "yes"), ("PARITY_COOLDOWN", "no")):
            self.assert_refused(self.call(build, self.out, "1", **{name: value}), name)
        self.assertFalse(os.path.exists(self.out), "OUT made before the settings were checked")
        afile = os.path.join(self.dir, "afile")
        open(afile, "w").close()
        self.assert_refused(self.call(build, afile, "1"), afile)


if __name__ == "__main__":
    unittest.main()
