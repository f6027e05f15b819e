#!/usr/bin/env python3
"""ci/made_fleet.py: a made fleet from the h200 fixture, and bad input as one line, exit 2, with
nothing removed (it once began with rmtree(OUT): an OUT naming ACCEPT_DIR deleted the input)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "ci", "made_fleet.py")
FIXTURE = os.path.join(HERE, "compare", "fixtures", "fleet", "h200", "h200-d")


class MadeFleet(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.src = os.path.join(self.dir, "src")
        shutil.copytree(FIXTURE, self.src)

    def made(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)

    def refused(self, args, names):
        p = self.made(*args)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn(names, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertTrue(os.path.isfile(os.path.join(self.src, "accept.json")), "the input was removed")

    def test_two_nodes_then_made_again_in_place(self):
        out = os.path.join(self.dir, "fleet")
        for _ in range(2):
            p = self.made(self.src, out, "2", "2", "n001:1", "n002")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(sorted(os.listdir(out)), ["n001", "n002"])
            self.assertTrue(os.path.isfile(os.path.join(out, "n002", "accept.json")))
        self.assertEqual([e for e in os.listdir(self.dir) if e.startswith(".made_fleet.")], [])

    def test_bad_input_is_one_line_exit_2_and_nothing_removed(self):
        out = os.path.join(self.dir, "fleet")
        self.refused([self.src, self.src, "2", "1", "n001:0", "n002"], self.src)  # OUT is the input
        self.refused([self.src, self.dir, "2", "1", "n001:0", "n002"], self.dir)  # OUT holds the input
        self.refused([self.src, os.path.join(self.src, "gpu0", "x"), "2", "1", "n001:0", "n002"], "x")
        self.refused([self.src, out, "two", "1", "n001:0", "n002"], "NODES")
        self.refused([self.src, out, "2", "0", "n001:0", "n002"], "GPUS")
        self.refused([self.src, out, "2", "1", "n001", "n002"], "LOW_GEMM_NODE:GPU")
        self.refused([os.path.join(self.dir, "nowhere"), out, "2", "1", "n001:0", "n002"], "nowhere")
        self.refused([self.src, os.path.join(self.dir, "no", "fleet"), "2", "1", "n001:0", "n002"], "fleet")
        self.refused([self.src, out, "2"], "usage")
        keep = os.path.join(self.dir, "keep")
        os.makedirs(keep)
        open(os.path.join(keep, "notes.txt"), "w").close()
        self.refused([self.src, keep, "2", "1", "n001:0", "n002"], keep)
        self.assertTrue(os.path.isfile(os.path.join(keep, "notes.txt")), "a folder of other files was removed")
        self.assertFalse(os.path.exists(out))

    def test_a_malformed_accept_json_is_one_line_and_no_fleet(self):
        with open(os.path.join(self.src, "accept.json"), "w") as f:
            f.write('{"gpus": []}')
        out = os.path.join(self.dir, "fleet")
        self.refused([self.src, out, "2", "1", "n001:0", "n002"], self.src)
        self.assertFalse(os.path.exists(out))
        self.assertEqual([e for e in os.listdir(self.dir) if e.startswith(".made_fleet.")], [])


if __name__ == "__main__":
    unittest.main()
