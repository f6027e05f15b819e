#!/usr/bin/env python3
"""The five workloads of the H200 check-up table (docs/WATCH.md), one per run, for
`gpucheck watch` to judge:

  gemm          bf16 GEMM 8192^3 in a loop               -> compute-bound
  tiny_kernels  100 tiny kernels, then a sync            -> launch/latency-bound
  starved       10 GEMMs 4096^3, then sleep 30 ms        -> starved (prints `step N X ms`)
  h2d           pinned host-to-device copies of 256 MiB  -> PCIe-bound, busy but SMs idle
  hbm_copy      device-to-device copy of 2 GiB           -> memory-bound
  disk_fed      64 MiB reads of a file out of the page cache, a small GEMM each
                                                        -> starved, disk reads
  checkpoint    bf16 GEMMs for 2.5 s, then 2.5 s writing a checkpoint to disk
                                                        -> stalled (periodic stalls)

Each runs for --seconds after CUDA is up and prints one last line with its rate
(`gemm: 812.3 TFLOP/s`, ...), which ci/watch_session.sh compares with and without watch."""
import argparse
import sys
import time


def drop_cache(fd):
    """Asks the kernel to forget the file's pages, so the next read comes from the disk."""
    import os
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def disk_fed(torch, a, end, sync):
    """Writes a 2 GiB file (before the timed loop), then reads it in 64 MiB chunks out of the
    page cache, each copied to the GPU and fed to a small GEMM: the disk is the limit."""
    import os
    chunk, size = 64 << 20, 2 << 30
    path = os.path.join(a.dir, "gpucheck_disk_fed.bin")
    with open(path, "wb") as f:
        block = os.urandom(chunk)
        for _ in range(size // chunk):
            f.write(block)
        f.flush()
        drop_cache(f.fileno())
    w = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    n, read, t0 = 0, 0, time.perf_counter()
    fd = os.open(path, os.O_RDONLY)
    try:
        while time.time() < end:
            buf = os.pread(fd, chunk, (n * chunk) % size)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            x = torch.frombuffer(bytearray(buf[: 256 * 256 * 2]), dtype=torch.bfloat16).view(256, 256).cuda()
            (x @ w).sum().item()
            read += len(buf)
            n += 1
    finally:
        os.close(fd)
        os.unlink(path)
    return n, read / (time.perf_counter() - t0) / 1e6, "MB/s read"


def checkpoint(torch, a, end, sync):
    """bf16 GEMMs 8192^3 for 2.5 s, then 2.5 s writing a 'checkpoint' (256 MiB writes, each
    fsynced), again and again: the GPU busy between periodic stalls."""
    import os
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    block = os.urandom(256 << 20)
    path = os.path.join(a.dir, "gpucheck_checkpoint.bin")
    n, t0 = 0, time.perf_counter()
    try:
        while time.time() < end:
            busy = time.time() + 2.5
            while time.time() < busy:
                x @ x
                sync()
                n += 1
            stall = time.time() + 2.5
            with open(path, "wb") as f:
                while time.time() < stall:
                    f.write(block)
                    f.flush()
                    os.fsync(f.fileno())
            print(f"checkpoint written after {n} GEMMs", flush=True)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    return n, n * 2 * 8192 ** 3 / (time.perf_counter() - t0) / 1e12, "TFLOP/s"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workload", choices=["gemm", "tiny_kernels", "starved", "h2d", "hbm_copy", "disk_fed", "checkpoint"])
    p.add_argument("--dir", default=".", help="disk_fed, checkpoint: where their files go (a disk, not tmpfs)")
    p.add_argument("--seconds", type=float, default=6.0)
    a = p.parse_args()
    import torch
    torch.zeros(1, device="cuda")
    sync = torch.cuda.synchronize
    end = time.time() + a.seconds
    n, t0 = 0, time.perf_counter()
    if a.workload == "gemm":
        x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        y = torch.randn_like(x)
        while time.time() < end:
            x @ y
            sync()
            n += 1
        rate, unit = n * 2 * 8192 ** 3 / (time.perf_counter() - t0) / 1e12, "TFLOP/s"
    elif a.workload == "tiny_kernels":
        x = torch.zeros(1024, device="cuda")
        while time.time() < end:
            for _ in range(100):
                x.add_(1)
            sync()
            n += 100
        rate, unit = n / (time.perf_counter() - t0), "kernels/s"
    elif a.workload == "starved":
        x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        while time.time() < end:
            s = time.perf_counter()
            for _ in range(10):
                x @ x
            sync()
            time.sleep(0.03)
            n += 1
            print(f"step {n} {(time.perf_counter() - s) * 1000:.3f} ms", flush=True)
        rate, unit = n / (time.perf_counter() - t0), "steps/s"
    elif a.workload == "h2d":
        h = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
        d = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
        while time.time() < end:
            d.copy_(h, non_blocking=True)
            sync()
            n += 1
        rate, unit = n * (256 << 20) / (time.perf_counter() - t0) / 1e9, "GB/s"
    elif a.workload == "disk_fed":
        n, rate, unit = disk_fed(torch, a, end, sync)
    elif a.workload == "checkpoint":
        n, rate, unit = checkpoint(torch, a, end, sync)
    else:
        s = torch.empty(1 << 31, dtype=torch.uint8, device="cuda")
        d = torch.empty_like(s)
        while time.time() < end:
            d.copy_(s)
            sync()
            n += 1
        rate, unit = 2 * n * (1 << 31) / (time.perf_counter() - t0) / 1e9, "GB/s"
    print(f"{a.workload}: {rate:.1f} {unit}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
