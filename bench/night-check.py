#!/usr/bin/env python3
"""bench/night-check.py: the checks of bench/night.sh's night.

Reads OUT/timetable.tsv (night time, key, unix time, what happened),
OUT/notifications.jsonl (bench/night-hook.py: /hook is soakd's webhook
sink, /am Alertmanager's webhook) and OUT/soakd-samples.tsv, prints the
timetable and the notifications side by side (markdown), the checks and
soakd's own RSS, CPU and disk, and exits 1 when a check fails.

A finding is (alertname, job); SoakdLeak's resource label (rss, pss or
uss) is one finding. Per sink, a finding's notifications are episodes:
a firing one opens an episode, a resolved one closes it. The checks:

  - paged once: no second firing notification inside an episode;
  - none lost: every expected finding has its episode on both sinks;
  - in time: an episode opens after the fault that causes it;
  - none after the fix: an episode of a fixed finding is resolved after
    the fix, and nothing of it fires after that resolve;
  - a finding that was not fixed is not resolved;
  - nothing else pages.

    python3 bench/night-check.py OUT NIGHT_SECONDS RUN_EVERY
"""
import json
import statistics
import sys

out, night, every = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
events = []
for line in open(f"{out}/timetable.tsv"):
    hm, key, t, what = line.rstrip("\n").split("\t")
    events.append((float(t), hm, key, what))
ev = {}
for t, hm, key, what in events:
    ev.setdefault(key, t)
scale = 28800.0 / night  # night seconds per real second
# The night's 00:00: the leak's start is on time (no wait before it),
# while "start" is logged once soakd serves.
t0 = ev["leak"] - 3600 / scale


def clock(t):
    """The night time of unix time t, HH:MM."""
    m = int((t - t0) * scale / 60)
    return f"{m // 60:02d}:{m % 60:02d}"


# Expected findings: (alertname, job) -> list of windows
# (opens after, fixed at or None, required).
slack = 2 * every + 30  # a run in progress when a fault ends
expect = {
    ("SoakdLeak", "leaker"): [(ev["leak"], None, True)],
    ("SoakdLeak", "fixed"): [(t0, ev["fix"], True)],
    ("SoakdRequestsFailing", "failing"): [(ev["fail"], ev["unfail"], True)],
    ("SoakdTargetDown", "crasher"): [(ev["crash"], ev["crash_back"], True)],
}
# A scheduled run fails while the disk is full (any job) or while the
# crasher is dead (its job); at least one must page the disk.
for job in ("leaker", "fixed", "crasher", "failing"):
    w = [(ev["disk_full"], ev["disk_free"], False)]
    if job == "crasher":
        w.insert(0, (ev["crash"], ev["crash_back"], False))
    expect[("SoakdRunFailed", job)] = w
# The requests in flight when the crasher dies may fail: its job's
# SoakdRequestsFailing may page, and resolves once it is back.
expect[("SoakdRequestsFailing", "crasher")] = [(ev["crash"], ev["crash_back"], False)]
# A leak's time to exhaustion may page with it, under the same rules.
for job in ("leaker", "fixed"):
    expect[("SoakdTimeToExhaustion", job)] = [(a, f, False) for a, f, _ in expect[("SoakdLeak", job)]]

notes = []  # (t, sink, status, alertname, job, resource, summary)
for line in open(f"{out}/notifications.jsonl"):
    n = json.loads(line)
    sink = n["path"].strip("/")
    for a in n["body"].get("alerts", []):
        lb = a.get("labels", {})
        notes.append((n["t"], sink, a.get("status"), lb.get("alertname"), lb.get("job"), lb.get("resource", ""),
                      a.get("annotations", {}).get("summary", "")))
notes.sort()

