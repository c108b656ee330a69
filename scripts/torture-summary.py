#!/usr/bin/env python3
"""torture-summary.py RESULTS [EXPECTED_RUNS]: sums up the JSON reports
scripts/torture.sh collects (one line per run): runs, operations, faults
injected by kind, anomalies by workload, crashes, and the longest
unavailability after each fault kind (fault to the first acknowledged
write). Exits 1 when a run failed or fewer runs reported than expected."""
import json
import sys
from collections import Counter, defaultdict

path = sys.argv[1]
expected = int(sys.argv[2]) if len(sys.argv) > 2 else 0
reports = [json.loads(l) for l in open(path) if l.strip()]

by_target = defaultdict(list)
for r in reports:
    by_target[(r["target"], r["members"])].append(r)

failed = []
for (target, members), rs in sorted(by_target.items()):
    faults = Counter()
    unavail = defaultdict(list)
    anomalies = Counter()
    checked = Counter()
    crashes = problems = 0
    for r in rs:
        for f in r.get("faults") or []:
            faults[f["Kind"]] += 1
        for k, ms in (r.get("unavailable_ms") or {}).items():
            unavail[k].append(ms)
        for res in r.get("results") or []:
            checked[res["workload"]] += res["ops"]
            if not res["ok"]:
                anomalies[res["workload"]] += 1
        crashes += len(r.get("crashes") or [])
        problems += len(r.get("problems") or [])
        if not r["pass"]:
            failed.append(r)
    ops = sum(r["ops"] for r in rs)
    npass = sum(1 for r in rs if r["pass"])
    print(f"== {target}, {members} members: {len(rs)} runs, {npass} passed, {len(rs) - npass} failed; "
          f"{ops} operations checked; {sum(faults.values())} faults injected")
    print("   operations by checker: " + ", ".join(f"{k} {v}" for k, v in sorted(checked.items())))
    print("   faults: " + ", ".join(f"{k} {v}" for k, v in sorted(faults.items())))
    print("   runs with an anomaly, by checker: " + (", ".join(f"{k} {v}" for k, v in sorted(anomalies.items())) or "none")
          + f"; member crashes {crashes}; other problems {problems}")
    print("   unavailability after a fault (ms to the first acknowledged write; median / max):")
    for k in sorted(unavail):
        v = sorted(unavail[k])
        print(f"     {k:17s} {v[len(v) // 2]:6d} / {v[-1]:6d}")

for r in failed:
    print(f"FAILED: {r['target']} n={r['members']} seed={r['seed']} (logs: {r.get('dir', '')})")
    for res in r.get("results") or []:
        for a in (res.get("anomalies") or [])[:5]:
            print(f"   {res['workload']}: {a}")
    for c in (r.get("crashes") or []) + (r.get("problems") or []):
        print(f"   {c}")

if expected and len(reports) < expected:
    print(f"torture: only {len(reports)} of {expected} runs reported (the harness stopped early)")
    sys.exit(1)
sys.exit(1 if failed else 0)
