#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run inside the guest by tools/regress/regress: two sides (base, head) measured in short
alternating slices, as pinpoint and duet benchmarking do, until every metric has a verdict.

Usage: guest-regress.py SPEC.json                  in the guest
       guest-regress.py --judge SPEC.json DIR      on the host, alongside: the verdicts

SPEC (written by tools/regress/regress):
  {"out": DIR,                       results, relative to $FRAC_OUT (the rig's writable
                                     share; default: $FRAC_OUT itself); DIR/<side>/ gets one
                                     file per slice and metric
   "sides": [{"name": "base", "tree": "/path/to/checkout", "ko": "/path/frac.ko",
              "port": null | "0000:00:10.0"}, {...}],
   "slice_s": 1.0, "start": 10, "step": 10, "cap": 30, "seed": 1, "magnitude": 0.10,
   "traced": 8, "traced_s": 2.0, "first": 1, "metrics": ["p1", "p2", "p3"]}

A side is a frac.ko, the checkout whose fracbench and fraclat drive it, and the FRAC device it
runs on: the one behind root port `port`, or (null) the first device behind no other side's
port (nor behind any of the spec's "other_ports"). Two sides with different modules on one
device reload the module when the turn passes from one to the other; two sides on different devices (an injected device regression, an A/A
of two identical devices) share one module.

A slice of a side runs, on its device, in this order (fracbench -j each; "metrics" may name
a subset):
  p1-frac-<k>.json  QD1 round trip of a NOP job on the submitting CPU's queue (-L), slice_s
  p2-frac-<k>.json  NOP jobs at QD32 over all queues, slice_s
  p3-frac-<k>.json  16 MiB copies, 8 of them
Pairs of slices run in random order (AB or BA, seeded): drift of the host (another guest, a
build) falls on both sides alike. After `start` slices a side, and after every `step` more,
the metrics are compared (fracregress_lib.verdict.compare, pinpoint's rule); while any is
UNKNOWN and the sides have fewer than `cap` slices, more slices run. The comparison runs on
the host: the guest writes <out>/batch-<n>.req and waits for the judge (--judge, started by
the host script before the guest, DIR being <out> as the host sees it) to write
batch-<n>.ans. Then `traced` (8)
traced slices a side, in pairs of random order as well: the side's own bpf/fraclat -j while
the P1 workload runs for traced_s, written to <side>/fraclat-<k>.json, and (when p3 is
measured) while P3's 8 copies run, <side>/fraclat-p3-<k>.json (the timed slices are never
traced). The stage attribution tests each stage slice by slice (attribution.py), P1's
stages against P1's verdict, P3's against P3's.

With one side (tools/regress/regress when base and head need different QEMUs, one boot each), the
side runs `start` slices numbered from `first` and no verdicts are made here.

DIR/ab.json records the order (upper case timed slices, lower case traced ones), every
batch's verdicts and why the loop stopped.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# fracregress_lib (numpy, scipy) is imported by the judge only: under TCG the import and
# the SAME-threshold simulations took 60-70 s per batch in the guest.

BRIDGE_PORTS = "/sys/bus/pci/devices"


def log(msg):
    print(f"guest-regress: {msg}", file=sys.stderr, flush=True)


def die(msg):
    log(f"error: {msg}")
    sys.exit(1)


def run(cmd, out=None, check=True):
    with open(out, "w") if out else open(os.devnull, "w") as f:
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.PIPE, text=True)
    if check and r.returncode:
        die(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    return r


def accels():
    """{accel index: the device's sysfs path} of every accel node."""
    out = {}
    base = "/sys/class/accel"
    for n in os.listdir(base) if os.path.isdir(base) else []:
        if n.startswith("accel") and n[5:].isdigit():
            out[int(n[5:])] = os.path.realpath(os.path.join(base, n, "device"))
    return out


def device_of(side, spec):
    ports = [s["port"] for s in spec["sides"] if s.get("port")] + spec.get("other_ports", [])
    for idx, path in sorted(accels().items()):
        parts = path.split("/")
        if side.get("port"):
            if side["port"] in parts[:-1]:
                return idx
        elif not any(p in parts[:-1] for p in ports):
            return idx
    die(f"side {side['name']}: no FRAC device "
        f"{'behind ' + side['port'] if side.get('port') else 'behind no other side port'}")


class Module:
    """The frac.ko loaded now; load() swaps it when another side's file is wanted."""

    def __init__(self):
        self.ko = None

    def load(self, ko):
        if ko == self.ko:
            return
        if self.ko is not None or os.path.isdir("/sys/module/frac"):
            run(["rmmod", "frac"])
        run(["insmod", ko])
        self.ko = ko
        # the accel node appears when probe is over: wait for it (no udev in the rig)
        for _ in range(200):
            if accels():
                return
            time.sleep(0.05)
        die(f"{ko}: no accel device after insmod")

    def unload(self):
        if self.ko is not None:
            run(["rmmod", "frac"], check=False)
            self.ko = None


def fracbench(side, dev):
    return [os.path.join(side["tree"], "tools", "fracbench", "fracbench"), "-D", str(dev), "-j"]


def one_slice(spec, side, k, mod):
    mod.load(side["ko"])
    dev = device_of(side, spec)
    d = os.path.join(spec["out"], side["name"])
    t = f"{spec['slice_s']:g}"
    fb = fracbench(side, dev)
    work = {"p1": ["-m", "latency", "-o", "nop", "-L", "-T", t, "-W", "100"],
            "p2": ["-m", "throughput", "-o", "nop", "-d", "32", "-T", t, "-W", "100"],
            "p3": ["-m", "bandwidth", "-s", "16M", "-n", "8", "-W", "1"]}
    for m in spec.get("metrics", ["p1", "p2", "p3"]):
        run(fb + work[m], os.path.join(d, f"{m}-frac-{k}.json"))


# The traced workloads: P1's NOPs (stages of a job's path through the driver) and, when P3
# is measured, its 16 MiB copies (where the device's DMA time shows, in exec). File names
# as runinfo.TRACED_FILES reads them.
TRACED_FILE = {"p1": "fraclat-{}", "p3": "fraclat-p3-{}"}


def traced_slice(spec, side, k, mod, workload="p1"):
    """fraclat -j around one workload; SIGINT ends it with a last JSON object."""
    mod.load(side["ko"])
    dev = device_of(side, spec)
    d = os.path.join(spec["out"], side["name"])
    lat = os.path.join(side["tree"], "bpf", "fraclat")
    if not os.access(lat, os.X_OK):
        die(f"side {side['name']}: no {lat}: no stage histograms")
    name = TRACED_FILE[workload].format(k)
    errp = os.path.join(d, f"{name}.err")
    with open(os.path.join(d, f"{name}.json"), "w") as o, open(errp, "w") as e:
        p = subprocess.Popen([lat, "-j", "-d", str(dev)], stdout=o, stderr=e)
        for _ in range(600):      # attached: it says so on stderr
            with open(errp) as f:
                if any(x.startswith(("Tracing", "Attaching")) for x in f):
                    break
            if p.poll() is not None:
                break
            time.sleep(0.1)
        if p.poll() is not None:
            with open(errp) as f:
                die(f"{lat}: exited {p.returncode}: {f.read().strip()[-400:]}")
        if workload == "p1":
            run(fracbench(side, dev) + ["-m", "latency", "-o", "nop", "-L",
                                        "-T", f"{spec['traced_s']:g}", "-W", "100"])
        else:
            run(fracbench(side, dev) + ["-m", "bandwidth", "-s", "16M", "-n", "8", "-W", "1"])
        p.send_signal(signal.SIGINT)
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            die(f"{lat}: did not exit on SIGINT")


def verdicts(spec, out):
    from fracregress_lib import runinfo, verdict
    a, b = (runinfo.bench_metrics(os.path.join(out, s["name"])) for s in spec["sides"])
    return {m: verdict.compare(a[m]["slices"], b[m]["slices"], spec["magnitude"])[0]
            for m in sorted(set(a) & set(b))}


def ask_judge(spec, n):
    """The host's judge (--judge) answers batch-<n>.req with batch-<n>.ans: the verdicts."""
    req = os.path.join(spec["out"], f"batch-{n}")
    with open(req + ".tmp", "w") as f:
        json.dump({"slices": n}, f)
    os.replace(req + ".tmp", req + ".req")
    for _ in range(6000):
        try:
            with open(req + ".ans") as f:
                return json.load(f)["verdicts"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    die(f"no answer from the judge to {req}.req in 600 s (is guest-regress.py --judge "
        "running on the host?)")


def judge(spec_path, out):
    """Host side: answer each batch-<n>.req under `out` (the host path of the guest's out
    directory) until ab.json appears."""
    with open(spec_path) as f:
        spec = json.load(f)
    done = set()
    parent = os.getppid()
    # until the guest is done, or the script that started us is gone (Ctrl-C, a crash)
    while not os.path.exists(os.path.join(out, "ab.json")) and os.getppid() == parent:
        for fn in sorted(os.listdir(out)) if os.path.isdir(out) else []:
            if fn.endswith(".req") and fn not in done:
                v = verdicts(spec, out)
                ans = os.path.join(out, fn[:-4] + ".ans")
                with open(ans + ".tmp", "w") as f:
                    json.dump({"verdicts": v}, f)
                os.replace(ans + ".tmp", ans)
                done.add(fn)
        time.sleep(0.2)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--judge":
        judge(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    spec["out"] = os.path.join(os.environ.get("FRAC_OUT", "."), spec.get("out", ""))
    first = spec.get("first", 1)
    bad = set(spec.get("metrics", [])) - {"p1", "p2", "p3"}
    if bad:
        die(f"unknown metrics {sorted(bad)}: p1, p2, p3")
    if len(spec["sides"]) not in (1, 2):
        die("SPEC wants one side or two")
    for s in spec["sides"]:
        os.makedirs(os.path.join(spec["out"], s["name"]), exist_ok=True)
        if not os.path.isfile(s["ko"]):
            die(f"side {s['name']}: no {s['ko']}")
    for m in ("gpu-sched", "drm_shmem_helper"):
        run(["modprobe", m])
    rng = random.Random(spec.get("seed", 1) * 1000003 + first)
    mod = Module()
    order, batches, n = [], [], 0
    want = spec["start"]
    while True:
        while n < want:
            pair = list(spec["sides"])
            rng.shuffle(pair)
            for s in pair:
                one_slice(spec, s, first + n, mod)
                order.append(s["name"][0].upper())
            n += 1
        if len(spec["sides"]) == 1:
            stop = f"one side per boot: {n} slices"
            break
        v = ask_judge(spec, n)
        batches.append({"slices": n, "verdicts": v})
        unknown = sorted(m for m, x in v.items() if x == "UNKNOWN")
        log(f"{n} slices a side: " + ", ".join(f"{m} {x}" for m, x in v.items()))
        if not unknown:
            stop = "every metric has a verdict"
            break
        if n >= spec["cap"]:
            stop = f"cap of {spec['cap']} slices reached with {', '.join(unknown)} UNKNOWN"
            break
        want = min(spec["cap"], n + spec["step"])
    log(stop)
    traced = ["p1"] + (["p3"] if "p3" in spec.get("metrics", ["p1", "p2", "p3"]) else [])
    for t in range(spec.get("traced", 8)):
        pair = list(spec["sides"])
        rng.shuffle(pair)
        for s in pair:
            for w in traced:
                traced_slice(spec, s, first + t, mod, w)
            order.append(s["name"][0].lower())
    mod.unload()
    with open(os.path.join(spec["out"], "ab.json"), "w") as f:
        json.dump({"order": "".join(order), "slices": n, "batches": batches, "stop": stop,
                   "spec": spec}, f, indent=1)


if __name__ == "__main__":
    main()
