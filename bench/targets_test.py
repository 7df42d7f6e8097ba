#!/usr/bin/env python3
"""Checks bench/targets.py on committed side-by-side files (and issue 16's collective goals on a synthetic one): the 2026-11-28 x2 run at b7a52a7 (the row each goal is
judged on, its verdict, the count of rows behind) and runs on fewer GPUs (one PE; PEs sharing a GPU), whose goals
are listed but not judged. Run by CTest (bench.targets)."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import targets  # noqa: E402

RESULT = os.path.join(here, "results", "2026-11-28-h200-x2-quick-b7a52a7.json")
ONE_PE = os.path.join(here, "results", "2026-11-24-h200-x1-1pe-d87c0d0.json")


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
        self.assertEqual(row["name"], "put_bw/block/ctas=32/threads=1024/uni")  # 352.40 beats ctas=8's 352.23
        self.assertAlmostEqual(row["gshmem"], 352.40, delta=0.005)

    def test_met_and_not_met(self):
        self.assertEqual(self.verdict("p ping-pong <= 0.9 us", "p_pingpong")[1], True)
        self.assertEqual(self.verdict("barrier_all in a kernel <= 1.5 us", "barrier_all_thread")[1], True)  # 1.486
        self.assertEqual(self.verdict("barrier_all in a kernel <= 1.5 us", "barrier_all_block/threads=128")[1], False)
        self.assertEqual(self.verdict("init for 2 PEs <= 100 ms", "init/cuda-preinit")[1], True)
        self.assertEqual(self.verdict("init for 2 PEs <= 100 ms", "init")[1], False)
        self.assertEqual(self.verdict("one-CTA put 16 MiB >= 2x NVSHMEM", "put_bw/block/ctas=1/threads=1024/uni")[1],
                         False)  # 45.52 vs 36.29: 1.25x

    def test_report(self):
        out = io.StringIO()
        sys.argv = ["targets.py", RESULT]
        with contextlib.redirect_stdout(out):
            targets.main()
        text = out.getvalue()
        self.assertIn("| p ping-pong <= 0.9 us | `p_pingpong` 4 B (half round trip) | 0.8491 us | 1.226 | yes |", text)
        self.assertIn("686 compared; 6 behind by more than 2%, 17 behind within it", text)
        self.assertIn("| `host_get_bw/uni` | 4 KiB | 0.4365 | 0.4732 | GB/s | 0.922x |", text)

    def report(self, path):
        out = io.StringIO()
        sys.argv = ["targets.py", path]
        with contextlib.redirect_stdout(out):
            targets.main()
        return out.getvalue()

    def test_one_pe_file_is_not_judged(self):
        text = self.report(ONE_PE)
        self.assertIn("Goals not judged: they are set for 2 PEs on 2 GPUs, and this run had 1 PE(s) on 1 GPU(s)", text)
        self.assertIn("| p ping-pong <= 0.9 us | `p_pingpong` 4 B (half round trip) | 0.1399 us | 0.3488 | "
                      "not judged |", text)
        self.assertNotIn("| yes |", text)
        self.assertNotIn("| no |", text)

    def test_pes_sharing_a_gpu_are_not_judged(self):
        doc = dict(self.doc, gpus=1)  # the x2 file as if both PEs had run on one GPU
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(doc, f)
        try:
            text = self.report(f.name)
        finally:
            os.unlink(f.name)
        self.assertIn("this run had 2 PE(s) on 1 GPU(s)", text)
        self.assertIn("| 0.8491 us | 1.226 | not judged |", text)
        self.assertEqual(targets.goal_scale(self.doc), (2, 2))


class CollectiveGoals(unittest.TestCase):
    """Issue 16's goals on a synthetic merged file with gshmem, NVSHMEM and NCCL columns (the coll suite's rows)."""

    def doc(self):
        def row(name, nbytes, unit, g, n, c):
            return {"name": name, "bytes": nbytes, "unit": unit, "gshmem": g, "nvshmem": n, "nccl": c,
                    "advantage": (g / n) if unit == "GB/s" else (n / g)}
        mib = 1 << 20
        return {"device": "test", "pes": 2, "gpus": 2, "libraries": ["gshmem", "nvshmem", "nccl"], "rows": [
            row("reduce_on_stream/sum/float", 1024, "us", 4.0, 6.3, 7.5),
            row("reduce_on_stream/sum/float/busbw", 1024, "GB/s", 0.25, 0.16, 0.14),
            row("reduce_on_stream/sum/float", 16 * mib, "us", 60.0, 78.0, 75.0),
            row("reduce_on_stream/sum/float/busbw", 256 * mib, "GB/s", 345.0, 280.0, 299.0),
            row("alltoall_on_stream/mem", 1024, "us", 5.0, 7.4, 9.0),
            row("reduce_block/sum/float/threads=1024", 1024, "us", 3.5, 4.0, None),
            row("reduce_block/sum/float/threads=256", 1024, "us", 2.5, 4.2, None),
            row("reduce_block/sum/float/threads=256/busbw", 1024, "GB/s", 0.4, 0.24, None),
        ]}

    def test_goals(self):
        g = {text: (row, ok) for text, row, ok, _ in targets.goals(self.doc())}
        met = {text: (ok(row) if row else None) for text, (row, ok) in g.items()}
        self.assertTrue(met["allreduce f32 1 KiB on a stream <= 4.5 us"])
        self.assertFalse(met["allreduce f32 16 MiB on a stream <= 55 us"])
        self.assertTrue(met["allreduce f32 256 MiB busbw >= 340 GB/s"])
        self.assertFalse(met["alltoall 1 KiB on a stream <= 4.5 us"])
        self.assertIsNone(met["alltoall 16 MiB on a stream <= 45 us"])  # no row
        block = g["block-scope allreduce 1 KiB in a kernel <= 3 us"][0]
        self.assertEqual(block["name"], "reduce_block/sum/float/threads=256")  # the fastest thread count
        self.assertTrue(met["block-scope allreduce 1 KiB in a kernel <= 3 us"])

    def report(self, doc):
        """targets.py's output for `doc` (written to a temporary file)."""
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(doc, f)
        try:
            out = io.StringIO()
            sys.argv = ["targets.py", f.name]
            with contextlib.redirect_stdout(out):
                targets.main()
            return out.getvalue()
        finally:
            os.unlink(f.name)

    def test_report_names_nccl(self):
        text = self.report(self.doc())
        self.assertIn("| allreduce f32 1 KiB on a stream <= 4.5 us | `reduce_on_stream/sum/float` 1 KiB "
                      "(float_sum_reduce_on_stream; NCCL 7.5 us) | 4 us | 6.3 | yes |", text)
        self.assertIn("| alltoall 16 MiB on a stream <= 45 us | (no row in this file) |", text)

    def test_failed_gshmem_row_is_named(self):
        doc = self.doc()
        doc["rows"].append({"name": "alltoall_on_stream/mem", "bytes": 16 << 20, "unit": "us", "nvshmem": 50.0,
                            "nccl": 49.0, "status": {"gshmem": "failed: wrong result on PE 1"}})
        text = self.report(doc)
        self.assertIn("| alltoall 16 MiB on a stream <= 45 us | (no row in this file) |", text)
        self.assertIn("gshmem rows without a figure (1):", text)
        self.assertIn("| `alltoall_on_stream/mem` | 16 MiB | failed: wrong result on PE 1 |", text)


