#!/usr/bin/env python3
"""tests/run's verdict cache, on a scratch git tree with lanes of its own; prints TAP.

A lane's verdict may be reused only when nothing it reads changed: each case below changes one
input (or none) and checks whether the key moved, and that a lane whose results fail, or whose
inputs changed under it, is never kept.
"""
import contextlib
import importlib.machinery
import io
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
loader = importlib.machinery.SourceFileLoader("runner", os.path.join(REPO, "tests", "run"))
spec = importlib.util.spec_from_loader("runner", loader)
run = importlib.util.module_from_spec(spec)
loader.exec_module(run)

results = []


def check(desc, cond, diag=""):
    results.append((bool(cond), desc, diag))


top = tempfile.mkdtemp(prefix="frac-run-test.")
scratch = os.path.join(top, "tree")
os.makedirs(scratch)
os.chdir(scratch)


def w(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def git(*args):
    subprocess.run(["git", *args], check=True, capture_output=True)


git("init", "-q")
git("config", "user.email", "t@example.org")
git("config", "user.name", "t")
w("kernel/a.c", "int a;\n")
w("tools/t.c", "int t;\n")
w("docs/x.md", "prose\n")
w(".gitignore", "/results/\n*.o\n")
git("add", "-A")
git("commit", "-qm", "base")
run.RES = os.path.join(scratch, "results")
run.CACHE = os.path.join(top, "cache")
os.makedirs(run.RES)
calls = {"n": 0}
mode = {"tap": "1..1\nok 1 - fine\n", "rc": True, "touch": None}


def fake_run():
    """The lane: writes its TAP (and its .rc unless it "died"), maybe changes an input."""
    calls["n"] += 1
    if mode["tap"] is not None:
        w(os.path.join(run.RES, "fake.tap"), mode["tap"])
    if mode["rc"]:
        w(os.path.join(run.RES, "fake.rc"), "0\n")
    if mode["touch"]:
        if mode.get("same"):
            old = open(mode["touch"]).read()
            time.sleep(0.01)
            w(mode["touch"], old)
        else:
            w(mode["touch"], f"changed {calls['n']}\n")
    return 0


lane = run.Lane("fake", "a lane of this test", fake_run, ["fake"], ignore=("tools/*",) + run.PROSE)


def key():
    return run.lane_key(lane, run.snapshot())


k0 = key()
check("the key of an unchanged tree is the same twice", k0 == key())
w("kernel/a.c", "int a = 1;\n")
k1 = key()
check("a change to a file the lane reads moves the key", k1 != k0)
w("tools/t.c", "int t = 1;\n")
check("a change to a path the lane does not read keeps it", key() == k1)
w("docs/x.md", "other prose\n")
check("documentation prose (docs/*.md) keeps it", key() == k1)
w("kernel/new.c", "int n;\n")
k2 = key()
check("a new untracked file the lane reads moves it", k2 != k1)
w("kernel/new.o", "object\n")
check("an ignored file (a build output) keeps it", key() == k2)
os.environ["DEBUG_JOBS"] = "7"
check("an environment variable that changes what runs (DEBUG_JOBS) moves it", key() != k2)
del os.environ["DEBUG_JOBS"]
os.remove("kernel/new.c")
check("a removed file moves it back", key() == k1)

times = os.path.join(run.RES, "lane-times.txt")


def go(can_store=True, use_cache=True):
    """run_lane, its own lines ("== ...") kept out of this TAP."""
    with contextlib.redirect_stdout(io.StringIO()):
        return run.run_lane(lane, run.snapshot(), "abc", use_cache, can_store, times)


line = go()
check("a passing lane runs and passes", calls["n"] == 1 and "passed" in line, line)
os.remove(os.path.join(run.RES, "fake.tap"))
line = go()
check("run again unchanged: its verdict is reused, not run", calls["n"] == 1 and "cached" in line,
      line)
check("the reused verdict restores the lane's TAP", open(os.path.join(run.RES, "fake.tap")).read()
      == mode["tap"])
w("kernel/a.c", "int a = 2;\n")
mode["tap"] = "1..1\nnot ok 1 - broken\n"
line = go()
check("a changed input runs the lane again; it fails", calls["n"] == 2 and "FAILED" in line, line)
line = go()
check("a failed lane is not kept: the next run runs it again", calls["n"] == 3, line)
mode["tap"] = "1..1\nok 1 - fine\n"
mode["rc"] = False
line = go()
go()
check("a lane that died (no .rc) fails and is not kept", calls["n"] == 5 and "FAILED" in line,
      line)
mode["rc"] = True
mode["touch"] = "kernel/b.c"
go()
line = go()
check("a lane whose inputs changed while it ran is not kept", calls["n"] == 7, line)
mode["touch"] = None
line = go()
line2 = go()
check("with its inputs still, it is kept once it passes", calls["n"] == 8 and "cached" in line2,
      line2)
line = go(use_cache=False)
check("--no-cache runs a lane whose verdict is kept", calls["n"] == 9, line)
w("kernel/a.c", "int a = 3;\n")
go(can_store=False)
line = go()
check("a run whose build failed (or did not build) keeps nothing", calls["n"] == 11, line)
line = go()
check("... and the next one that built keeps it", calls["n"] == 11 and "cached" in line, line)
w("kernel/a.c", "int a = 4;\n")
mode["touch"] = "kernel/a.c"	# the lane writes a file it reads back to the same content
mode["same"] = True
go()
line = go()
check("a file rewritten while the lane ran, content unchanged, keeps nothing", calls["n"] == 13,
      line)
mode["touch"] = None
mode["tap"] = None	# the lane leaves no TAP at all
line = go()
check("a lane that left no TAP fails", calls["n"] == 14 and "FAILED" in line, line)

print("TAP version 13")
for n, (ok, desc, diag) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {n} - {desc}")
    if not ok and diag:
        print(f"#   {diag}")
print(f"1..{len(results)}")
subprocess.run(["rm", "-rf", top])
sys.exit(0 if all(r[0] for r in results) else 1)