failures = []
results = []  # (finding, sink, opened, resolved)
for sink in ("hook", "am"):
    by = {}
    for n in notes:
        if n[1] == sink:
            by.setdefault((n[3], n[4]), []).append(n)
    for key in sorted(set(by) | {k for k, w in expect.items() if any(r for _, _, r in w)}):
        name = f"{key[0]}/{key[1]} ({sink})"
        windows = expect.get(key)
        if windows is None:
            failures.append(f"{name}: paged, but no fault causes it: " +
                            "; ".join(f"{clock(t)} {s} {r}" for t, _, s, _, _, r, _ in by[key]))
            continue
        episodes, cur = [], None
        for t, _, status, *_ in by.get(key, []):
            if status == "firing":
                if cur is not None:
                    failures.append(f"{name}: paged again at {clock(t)}, firing since {clock(cur[0])}")
                    continue
                cur = [t, None]
                episodes.append(cur)
            elif cur is None:
                failures.append(f"{name}: resolved at {clock(t)} with nothing firing")
            else:
                cur[1], cur = t, None
        used = set()
        for opened, resolved in episodes:
            i = max((i for i, w in enumerate(windows) if w[0] <= opened), default=None)
            if i is None:
                failures.append(f"{name}: fired at {clock(opened)}, before its fault at {clock(windows[0][0])}")
                continue
            after, fixed, _ = windows[i]
            if i in used:
                failures.append(f"{name}: fired again at {clock(opened)} for the fault at {clock(after)}")
            used.add(i)
            results.append((name, opened, resolved))
            if fixed is None and resolved is not None:
                failures.append(f"{name}: resolved at {clock(resolved)}, but it was never fixed")
            if fixed is not None and resolved is None:
                failures.append(f"{name}: fixed at {clock(fixed)}, never resolved")
            if fixed is not None and resolved is not None and resolved < fixed:
                failures.append(f"{name}: resolved at {clock(resolved)}, before its fix at {clock(fixed)}")
            if fixed is not None and opened > fixed + slack and opened < (windows[i + 1][0] if i + 1 < len(windows) else 1e18):
                failures.append(f"{name}: fired at {clock(opened)}, after its fix at {clock(fixed)}")
        for i, (after, fixed, required) in enumerate(windows):
            if required and i not in used:
                failures.append(f"{name}: lost: the fault at {clock(after)} never paged")
    disk = [r for r in results if r[0].startswith("SoakdRunFailed/") and r[0].endswith(f"({sink})") and r[1] >= ev["disk_full"]]
    if not disk:
        failures.append(f"SoakdRunFailed ({sink}): the full disk paged nothing")

print(f"## The night: timetable and notifications ({out})\n")
print("| night | real (UTC) | timetable | sink | notification |")
print("|---|---|---|---|---|")
import time as _t
rows = [(t, 0, hm, what, "", "") for t, hm, key, what in events]
rows += [(t, 1, clock(t), "", sink, f"{status} {a}/{j}/{r}: {s[:90]}") for t, sink, status, a, j, r, s in notes]
for t, kind, hm, what, sink, text in sorted(rows):
    print(f"| {hm} | {_t.strftime('%H:%M:%S', _t.gmtime(t))} | {what} | {sink} | {text} |")

print("\n## Findings per sink\n")
print("| finding (sink) | fired | resolved |")
print("|---|---|---|")
for name, opened, resolved in sorted(results):
    print(f"| {name} | {clock(opened)} | {clock(resolved) if resolved else '-'} |")

print("\n## soakd's own RSS, CPU and disk\n")
samples = []
with open(f"{out}/soakd-samples.tsv") as f:
    next(f)
    for line in f:
        t, pid, rss, ticks, disk = line.split("\t")
        samples.append((float(t), int(pid), int(rss), int(ticks), int(disk)))
if samples:
    last = {}
    for t, pid, rss, ticks, disk in samples:
        last[pid] = ticks
    cpu = sum(last.values()) / 100.0  # USER_HZ
    span = samples[-1][0] - samples[0][0]
    rss = [s[2] / 1024 for s in samples]
    disk = [s[4] / 1024 for s in samples]
    print(f"- {len(samples)} samples over {span:.0f} s, {len(last)} soakd processes (the restarts)")
    print(f"- RSS MiB: min {min(rss):.1f}, median {statistics.median(rss):.1f}, max {max(rss):.1f}; "
          f"first {rss[0]:.1f}, last {rss[-1]:.1f}")
    print(f"- CPU: {cpu:.1f} s over {span:.0f} s = {100 * cpu / span:.1f} % of one core")
    print(f"- store disk MiB (filler excluded): first {disk[0]:.1f}, last {disk[-1]:.1f}, max {max(disk):.1f}")
    print("\n| night | RSS MiB | CPU s (this process) | disk MiB |")
    print("|---|---|---|---|")
    step = max(1, len(samples) // 16)
    for t, pid, r, ticks, d in samples[::step] + [samples[-1]]:
        print(f"| {clock(t)} | {r / 1024:.1f} | {ticks / 100:.1f} | {d / 1024:.1f} |")

print("\n## Checks\n")
if failures:
    for f in failures:
        print(f"- FAIL {f}")
    print(f"\n{len(failures)} checks failed")
    sys.exit(1)
print(f"- all passed: {len(results)} episodes on 2 sinks, each paged once, none lost, none after its fix")
