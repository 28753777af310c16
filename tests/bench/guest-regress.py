#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run inside the guest by scripts/regress: two sides (base, head) measured in short
alternating slices, as pinpoint and duet benchmarking do, until every metric has a verdict.

Usage: guest-regress.py SPEC.json

SPEC (written by scripts/regress):
  {"out": DIR,                       results (default $FRAC_OUT, the rig's writable share);
                                     DIR/<side>/ gets one file per slice and metric
   "sides": [{"name": "base", "tree": "/path/to/checkout", "ko": "/path/frac.ko",
              "port": null | "0000:00:10.0"}, {...}],
   "slice_s": 1.0, "start": 10, "step": 10, "cap": 30, "seed": 1, "magnitude": 0.10,
   "traced": 8, "traced_s": 2.0, "first": 1}

A side is a frac.ko, the checkout whose fracbench and fraclat drive it, and the FRAC device it
runs on: the one behind root port `port`, or (null) the first device behind no other side's
port. Two sides with different modules on one device reload the module when the turn passes
from one to the other; two sides on different devices (an injected device regression, an A/A
of two identical devices) share one module.

A slice of a side runs, on its device, in this order (fracbench -j each):
  p1-frac-<k>.json  QD1 round trip of a NOP job on the submitting CPU's queue (-L), slice_s
  p2-frac-<k>.json  NOP jobs at QD32 over all queues, slice_s
  p3-frac-<k>.json  16 MiB copies, 8 of them
Pairs of slices run in random order (AB or BA, seeded): drift of the host (another guest, a
build) falls on both sides alike. After `start` slices a side, and after every `step` more,
the metrics are compared (fracregress_lib.verdict.compare, pinpoint's rule); while any is
UNKNOWN and the sides have fewer than `cap` slices, more slices run. Then `traced` (8)
traced slices a side, in pairs of random order as well: the side's own bpf/fraclat -j while
the P1 workload runs for traced_s, written to <side>/fraclat-<k>.json (the timed slices are
never traced). The stage attribution tests each stage slice by slice (attribution.py).

With one side (scripts/regress when base and head need different QEMUs, one boot each), the
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
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "regress"))

from fracregress_lib import runinfo, verdict  # noqa: E402

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


def device_of(side, sides):
    ports = [s["port"] for s in sides if s.get("port")]
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
    dev = device_of(side, spec["sides"])
    d = os.path.join(spec["out"], side["name"])
    t = f"{spec['slice_s']:g}"
    fb = fracbench(side, dev)
    run(fb + ["-m", "latency", "-o", "nop", "-L", "-T", t, "-W", "100"],
        os.path.join(d, f"p1-frac-{k}.json"))
    run(fb + ["-m", "throughput", "-o", "nop", "-d", "32", "-T", t, "-W", "100"],
        os.path.join(d, f"p2-frac-{k}.json"))
    run(fb + ["-m", "bandwidth", "-s", "16M", "-n", "8", "-W", "1"],
        os.path.join(d, f"p3-frac-{k}.json"))


def traced_slice(spec, side, k, mod):
    """fraclat -j around a P1 workload; SIGINT ends it with a last JSON object."""
    mod.load(side["ko"])
    dev = device_of(side, spec["sides"])
    d = os.path.join(spec["out"], side["name"])
    lat = os.path.join(side["tree"], "bpf", "fraclat")
    if not os.access(lat, os.X_OK):
        die(f"side {side['name']}: no {lat}: no stage histograms")
    errp = os.path.join(d, f"fraclat-{k}.err")
    with open(os.path.join(d, f"fraclat-{k}.json"), "w") as o, open(errp, "w") as e:
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
        run(fracbench(side, dev) + ["-m", "latency", "-o", "nop", "-L",
                                    "-T", f"{spec['traced_s']:g}", "-W", "100"])
        p.send_signal(signal.SIGINT)
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            die(f"{lat}: did not exit on SIGINT")


def verdicts(spec):
    a, b = (runinfo.bench_metrics(os.path.join(spec["out"], s["name"])) for s in spec["sides"])
    return {m: verdict.compare(a[m]["slices"], b[m]["slices"], spec["magnitude"])[0]
            for m in sorted(set(a) & set(b))}


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    spec.setdefault("out", os.environ.get("FRAC_OUT", "."))
    first = spec.get("first", 1)
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
        v = verdicts(spec)
        batches.append({"slices": n, "verdicts": v})
        unknown = sorted(m for m, x in v.items() if x == verdict.UNKNOWN)
        log(f"{n} slices a side: " + ", ".join(f"{m} {x}" for m, x in v.items()))
        if not unknown:
            stop = "every metric has a verdict"
            break
        if n >= spec["cap"]:
            stop = f"cap of {spec['cap']} slices reached with {', '.join(unknown)} UNKNOWN"
            break
        want = min(spec["cap"], n + spec["step"])
    log(stop)
    for t in range(spec.get("traced", 8)):
        pair = list(spec["sides"])
        rng.shuffle(pair)
        for s in pair:
            traced_slice(spec, s, first + t, mod)
            order.append(s["name"][0].lower())
    mod.unload()
    with open(os.path.join(spec["out"], "ab.json"), "w") as f:
        json.dump({"order": "".join(order), "slices": n, "batches": batches, "stop": stop,
                   "spec": spec}, f, indent=1)


if __name__ == "__main__":
    main()
