#!/usr/bin/env python3
"""Where the idle core time of bench/serve's 4-task rows goes, from a scheduler trace.

bench/serve/sched_trace.sh records the trace and calls this; by hand:
    perf sched record -a -o sched.data -- bench/serve/run.sh build/bench 600
    perf sched timehist -i sched.data -n > timehist.txt
    bench/serve/sched_idle.py timehist.txt

The rows are found from the trace itself: the worker processes (fisk-ai-serve) that live over
a second, in start order, are the 1-worker batches' worker, the 4-slot row's worker, then the
four of the 4-process row. Each row is read over the middle 80% of its span, past its start
and warm-up. For each it prints how much of the cores was idle, how much of that with both
cores idle at once, the idle spells over 0.3 ms, what the other core ran during them, and for
how much of them some thread was runnable but queued on the other core's run queue.
"""

import bisect
import collections
import re
import sys

LINE = re.compile(
    r"^\s*(?P<ts>\d+\.\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<task>.+?)\s+(?P<wait>\d+\.\d+)\s+"
    r"(?P<delay>\d+\.\d+)\s+(?P<run>\d+\.\d+)\s+next: (?P<next>\S+)"
)
TASK = re.compile(r"^(?P<comm>.*)\[(?P<tid>\d+)(?:/(?P<pid>\d+))?\]$")
SPELL_S = 0.0003  # an idle spell long enough to be more than a hand-off between threads


def parse(path):
    """Yields (ts, cpu, comm, pid, run_s, delay_s); comm '<idle>' for the idle task."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            task = m["task"].strip()
            t = TASK.match(task)
            if task.startswith("<idle>") or not t:
                comm, pid = "<idle>", 0
            else:
                comm = t["comm"]
                pid = int(t["pid"] or t["tid"])  # a process's main thread is shown without its pid
            yield (float(m["ts"]), m["cpu"], comm, pid, float(m["run"]) / 1000, float(m["delay"]) / 1000)


def find_rows(events):
    """The spans of the rows, from the lifetimes of the worker processes."""
    life = {}
    for ts, _cpu, comm, pid, _run, _delay in events:
        if comm == "fisk-ai-serve" and pid:
            first, _last = life.get(pid, (ts, ts))
            life[pid] = (first, ts)
    workers = sorted((span for span in life.values() if span[1] - span[0] > 1.0), key=lambda s: s[0])
    rows = {}
    if len(workers) >= 2:
        rows["4 slots in one process"] = workers[1]
    if len(workers) >= 6:
        group = workers[2:6]
        rows["4 one-slot processes"] = (max(s[0] for s in group), min(s[1] for s in group))
    return rows


def middle(span, share=0.8):
    start, end = span
    cut = (end - start) * (1 - share) / 2
    return start + cut, end - cut


def overlap(a0, a1, b0, b1):
    return max(0.0, min(a1, b1) - max(a0, b0))


def union_length(segments):
    total, current = 0.0, None
    for a, b in sorted(segments):
        if current and a <= current[1]:
            current = (current[0], max(current[1], b))
        else:
            if current:
                total += current[1] - current[0]
            current = (a, b)
    if current:
        total += current[1] - current[0]
    return total


def report(name, events, t0, t1):
    runs = collections.defaultdict(list)  # cpu -> (start, end, comm) of everything that ran
    idle = collections.defaultdict(list)  # cpu -> (start, end) idle
    queued = []  # (start, end, comm): runnable but not running
    for ts, cpu, comm, _pid, run, delay in events:
        start = ts - run
        if ts < t0 or start > t1:
            continue
        if comm == "<idle>":
            idle[cpu].append((max(start, t0), min(ts, t1)))
        else:
            runs[cpu].append((start, ts, comm))
            if delay > 0:
                queued.append((start - delay, start, comm))
    cpus = sorted(set(runs) | set(idle))
    span = t1 - t0
    idle_total = sum(b - a for c in cpus for a, b in idle[c])
    both = 0.0
    if len(cpus) == 2:  # a sweep over the two sorted lists of idle intervals
        a, b = sorted(idle[cpus[0]]), sorted(idle[cpus[1]])
        i = j = 0
        while i < len(a) and j < len(b):
            both += overlap(*a[i], *b[j])
            if a[i][1] < b[j][1]:
                i += 1
            else:
                j += 1
    print(f"{name}: {span:.2f} s of the row, {len(cpus)} cores")
    print(f"  idle: {100 * idle_total / (span * len(cpus)):.1f}% of the cores; "
          f"both idle at once {100 * both / span:.1f}% of the time")
    spells = [(a, b, c) for c in cpus for a, b in idle[c] if b - a > SPELL_S]
    spell_total = sum(b - a for a, b, _ in spells)
    if not spells or len(cpus) != 2:
        return
    print(f"  spells over {SPELL_S * 1000:.1f} ms: {len(spells)}, {spell_total * 1000:.0f} ms, "
          f"{100 * spell_total / idle_total:.0f}% of the idle time")
    beside = collections.Counter()
    behind_time = 0.0
    behind_who = collections.Counter()
    for rows_of_cpu in runs.values():
        rows_of_cpu.sort()
    queued.sort()
    run_starts = {c: [r[0] for r in runs[c]] for c in cpus}
    queued_starts = [q[0] for q in queued]
    longest_run = max((r[1] - r[0] for c in cpus for r in runs[c]), default=0.0)
    longest_wait = max((q[1] - q[0] for q in queued), default=0.0)
    for a, b, cpu in spells:
        other = cpus[1] if cpu == cpus[0] else cpus[0]
        k = bisect.bisect_left(run_starts[other], a - longest_run)
        while k < len(runs[other]) and runs[other][k][0] < b:
            r0, r1, comm = runs[other][k]
            beside[comm] += overlap(a, b, r0, r1)
            k += 1
        # The spell's core has an empty run queue, so whatever is runnable then waits on the
        # other one.
        segments = []
        k = bisect.bisect_left(queued_starts, a - longest_wait)
        while k < len(queued) and queued[k][0] < b:
            q0, q1, comm = queued[k]
            o = overlap(a, b, q0, q1)
            if o > 0:
                segments.append((max(a, q0), min(b, q1)))
                behind_who[comm] += o
            k += 1
        behind_time += union_length(segments)
    ran = ", ".join(f"{comm} {100 * t / spell_total:.0f}%" for comm, t in beside.most_common(3))
    print(f"  the other core ran, during the spells: {ran}")
    who = ", ".join(f"{comm} {t * 1000:.0f}" for comm, t in behind_who.most_common(4))
    print(f"  some thread runnable but queued on the other core for {100 * behind_time / spell_total:.0f}% "
          f"of the spells' time")
    print(f"    (queued thread-ms, threads counted apart: {who})")


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    try:
        events = list(parse(sys.argv[1]))
    except OSError as e:
        print(f"sched_idle: reading {sys.argv[1]}: {e.strerror}", file=sys.stderr)
        return 1
    if not events:
        print(f"sched_idle: no scheduler switches in {sys.argv[1]}; it should be `perf sched timehist -n` output",
              file=sys.stderr)
        return 1
    rows = find_rows(events)
    if not rows:
        print("sched_idle: found no 4-task rows (fewer than two fisk-ai-serve processes living over 1 s)",
              file=sys.stderr)
        return 1
    for name, span in rows.items():
        report(name, events, *middle(span))
    return 0


if __name__ == "__main__":
    sys.exit(main())
