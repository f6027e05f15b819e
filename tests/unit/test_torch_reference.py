#!/usr/bin/env python3
"""ci/torch_reference.py's pure helpers, without torch or a GPU: bench_attention's shape labels
(kv, sk), the bottom-right causal mask, the reference rows, the engine's batch rule and the
one-rank NCCL counterparts. The timing
needs PyTorch and a GPU (ci/axes_session.sh); a test of it here would skip, so there is none."""
import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "ci", "torch_reference.py")


def load():
    spec = importlib.util.spec_from_file_location("torch_reference", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # must import without torch
    return mod


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
        self.assertEqual(tr.attention_flops(sh, True), 2.0 * 8 * 32 * 128 * 8192 * 128)

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

    def test_dotted_versions_as_our_context(self):
        self.assertEqual(tr.dotted_version(130100), "13.1.0")
        self.assertEqual(tr.dotted_version(91900), "9.19.0")
        self.assertEqual(tr.dotted_version(22809), "2.28.9")


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


class Cli(unittest.TestCase):
    def test_timing_without_torch_is_exit_2(self):
        import subprocess
        if subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0:
            self.skipTest("torch is installed here")
        r = subprocess.run([sys.executable, SCRIPT, "--cases", os.devnull], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("PyTorch is not installed", r.stderr)


if __name__ == "__main__":
    unittest.main()
