"""ci/torch_reference.py loaded as a module for the tests beside this file (it must import
without torch: its pure helpers are what they test)."""
import importlib.util
import os

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "ci", "torch_reference.py")


def load():
    spec = importlib.util.spec_from_file_location("torch_reference", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
