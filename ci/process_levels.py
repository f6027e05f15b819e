#!/usr/bin/env python3
"""The table of ci/process_levels.sh: OUT/levels.csv and OUT/levels.md from OUT/runs/P.I.json.

Usage: process_levels.py OUT COUNTER PLACEMENT...
Each process's figure is COUNTER of its first benchmark (real_time where it has no COUNTER).
Beside it, the run's host reference (host_ref_us: a CPU pointer chase) where it has one.
Levels: all figures sorted, split at the widest gap between neighbours when that gap is at least
LEVEL_GAP (8%) of the lower one (the two launch levels are 20-25% apart, a level's own spread
a few %); otherwise one level. Per placement: the processes on each level, min, median, max.
"""
import csv
import io
import json
import os
import re
import math
import statistics
import sys

from whole_file import write_whole  # ci/whole_file.py, beside this script

LEVEL_GAP = 0.08
PLACEMENTS = ("pinned", "unpinned", "other_cpu", "no_aslr", "no_thp", "hugetlb", "env_pad")


def finite(v):
    """v when it is a finite number (not a bool), else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return v


def figure(path, counter):
    """(value, cpu) of the run's first benchmark, or None where the file has none."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        return None
    runs = [b for b in doc["benchmarks"] if isinstance(b, dict) and b.get("run_type", "iteration") == "iteration"]
    if not runs:
        return None
    b = runs[0]
    value = finite(b.get(counter, b.get("real_time")))
    if value is None:  # NaN, a string: no figure, as a process that wrote none
        return None
    context = doc.get("context") if isinstance(doc.get("context"), dict) else {}
    ref = finite(b.get("host_ref_us"))
    return float(value), str(context.get("cpu_pinned", "?")), "" if ref is None else ref


def split(values):
    """The boundary between the two levels (a value between them), or None for one level."""
    v = sorted(values)
    best, at = 0.0, None
    for a, b in zip(v, v[1:]):
        if a > 0 and (b - a) / a > best:
            best, at = (b - a) / a, (a + b) / 2
    return at if best >= LEVEL_GAP else None


def span(values, fmt):
    """Some processes' figures as "min-max" ("-" for none): huge pages, host reference."""
    v = [x for x in values if isinstance(x, (int, float))]
    if not v:
        return "-"
    lo, hi = fmt.format(min(v)), fmt.format(max(v))
    return lo if lo == hi else f"{lo}-{hi}"


def main(argv):
    if len(argv) < 4:
        print("usage: process_levels.py OUT COUNTER PLACEMENT...", file=sys.stderr)
        return 2
    out, counter, places = argv[1], argv[2], argv[3:]
    if not os.path.isdir(out):
        print(f"process_levels.py: {out}: not a folder", file=sys.stderr)
        return 2
    for p in places:
        if p not in PLACEMENTS:
            print(f"process_levels.py: unknown placement {p} ({', '.join(PLACEMENTS)})", file=sys.stderr)
            return 2
    runs = os.path.join(out, "runs")
    order = {}
    try:
        with open(os.path.join(runs, "order.txt"), encoding="utf-8") as f:
            for line in f:
                key, _, seq = line.strip().partition(" ")
                if seq.isdigit():
                    order[key] = int(seq)
    except OSError:
        pass
    thp, pids = {}, {}
    try:
        with open(os.path.join(runs, "thp.txt"), encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[1].isdigit():
                    thp[parts[0]], pids[parts[0]] = int(parts[1]), parts[2]
    except OSError:
        pass
    rows = []
    for name in os.listdir(runs) if os.path.isdir(runs) else []:
        m = re.fullmatch(r"(.+)\.([0-9]+)\.json", name)
        if m and m.group(1) in places:
            f = figure(os.path.join(runs, name), counter)
            if f:
                key = f"{m.group(1)}.{m.group(2)}"
                rows.append((m.group(1), int(m.group(2)), order.get(key, 0), f[0], f[1], thp.get(key, ""), f[2],
                             pids.get(key, "")))
    rows.sort(key=lambda r: (places.index(r[0]), r[1]))
    table = io.StringIO()
    w = csv.writer(table)
    w.writerow(["placement", "process", "order", counter, "cpu_pinned", "anon_huge_kB", "host_ref_us", "pid"])
    w.writerows(rows)
    at = split([r[3] for r in rows]) if rows else None
    lines = [f"# Levels of {counter} a fresh process ({len(rows)} processes)", ""]
    if not rows:
        lines.append("No process wrote a figure (levels.log says why).")
    elif at is None:
        lines.append("One level: no gap of 8% or more between any two processes' figures.")
    else:
        lines.append(f"Two levels, split at {at:.4g} (the widest gap between neighbours).")
    lines += ["", "| placement | processes | low level | high level | min | median | max | CPUs | huge pages kB, low / high "
              "| host reference us, low / high |", "|---|---|---|---|---|---|---|---|---|---|"]
    for p in places:
        mine = [r for r in rows if r[0] == p]
        v = [r[3] for r in mine]
        cpus = sorted({r[4] for r in mine})
        if not v:
            lines.append(f"| {p} | 0 | | | | | | | | |")
            continue
        is_low = [at is None or r[3] < at for r in mine]
        low = sum(is_low)
        huge = [span([r[5] for r, lo in zip(mine, is_low) if lo == want], "{}") for want in (True, False)]
        ref = [span([r[6] for r, lo in zip(mine, is_low) if lo == want], "{:.4g}") for want in (True, False)]
        lines.append(f"| {p} | {len(v)} | {low} | {len(v) - low} | {min(v):.4g} | {statistics.median(v):.4g} | "
                     f"{max(v):.4g} | {' '.join(cpus)} | {huge[0]} / {huge[1]} | {ref[0]} / {ref[1]} |")
    if at is not None:
        seq = "".join("L" if r[3] < at else "H" for r in sorted(rows, key=lambda r: r[2]))
        lines += ["", f"In the order the processes started (L low, H high): {seq}"]
    try:
        with open(os.path.join(out, "levels.log"), encoding="utf-8", errors="replace") as f:
            notes = [line.rstrip("\n") for line in f if line.strip()]
    except OSError:
        notes = []
    if notes:
        lines += ["", "## The machine and the run (levels.log)", ""] + [f"- {n}" for n in notes]
    text = "\n".join(lines) + "\n"
    outputs = (("levels.csv", table.getvalue()), ("levels.md", text))
    for name, _ in outputs:  # both or neither
        if os.path.isdir(os.path.join(out, name)):
            print(f"process_levels.py: {os.path.join(out, name)}: is a folder, not a file to write", file=sys.stderr)
            return 2
    for name, content in outputs:
        try:
            write_whole(os.path.join(out, name), content)
        except OSError as e:
            print(f"process_levels.py: {os.path.join(out, name)}: cannot write: {e.strerror}", file=sys.stderr)
            return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
