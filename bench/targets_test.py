#!/usr/bin/env python3
"""Checks bench/targets.py on a committed side-by-side file (the 2026-11-22 x2 run at ecf533e): the row each goal
is judged on, its verdict, and the count of rows behind. Run by CTest (bench.targets)."""
import contextlib
import io
import json
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import targets  # noqa: E402

RESULT = os.path.join(here, "results", "2026-11-22-h200-x2-quick-ecf533e.json")


class Targets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(RESULT) as f:
            cls.doc = json.load(f)
        cls.goals = {(text, row["name"] if row else None): (row, ok) for text, row, ok, _ in targets.goals(cls.doc)}

    def verdict(self, text, name):
        row, ok = self.goals[(text, name)]
        return row["gshmem"], ok(row)

    def test_best_cta_count_is_chosen(self):
        row = targets.best(self.doc, "put_bw/block/ctas=", "/uni", 256 << 20)
        self.assertEqual(row["name"], "put_bw/block/ctas=8/threads=1024/uni")  # 353.7 beats ctas=32's 351.3
        self.assertAlmostEqual(row["gshmem"], 353.7, delta=0.05)

    def test_met_and_not_met(self):
        self.assertEqual(self.verdict("p ping-pong <= 0.9 us", "p_pingpong")[1], True)
        self.assertEqual(self.verdict("barrier_all in a kernel <= 1.5 us", "barrier_all_thread")[1], False)
        self.assertEqual(self.verdict("init for 2 PEs <= 100 ms", "init/cuda-preinit")[1], True)
        self.assertEqual(self.verdict("init for 2 PEs <= 100 ms", "init")[1], False)
        self.assertEqual(self.verdict("one-CTA put 16 MiB >= 2x NVSHMEM", "put_bw/block/ctas=1/threads=1024/uni")[1],
                         False)  # 45.79 vs 37.36: 1.23x

    def test_report(self):
        out = io.StringIO()
        sys.argv = ["targets.py", RESULT]
        with contextlib.redirect_stdout(out):
            targets.main()
        text = out.getvalue()
        self.assertIn("| p ping-pong <= 0.9 us | `p_pingpong` 4 B (half round trip) | 0.8068 us | 1.193 | yes |", text)
        self.assertIn("332 compared; 18 behind by more than 2%, 43 behind within it", text)
        self.assertIn("| `stream_put_bw/uni` | 4 KiB | 1.953 | 2.426 | GB/s | 0.805x |", text)


if __name__ == "__main__":
    unittest.main()