class HostTime(unittest.TestCase):
    """The host's wall time per call (host_us) through merge.py into targets.py, and the empty-kernel floor row: shown
    beside the goals and its value, never counted among the rows compared (no library is in it)."""

    def test_merge_and_report(self):
        def lib_file(d, lib, reduce_us, host_us, floor_us, floor_host):
            doc = {"device": "test x2", "pes": 2, "gpus": 2, "library": lib, "rows": [
                {"name": "reduce_on_stream/sum/float", "bytes": 1024, "unit": "us", lib: reduce_us, "repeats": 3,
                 "iters": 200, "pes": 2, "how": "h", "host_us": host_us},
                {"name": "empty_kernel_on_stream", "bytes": 0, "unit": "us", lib: floor_us, "repeats": 3,
                 "iters": 200, "pes": 2, "how": "e", "host_us": floor_host}]}
            path = os.path.join(d, lib + ".json")
            with open(path, "w") as f:
                json.dump(doc, f)
            return path

        import subprocess
        with tempfile.TemporaryDirectory() as d:
            g = lib_file(d, "gshmem", 5.0, 4.9, 3.0, 2.9)
            n = lib_file(d, "nvshmem", 11.2, 6.1, 3.3, 3.2)  # the floor slower in NVIDIA's run: noise, not a row
            merged = os.path.join(d, "m.json")
            table = subprocess.run([sys.executable, os.path.join(here, "merge.py"), "--lib", "gshmem", g, "--lib",
                                    "nvshmem", n, "-o", merged], capture_output=True, text=True, check=True).stdout
            self.assertIn("host us 4.9 / 6.1", table)
            with open(merged) as f:
                doc = json.load(f)
            row = next(r for r in doc["rows"] if r["name"] == "reduce_on_stream/sum/float")
            self.assertEqual(row["host_us"], {"gshmem": 4.9, "nvshmem": 6.1})
            out = io.StringIO()
            sys.argv = ["targets.py", merged]
            with contextlib.redirect_stdout(out):
                targets.main()
            text = out.getvalue()
        self.assertIn("| allreduce f32 1 KiB on a stream <= 4.5 us | `reduce_on_stream/sum/float` 1 KiB "
                      "(float_sum_reduce_on_stream; host us per call 4.9 / 6.1) | 5 us | 11.2 | no |", text)
        self.assertIn("an empty kernel launched back to back, 3 us per launch (host 2.9 us)", text)
        self.assertIn("Other rows: 1 compared; 0 behind", text)  # the floor row is not one of them
        self.assertNotIn("`empty_kernel_on_stream`", text)


if __name__ == "__main__":
    unittest.main()
