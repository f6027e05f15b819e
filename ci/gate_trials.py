#!/usr/bin/env python3
"""Gate trials' two pieces of Python (ci/gate_trials.sh):

  gate_trials.py propose THRESHOLDS OUT ENTRY...
      OUT: THRESHOLDS with each ENTRY (GLOB=SECTION:PCT[:PROCESSES], SECTION host_bound or
      overrides; PROCESSES 2-100) first in its section, in place of any
      entry of the same glob in report_only, host_bound or overrides. Its "why" says it is a trial.
  gate_trials.py table TRIAL_DIR
      TRIAL_DIR/trials.md (printed too) from every TRIAL_DIR/gate-K/compare.json: per case, its
      limit, its change against the baseline in each gate (worse is positive), the largest change
      each way and the gates it failed, the trial's entries first; then each gate's own figure
      and their spread across the gates.

Bad input: one line naming the file and the problem, exit 2.
"""
import json
import math
import os
import re
import sys

import whole_file  # ci/whole_file.py, beside this script

SECTIONS = ("report_only", "host_bound", "overrides")


class BadInput(Exception):
    pass


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: not JSON: {e}") from None


def parse_entry(text):
    """GLOB=SECTION:PCT[:PROCESSES] -> the thresholds entry (a dict)."""
    m = re.fullmatch(r"([^=]+)=(host_bound|overrides):([0-9.]+)(?::([0-9]+))?", text)
    if not m:
        raise BadInput(f"entry \"{text}\": not GLOB=host_bound|overrides:PCT[:PROCESSES]")
    glob, section, pct_text, processes = m.groups()
    try:
        pct = float(pct_text)
    except ValueError:
        raise BadInput(f"entry \"{text}\": PCT \"{pct_text}\" is not a number") from None
    if not (0 < pct <= 100) or not math.isfinite(pct):
        raise BadInput(f"entry \"{text}\": PCT must be above 0 and at most 100")
    entry = {"glob": glob, "pct": int(pct) if pct.is_integer() else pct}
    if processes is not None:
        n = int(processes)
        if not 2 <= n <= 100:
            raise BadInput(f"entry \"{text}\": PROCESSES must be 2 to 100")
        entry["processes"] = n
    entry["why"] = "trial (ci/gate_trials.sh): the limit under test, not yet a measured one"
    return section, entry


def propose(src, out, entries):
    t = load_json(src)
    if not isinstance(t, dict):
        raise BadInput(f"{src}: not a JSON object")
    for section in SECTIONS:
        if not isinstance(t.setdefault(section, []), list):
            raise BadInput(f"{src}: \"{section}\" is not a list")
    # The trial's entries go first in their section, in the order given: the first matching glob
    # wins, and a broader entry already there ("pcie/*/pinned/*") must not shadow one under trial.
    placed = {s: 0 for s in SECTIONS}
    for text in entries:
        section, entry = parse_entry(text)
        for s in SECTIONS:
            t[s] = [e for e in t[s] if not (isinstance(e, dict) and e.get("glob") == entry["glob"])]
        t[section].insert(placed[section], entry)
        placed[section] += 1
    write_whole(out, json.dumps(t, indent=2) + "\n", inputs=(src,))


def write_whole(out, text, inputs=()):
    """OUT holds TEXT, all of it or nothing new: a folder, an input or a missing folder refused."""
    if os.path.isdir(out):
        raise BadInput(f"{out}: is a folder, not a file to write")
    if any(os.path.exists(p) and os.path.exists(out) and os.path.samefile(p, out) for p in inputs):
        raise BadInput(f"{out}: names an input; refusing to replace it")
    try:
        whole_file.write_whole(out, text)
    except OSError as e:
        raise BadInput(f"{out}: cannot write: {e.strerror}") from None


def gate_dirs(trial):
    if not os.path.isdir(trial):
        raise BadInput(f"{trial}: not a folder")
    found = []
    for name in os.listdir(trial):
        m = re.fullmatch(r"gate-([0-9]+)", name)
        if m and os.path.isfile(os.path.join(trial, name, "compare.json")):
            found.append((int(m.group(1)), name))
    return [name for _, name in sorted(found)]


