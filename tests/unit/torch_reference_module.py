"""ci/torch_reference.py loaded as a module for the tests beside this file (it must import
without torch: its pure helpers are what they test), and a Google Benchmark entry to feed it."""
import importlib.util
import os

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "ci", "torch_reference.py")


def load():
    spec = importlib.util.spec_from_file_location("torch_reference", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def gb_entry(name, **kw):
    e = {"name": name + "/iterations:1/manual_time", "run_name": name + "/iterations:1/manual_time",
         "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 1,
         "real_time": 10.0, "cpu_time": 10.0, "time_unit": "us"}
    e.update(kw)
    return e
