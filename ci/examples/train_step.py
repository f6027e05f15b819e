#!/usr/bin/env python3
"""A fixed-synthetic-data training step: the single-GPU baseline practitioners run (ResNet-50 from
torchvision, channels-last and AMP by flag, or a transformer block). Prints `step N X ms` for every
step (warm-up included: `gpucheck watch --step` leaves the first 10% out), so

    gpucheck watch --step 'step [0-9]+ ([0-9.]+) ms' -- python3 ci/examples/train_step.py

gives the step-time distribution as a results file that `gpucheck compare` gates.
The data is made once (fixed seed) and pinned; each step's input function hands it over and,
with --sleep-input MS, sleeps first: a data loader that cannot keep up.
On the H200 (PyTorch 2.11, batch 256): NCHW fp32 2219 img/s, channels-last bf16 4729,
channels-last fp16 AMP 6140."""
import argparse
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=["resnet50", "transformer"], default="resnet50")
    p.add_argument("--batch", type=int, default=None, help="default 256 (resnet50), 32 (transformer)")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--amp", choices=["off", "fp16", "bf16"], default="bf16")
    p.add_argument("--channels-last", dest="channels_last", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--sleep-input", type=float, default=0.0, metavar="MS",
                   help="the input function sleeps this long each step (a starved loader)")
    p.add_argument("--device", default="cuda")
    a = p.parse_args()
    try:
        import torch
    except ImportError:
        print("train_step.py: PyTorch is not installed", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("train_step.py: no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    dev = torch.device(a.device)
    torch.backends.cudnn.benchmark = True
    if a.model == "resnet50":
        import torchvision
        batch = a.batch or 256
        model = torchvision.models.resnet50(num_classes=1000)
        x_host = torch.randn(batch, 3, 224, 224).pin_memory()
        y_host = torch.randint(0, 1000, (batch,)).pin_memory()
        loss_fn = torch.nn.CrossEntropyLoss()
        unit = "img/s"
    else:
        batch = a.batch or 32
        model = torch.nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True)
        x_host = torch.randn(batch, 512, 1024).pin_memory()
        y_host = torch.randn(batch, 512, 1024).pin_memory()
        loss_fn = torch.nn.MSELoss()
        unit = "seq/s"
    model = model.to(dev)
    memory_format = torch.channels_last if (a.channels_last and a.model == "resnet50") else torch.contiguous_format
    model = model.to(memory_format=memory_format)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(a.amp)
    scaler = torch.amp.GradScaler("cuda", enabled=a.amp == "fp16")

    def next_batch():
        if a.sleep_input > 0:
            time.sleep(a.sleep_input / 1000.0)
        x = x_host.to(dev, non_blocking=True)
        if x.dim() == 4:
            x = x.contiguous(memory_format=memory_format)
        return x, y_host.to(dev, non_blocking=True)

    print(f"train_step: {a.model} batch {batch} amp {a.amp} channels_last {a.channels_last} "
          f"sleep_input {a.sleep_input} ms on {torch.cuda.get_device_name(dev)}", flush=True)
    times = []
    for step in range(a.steps):
        t0 = time.perf_counter()
        x, y = next_batch()
        with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
            loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        torch.cuda.synchronize(dev)
        ms = (time.perf_counter() - t0) * 1000.0
        times.append(ms)
        print(f"step {step} {ms:.3f} ms", flush=True)
    tail = sorted(times[len(times) // 5:])
    med = tail[len(tail) // 2]
    print(f"train_step: median {med:.2f} ms, {batch / med * 1000.0:.0f} {unit}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