def unjudged_gates(trial):
    """Gates that ended without a verdict (no compare.json): their exit status, e.g. 124 when the
    trial's deadline stopped them."""
    found = []
    for name in os.listdir(trial):
        m = re.fullmatch(r"(gate-([0-9]+))\.rc", name)
        if m and not os.path.isfile(os.path.join(trial, m.group(1), "compare.json")):
            found.append((int(m.group(2)), m.group(1), read_rc(os.path.join(trial, name))))
    return [(name, rc) for _, name, rc in sorted(found)]


def read_rc(path):
    """A gate's exit status as its .rc file holds it ("?" where there is none)."""
    if not os.path.exists(path):
        return "?"
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip() or "?"
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None


NUMBER_KEYS = ("change", "threshold_pct", "current")


def check_rows(path, doc):
    """The fields of compare.json the table reads, of the types it reads them as."""
    if not isinstance(doc.get("counts", {}), dict):
        raise BadInput(f"{path}: \"counts\" is not an object")
    for i, row in enumerate(doc["rows"]):
        if not isinstance(row, dict):
            continue
        conf = row.get("confirmation")
        if conf is not None and not isinstance(conf, dict):
            raise BadInput(f"{path}: rows[{i}]: \"confirmation\" is not an object")
        values = [(k, row.get(k)) for k in NUMBER_KEYS] + [("confirmation.first_change", (conf or {}).get("first_change"))]
        for key, v in values:
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
                raise BadInput(f"{path}: rows[{i}]: \"{key}\" is {json.dumps(v)}, not a finite number")


def worse_pct(doc, change):
    """A change in percent, worse positive, whichever way the metric points."""
    if change is None:
        return None
    sign = 1.0 if doc.get("direction") == "lower_is_better" else -1.0
    return 100.0 * sign * change


def read_gate(trial, name):
    path = os.path.join(trial, name, "compare.json")
    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise BadInput(f"{path}: no \"rows\" list")
    check_rows(path, doc)
    rc = read_rc(os.path.join(trial, name + ".rc"))
    # What judged the cases measured in fresh processes (the gate's own line).
    against = ""
    txt = os.path.join(trial, name + ".txt")
    if os.path.isfile(txt):
        with open(txt, encoding="utf-8", errors="replace") as f:
            against = next((line.strip() for line in f if line.startswith(("fresh-process cases:", "fastest-process cases:"))), "")
    return doc, rc, against


def cell(doc, row):
    """One gate's figure for one case: its change (the confirmation's, after its first pass's)."""
    first = worse_pct(doc, (row.get("confirmation") or {}).get("first_change"))
    change = worse_pct(doc, row.get("change"))
    if change is None:
        return row.get("verdict", "?"), None
    text = f"{change:+.1f}"
    if first is not None:
        text = f"{first:+.1f}→{text}"
    if row.get("fails_gate"):
        text += " FAIL"
    elif row.get("verdict") in ("report only", "host differs", "unconfirmed"):
        text += f" ({row['verdict']})"
    return text, change


def limit_of(row):
    """The case's rule: a limit, measured in N fresh processes, or report only."""
    pct = row.get("threshold_pct")
    text = "-" if pct is None else f"{pct:g}%"
    if row.get("fresh_processes"):  # report only in a gate without a base build, still this rule
        by = "median pair" if row.get("judged_by") == "median_pair" else "fastest"
        return text + f", {by} of {row['fresh_processes']}"
    return "report only" if row.get("verdict") == "report only" else text


def signed(v):
    return "" if v is None else f"{v:+.2f}%"


