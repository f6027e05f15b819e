#!/usr/bin/env python3
"""One line for a ctest run, from its JUnit file (ctest --output-junit FILE):
`N passed, M skipped (reason: count, ...), K failed`. ctest keeps a skip's reason only in the
test's output; this finds it there: a GoogleTest skip's message (the line after "...: Skipped"),
a script's "SKIP: reason" or "SKIPPED: reason" line, else the output's last line. A test ctest
could not run (no executable) counts as failed, as ctest counts it.
Usage: ctest_summary.py JUNIT.xml   (exit 2 with one line when the file does not read)"""
import collections
import re
import sys
import xml.etree.ElementTree as ET

MAX_REASON = 120  # characters of one reason shown; a longer one ends in "..."
SKIP_MARKS = ("SKIP_RETURN_CODE", "SKIP_REGULAR_EXPRESSION_MATCHED")
GTEST_SKIPPED = re.compile(r": Skipped$")
SCRIPT_SKIP = re.compile(r"^(?:SKIP|SKIPPED): (.+)$")
PROGRAM_PREFIX = re.compile(r"^[A-Za-z0-9_.-]+: ")  # "gpucheck: ", "attention_energy: "


def skip_reason(output):
    """The reason a skipped test gave in its output, or "no reason given"."""
    lines = [l.strip() for l in (output or "").splitlines()]
    for i, line in enumerate(lines):
        if GTEST_SKIPPED.search(line):
            for after in lines[i + 1:]:
                if after.startswith("[  SKIPPED ]"):
                    break
                if after:
                    return after
    for line in lines:
        m = SCRIPT_SKIP.match(line)
        if m:
            return m.group(1).strip()
    rest = [l for l in lines if l and not l.startswith("[  SKIPPED ]")]
    return rest[-1] if rest else "no reason given"


def shorten(reason):
    """The reason without a program's name in front (one reason from a binary, a script and a
    gtest counts once), cut at MAX_REASON characters."""
    reason = PROGRAM_PREFIX.sub("", reason, count=1)
    return reason if len(reason) <= MAX_REASON else reason[:MAX_REASON - 3] + "..."


def outcome(case):
    """("passed"|"skipped"|"failed", reason or None) of one <testcase>."""
    status = case.get("status", "run")
    if case.find("failure") is not None or status == "fail":
        return "failed", None
    if status == "disabled":
        return "skipped", "disabled"
    skipped = case.find("skipped")
    if skipped is not None or status == "notrun":
        message = skipped.get("message", "") if skipped is not None else ""
        if message.startswith(SKIP_MARKS):
            out = case.find("system-out")
            return "skipped", shorten(skip_reason(out.text if out is not None else ""))
        return "failed", None  # not run: no executable, a failed fixture
    return "passed", None


def summarize(xml_text):
    """The summary line of a JUnit document's text; raises ValueError on text that is not one."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as e:
        raise ValueError(f"not XML ({e})") from None
    if root.tag not in ("testsuite", "testsuites"):
        raise ValueError(f"not a JUnit file (root element <{root.tag}>)")
    counts = collections.Counter()
    reasons = collections.Counter()
    for case in root.iter("testcase"):
        kind, reason = outcome(case)
        counts[kind] += 1
        if reason is not None:
            reasons[reason] += 1
    skipped = f"{counts['skipped']} skipped"
    if reasons:
        ordered = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        skipped += " (" + ", ".join(f"{r}: {n}" for r, n in ordered) + ")"
    return f"{counts['passed']} passed, {skipped}, {counts['failed']} failed"


def main(argv):
    if len(argv) != 2:
        print("usage: ctest_summary.py JUNIT.xml", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8", errors="replace") as f:
            text = f.read()
        print(summarize(text))
    except (OSError, ValueError) as e:
        print(f"ctest_summary.py: {argv[1]}: {getattr(e, 'strerror', None) or e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
