#!/usr/bin/env python3
"""A made fleet for `gpucheck fleet` from one real acceptance folder (what `gpucheck accept --out`
wrote on one node): NODES folders of GPUS GPUs each, every figure moved by 0.3% noise, one GPU
5% low in bf16 GEMM (NODE:GPU) and one node 4% low in HBM on every GPU. The screenshots in
docs/ACCEPTANCE.md come from it:
  ci/made_fleet.py tests/unit/compare/fixtures/fleet/h200/h200-d /tmp/f64 64 8 n017:3 n042
  ci/made_fleet.py tests/unit/compare/fixtures/fleet/h200/h200-d /tmp/f1000 1000 1 node0417:0 node0733
Nodes are n001... below 1,000 nodes, node0001... from 1,000.
Bad input (a bad number, an ACCEPT_DIR without accept.json and gpu0/, an OUT that holds or is
inside ACCEPT_DIR, an OUT folder that holds anything but a made fleet's nodes): one line, exit 2,
nothing removed. OUT is replaced whole: the fleet is made beside it, then moved in."""
import json, os, random, re, shutil, sys, tempfile


def bad(msg):
    print(f"made_fleet.py: {msg}", file=sys.stderr)
    sys.exit(2)


if len(sys.argv) != 7:
    bad("usage: made_fleet.py ACCEPT_DIR OUT NODES GPUS LOW_GEMM_NODE:GPU LOW_HBM_NODE")
src, out, nodes_text, gpus_text, low_gemm, low_hbm = sys.argv[1:]
for name, text in (("NODES", nodes_text), ("GPUS", gpus_text)):
    if not re.fullmatch(r"[1-9][0-9]{0,4}", text):
        bad(f"{name} {text!r}: not a whole number from 1 to 99999")
nodes, gpus = int(nodes_text), int(gpus_text)
m = re.fullmatch(r"(.+):([0-9]+)", low_gemm)
if not m:
    bad(f"LOW_GEMM_NODE:GPU {low_gemm!r}: not NODE:GPU")
low_gemm_node, low_gemm_gpu = m.group(1), m.group(2)
if not (os.path.isfile(os.path.join(src, "accept.json")) and os.path.isdir(os.path.join(src, "gpu0"))):
    bad(f"{src}: not an acceptance folder (accept.json and gpu0/)")
real_src, real_out = os.path.realpath(src), os.path.realpath(out)
if os.path.commonpath([real_src, real_out]) in (real_src, real_out):
    bad(f"{out}: holds or is inside ACCEPT_DIR {src}; refusing to replace it")
if os.path.lexists(out):
    if not os.path.isdir(out) or os.path.islink(out):
        bad(f"{out}: not a folder")
    strangers = [e for e in os.listdir(out) if not os.path.isfile(os.path.join(out, e, "accept.json"))]
    if strangers:
        bad(f"{out}: holds {strangers[0]!r}, not a made fleet's node; refusing to replace it")
if not os.path.isdir(os.path.dirname(os.path.abspath(out))):
    bad(f"{out}: its folder is not there")
rng = random.Random(38)
final_out = out
out = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(final_out)) or ".", prefix=".made_fleet.")
try:
    files = []
    for root, _, fs in os.walk(os.path.join(src, "gpu0")):
        files += [os.path.relpath(os.path.join(root, f), os.path.join(src, "gpu0")) for f in fs if f.endswith(".json")]
    width = 3 if nodes < 1000 else 4
    prefix = "n" if nodes < 1000 else "node"
    for n in range(1, nodes + 1):
        name = f"{prefix}{n:0{width}d}"
        acc = json.load(open(os.path.join(src, "accept.json")))
        g0 = acc["gpus"][0]
        acc["gpus"] = []
        for g in range(gpus):
            bus = f"0000:{0x18 + 0x10 * g:02x}:00.0"
            uuid = f"GPU-{name}-{g}"
            acc["gpus"].append(dict(g0, label=f"GPU {g} {bus}", index=str(g), uuid=uuid, pci_bus_id=bus, host=name, files=[]))
            for rel in files:
                j = json.load(open(os.path.join(src, "gpu0", rel)))
                c = j["context"]
                c.update(host_name=name, gpu_uuid=uuid, gpu_pci_bus_id=bus, gpucheck_device_index=str(g))
                for b in j["benchmarks"]:
                    f = 1 + rng.gauss(0, 0.003)
                    if name == low_gemm_node and g == int(low_gemm_gpu) and "matmul/cublaslt/bf16/" in b["name"]: f *= 0.95
                    if name == low_hbm and b["name"].startswith("memory/"): f *= 0.96
                    for k in ("TFLOPS", "GBps"):
                        if k in b: b[k] *= f
                    for k in ("real_time", "cpu_time"):
                        if k in b: b[k] /= f
                p = os.path.join(out, name, f"gpu{g}", rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                json.dump(j, open(p, "w"))
        os.makedirs(os.path.join(out, name), exist_ok=True)
        json.dump(acc, open(os.path.join(out, name, "accept.json"), "w"))
except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError) as e:  # a file not as accept writes
    shutil.rmtree(out, ignore_errors=True)
    bad(f"{src}: cannot make the fleet from it: {type(e).__name__}: {e}")
shutil.rmtree(final_out, ignore_errors=True)
os.replace(out, final_out)
