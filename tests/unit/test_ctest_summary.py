#!/usr/bin/env python3
"""ci/ctest_summary.py: the counts and skip reasons of a ctest JUnit file, as ctest 3.25 and 4
write it (a skip is status="notrun" with <skipped message="SKIP_RETURN_CODE=77"> or
"SKIP_REGULAR_EXPRESSION_MATCHED"), and one line, exit 2, for a file that is not one."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "ci", "ctest_summary.py")
spec = importlib.util.spec_from_file_location("ctest_summary", SCRIPT)
cs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cs)

GTEST_SKIP = ("[ RUN      ] Engine.X\n/src/tests/gpu/test_engine.cpp:30: Skipped\n"
              "gpucheck: no CUDA device found (no NVIDIA driver)\n\n[  SKIPPED ] Engine.X (0 ms)\n")


def case(name, status, inner=""):
    return f'<testcase name="{name}" classname="{name}" time="0.1" status="{status}">{inner}</testcase>'


def skipped(name, mark, out):
    return case(name, "notrun", f'<skipped message="{mark}"/><system-out>{out}</system-out>')


def suite(*cases):
    return '<?xml version="1.0" encoding="UTF-8"?><testsuite name="x" tests="0">' + "".join(cases) + "</testsuite>"


class Counts(unittest.TestCase):
    def test_passed_failed_and_skipped_with_reasons_most_first(self):
        xml = suite(case("a", "run", "<system-out>ok</system-out>"),
                    case("b", "fail", '<failure message=""/><system-out>boom</system-out>'),
                    skipped("g1", "SKIP_REGULAR_EXPRESSION_MATCHED", GTEST_SKIP),
                    skipped("g2", "SKIP_REGULAR_EXPRESSION_MATCHED", GTEST_SKIP),
                    skipped("f", "SKIP_RETURN_CODE=77", "SKIP: fuzzer not built: clang++ not found\n"),
                    skipped("s", "SKIP_RETURN_CODE=77", "wall 0.1 s\nSKIPPED: gpucheck: no CUDA device found (x)\n"))
        self.assertEqual(cs.summarize(xml),
                         "1 passed, 4 skipped (no CUDA device found (no NVIDIA driver): 2, "
                         "fuzzer not built: clang++ not found: 1, no CUDA device found (x): 1), 1 failed")

    def test_one_reason_from_a_binary_a_script_and_a_gtest_counts_once(self):
        xml = suite(skipped("g", "SKIP_REGULAR_EXPRESSION_MATCHED", GTEST_SKIP.replace("gpucheck: ", "")),
                    skipped("s", "SKIP_RETURN_CODE=77", "SKIPPED: gpucheck: no CUDA device found (no NVIDIA driver)\n"),
                    skipped("e", "SKIP_RETURN_CODE=77",
                            "SKIPPED: attention_energy: no CUDA device found (no NVIDIA driver)\n"))
        self.assertEqual(cs.summarize(xml), "0 passed, 3 skipped (no CUDA device found (no NVIDIA driver): 3), 0 failed")

    def test_a_test_not_run_for_another_reason_is_a_failure_as_ctest_counts_it(self):
        xml = suite(case("missing", "notrun", '<skipped message="Unable to find executable"/>'))
        self.assertEqual(cs.summarize(xml), "0 passed, 0 skipped, 1 failed")

    def test_disabled_is_a_skip(self):
        self.assertEqual(cs.summarize(suite(case("d", "disabled"))), "0 passed, 1 skipped (disabled: 1), 0 failed")

    def test_empty_suite_and_testsuites_root(self):
        self.assertEqual(cs.summarize(suite()), "0 passed, 0 skipped, 0 failed")
        nested = "<testsuites>" + suite(case("a", "run")).split("?>", 1)[1] + "</testsuites>"
        self.assertEqual(cs.summarize(nested), "1 passed, 0 skipped, 0 failed")


class Reasons(unittest.TestCase):
    def test_gtest_message_is_the_line_after_skipped(self):
        self.assertEqual(cs.skip_reason(GTEST_SKIP), "gpucheck: no CUDA device found (no NVIDIA driver)")

    def test_gtest_skip_without_message_falls_back_to_the_last_line(self):
        out = "[ RUN      ] A.b\n/x.cpp:3: Skipped\n\n[  SKIPPED ] A.b (0 ms)\n"
        self.assertEqual(cs.skip_reason(out), "/x.cpp:3: Skipped")

    def test_no_output_and_none(self):
        self.assertEqual(cs.skip_reason(""), "no reason given")
        self.assertEqual(cs.skip_reason(None), "no reason given")
        self.assertEqual(cs.summarize(suite(skipped("q", "SKIP_RETURN_CODE=77", ""))),
                         "0 passed, 1 skipped (no reason given: 1), 0 failed")

    def test_long_reason_is_cut_at_its_limit(self):
        r = cs.shorten("x" * 500)
        self.assertEqual(len(r), cs.MAX_REASON)
        self.assertTrue(r.endswith("..."))
        self.assertEqual(cs.shorten("y" * cs.MAX_REASON), "y" * cs.MAX_REASON)


class BadInput(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)

    def test_malformed_wrong_root_and_missing_are_one_line_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            bad, other, empty = (os.path.join(d, n) for n in ("bad.xml", "other.xml", "empty.xml"))
            for path, text in ((bad, "<testsuite><testcase"), (other, "<html/>"), (empty, "")):
                with open(path, "w") as f:
                    f.write(text)
            for path in (bad, other, empty, os.path.join(d, "missing.xml")):
                r = self.run_script(path)
                self.assertEqual(r.returncode, 2, path)
                self.assertEqual(r.stdout, "")
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertTrue(r.stderr.startswith(f"ctest_summary.py: {path}: "), r.stderr)

    def test_usage(self):
        self.assertEqual(self.run_script().returncode, 2)


if __name__ == "__main__":
    unittest.main()
