#!/usr/bin/env python3
"""A made fleet for `gpucheck fleet` from one real acceptance folder (what `gpucheck accept --out`
wrote on one node): NODES folders of GPUS GPUs each, every figure moved by 0.3% noise, one GPU
5% low in bf16 GEMM (NODE:GPU) and one node 4% low in HBM on every GPU. The screenshots in
docs/ACCEPTANCE.md come from it:
  ci/made_fleet.py tests/unit/compare/fixtures/fleet/h200/h200-d /tmp/f64 64 8 n017:3 n042
  ci/made_fleet.py tests/unit/compare/fixtures/fleet/h200/h200-d /tmp/f1000 1000 1 node0417:0 node0733
Nodes are n001... below 1,000 nodes, node0001... from 1,000."""
import json, os, random, shutil, sys
if len(sys.argv) != 7:
    sys.exit("usage: made_fleet.py ACCEPT_DIR OUT NODES GPUS LOW_GEMM_NODE:GPU LOW_HBM_NODE")
src, out, nodes, gpus, low_gemm, low_hbm = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
low_gemm_node, low_gemm_gpu = low_gemm.split(":")
rng = random.Random(38)
shutil.rmtree(out, ignore_errors=True)
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
    json.dump(acc, open(os.path.join(out, name, "accept.json"), "w"))