def table(trial):
    names = gate_dirs(trial)
    if not names:
        raise BadInput(f"{trial}: no gate-K/compare.json (run the job gate first)")
    gates = [(n, *read_gate(trial, n)) for n in names]
    cases = {}
    for n, doc, _, _ in gates:
        for row in doc["rows"]:
            if isinstance(row, dict) and isinstance(row.get("name"), str):
                cases.setdefault(row["name"], {})[n] = (doc, row)
    trial_globs = []
    tpath = os.path.join(trial, "thresholds.json")
    if os.path.isfile(tpath):
        t = load_json(tpath)
        for s in SECTIONS:
            for e in t.get(s) if isinstance(t, dict) and isinstance(t.get(s), list) else []:
                if isinstance(e, dict) and str(e.get("why", "")).startswith("trial ") and isinstance(e.get("glob"), str):
                    trial_globs.append(e["glob"])

    def in_trial(case):
        return any(re.fullmatch(re.escape(g).replace(r"\*", ".*"), case) for g in trial_globs)

    lines = [f"# Gate trials in {trial}", ""]
    for n, doc, rc, against in gates:
        counts = doc.get("counts", {})
        lines.append(f"- {n}: exit {rc}, result {doc.get('result', '?')}; baseline {doc.get('baseline', '?')}; "
                     f"regressed {counts.get('regressed', 0)}, unconfirmed {counts.get('unconfirmed', 0)}"
                     + (f"; {against}" if against else ""))
    for n, rc in unjudged_gates(trial):
        why = "stopped at the trial's deadline (TRIAL_DEADLINE_S)" if rc == "124" else f"its output: {n}.txt"
        lines.append(f"- {n}: exit {rc}, no verdict: {why}")
    lines += ["", "Change against the baseline, worse positive (first pass→confirmation where it re-measured).",
              "", "| case | limit | " + " | ".join(names) + " | largest + | largest - | failed |",
              "|---|---|" + "---|" * len(names) + "---|---|---|"]
    rows = []
    for case, by_gate in cases.items():
        texts, changes, failed, limit, figures = [], [], 0, "-", []
        for n in names:
            if n not in by_gate:
                texts.append("")
                figures.append(None)
                continue
            doc, row = by_gate[n]
            limit = limit_of(row)
            text, change = cell(doc, row)
            texts.append(text)
            if change is not None:
                changes.append(change)
            failed += bool(row.get("fails_gate"))
            cur = row.get("current")
            figures.append(cur if isinstance(cur, (int, float)) and cur > 0 else None)
        hi = max(changes) if changes else None
        lo = min(changes) if changes else None
        rows.append((not in_trial(case), -(hi if hi is not None else -math.inf), case, limit, texts, hi, lo, failed,
                     figures))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    for _, _, case, limit, texts, hi, lo, failed, _ in rows:
        mark = " (trial)" if in_trial(case) else ""
        lines.append(f"| {case}{mark} | {limit} | " + " | ".join(texts) + f" | {signed(hi)} | {signed(lo)} | {failed} |")
    # Each gate's own figure, whatever baseline judged it: how far this machine's gates moved.
    metric = gates[0][1].get("metric", "real_time")
    lines += ["", f"Each gate's figure ({metric}; for a case measured in fresh processes, the figure it was judged by), and",
              "the spread across the gates (the largest over the smallest, less 1).", "",
              "| case | " + " | ".join(names) + " | spread |", "|---|" + "---|" * len(names) + "---|"]
    for _, _, case, _, _, _, _, _, figures in rows:
        known = [v for v in figures if v is not None]
        spread = f"{(max(known) / min(known) - 1) * 100:.2f}%" if len(known) > 1 else ""
        mark = " (trial)" if in_trial(case) else ""
        lines.append(f"| {case}{mark} | " + " | ".join("" if v is None else f"{v:.6g}" for v in figures) +
                     f" | {spread} |")
    text = "\n".join(lines) + "\n"
    write_whole(os.path.join(trial, "trials.md"), text)
    sys.stdout.write(text)


def main(argv):
    try:
        if len(argv) >= 4 and argv[1] == "propose":
            propose(argv[2], argv[3], argv[4:])
        elif len(argv) == 3 and argv[1] == "table":
            table(argv[2])
        else:
            print("usage: gate_trials.py propose THRESHOLDS OUT ENTRY... | table TRIAL_DIR", file=sys.stderr)
            return 2
    except BadInput as e:
        print(f"gate_trials: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
