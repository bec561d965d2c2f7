#!/usr/bin/env python3
"""Runs a command and reports its wall time, CPU time and peak memory.

    python3 Benchmarks/measure.py [--label NAME] [--log FILE] [--json FILE] [--interval S] -- CMD [ARG...]

- wall time: from start to exit of the command (time.monotonic);
- CPU time: user + system time of the command and every descendant it waited
  for (resource.getrusage(RUSAGE_CHILDREN), read after the command is waited for);
- peak RSS: the largest sum, over one sample, of the resident set sizes of the
  command and all its descendants, read from /proc every --interval seconds
  (default 0.02). Pages shared between processes (libraries, fork copies) are
  counted once per process, so for a multi-process command this is an upper
  bound on real use. 1 MiB = 2^20 bytes.
- RSS over time: the average of the samples in each quarter of the run, and the
  last quarter's average on its own: memory that grows with the number of inputs
  shows as a last quarter well above the first, even when the peak hides it.

The command's own output goes to --log FILE if given, else it passes through.
The last line printed is a JSON object with the figures (also written to
--json FILE if given). measure.py exits with the command's exit status.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1 << 20


def _parent_map():
    """pid -> ppid for every process visible in /proc."""
    parents = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # exited meanwhile
            continue
        # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
        rest = stat[stat.rfind(b")") + 2:].split()
        parents[int(name)] = int(rest[1])
    return parents


def _tree(root):
    """root and all its descendants that are alive now."""
    children = {}
    for pid, ppid in _parent_map().items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def _rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss(root):
    return sum(_rss_bytes(pid) for pid in _tree(root))


def main():
    ap = argparse.ArgumentParser(description="Run a command; report wall time, CPU time, peak summed RSS.")
    ap.add_argument("--label", default="", help="name printed with the figures")
    ap.add_argument("--log", help="send the command's stdout and stderr to this file")
    ap.add_argument("--json", dest="json_path", help="also write the JSON figures to this file")
    ap.add_argument("--interval", type=float, default=0.02, help="RSS sampling period in seconds (default 0.02)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="the command (after --)")
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no command given")

    log = open(args.log, "wb") if args.log else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT if log else None)
    except OSError as e:
        print(f"measure: cannot run {cmd[0]}: {e}", file=sys.stderr)
        return 127
    peak = samples = 0
    series = []  # (seconds since start, summed RSS)
    try:
        while proc.poll() is None:
            rss = tree_rss(proc.pid)
            series.append((time.monotonic() - start, rss))
            peak = max(peak, rss)
            samples += 1
            time.sleep(args.interval)
    except KeyboardInterrupt:  # the command got the same SIGINT; let it finish
        pass
    code = proc.wait()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if log:
        log.close()

    quarters = []
    for q in range(4):
        part = [rss for t, rss in series if q * wall / 4 <= t < (q + 1) * wall / 4]
        quarters.append(round(sum(part) / len(part) / MIB, 1) if part else 0.0)

    user = after.ru_utime - before.ru_utime
    sys_ = after.ru_stime - before.ru_stime
    result = {
        "label": args.label,
        "command": cmd,
        "exit_code": code,
        "wall_s": round(wall, 3),
        "cpu_s": round(user + sys_, 3),
        "user_s": round(user, 3),
        "sys_s": round(sys_, 3),
        "peak_rss_mib": round(peak / MIB, 1),
        "quarter_avg_rss_mib": quarters,
        "last_quarter_avg_rss_mib": quarters[3],
        # ru_maxrss is in KiB: the largest single descendant, not the sum.
        "max_single_rss_mib": round(after.ru_maxrss / 1024, 1),
        "samples": samples,
    }
    name = f"{args.label}: " if args.label else ""
    print(f"{name}wall {wall:.2f} s, CPU {user + sys_:.2f} s (user {user:.2f} + sys {sys_:.2f}), "
          f"peak RSS {peak / MIB:.1f} MiB (summed over the process tree, {samples} samples), "
          f"average by quarter {' / '.join(f'{q:.0f}' for q in quarters)} MiB, exit {code}")
    line = json.dumps(result)
    if args.json_path:  # before printing: a reader that stops early must not cost the file
        with open(args.json_path, "w") as f:
            f.write(line + "\n")
    print(line, flush=True)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
