#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""qmp-agent: run QMP commands on behalf of a guest test.

Usage: tests/host/qmp-agent.py --socket QMP_SOCKET --dir DIR [--connect-timeout SECS]

Connects to the QMP socket of a QEMU started by `scripts/vm --qmp QMP_SOCKET` (retrying until
it appears), then serves the requests a guest test drops into DIR, the `qmp/` folder of the
results share (the guest sees it as $FRAC_OUT/qmp):

  NAME.req   one JSON object: a QMP command, {"execute": "...", "arguments": {...}}, or an
             agent command, {"agent": "wait-event", "event": "DEVICE_DELETED", "timeout": 30}
             (the guest writes NAME.req.tmp and renames it, so a request is never half read)
  NAME.rep   the reply: the QMP response object, or for wait-event {"event": {...}} or
             {"error": "timeout"} (written as NAME.rep.tmp, then renamed)

DIR/ready appears once the QMP handshake is done; DIR/agent.log records every exchange.
Requests are served in name order. The agent exits when QEMU closes the socket, or when no
QMP socket appeared within --connect-timeout seconds (exit status 1).
"""
import argparse
import json
import os
import select
import socket
import sys
import time


class Qmp:
    def __init__(self, path, log):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""
        self.events = []
        self.log = log
        greeting = self.recv(timeout=10)
        if greeting is None or "QMP" not in greeting:
            raise RuntimeError(f"no QMP greeting: {greeting}")
        reply = self.command({"execute": "qmp_capabilities"})
        if "return" not in reply:
            raise RuntimeError(f"qmp_capabilities: {reply}")

    def fileno(self):
        return self.sock.fileno()

    def recv(self, timeout):
        """One message, or None on timeout; EOFError when QEMU went away."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                return None
            data = self.sock.recv(65536)
            if not data:
                raise EOFError
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        msg = json.loads(line)
        self.log(f"<- {json.dumps(msg)}")
        return msg

    def pump(self, timeout):
        """Read whatever arrives within @timeout; queue events."""
        msg = self.recv(timeout)
        while msg is not None:
            if "event" in msg:
                self.events.append(msg)
            msg = self.recv(0)

    def command(self, cmd, timeout=60):
        self.log(f"-> {json.dumps(cmd)}")
        self.sock.sendall(json.dumps(cmd).encode() + b"\n")
        deadline = time.monotonic() + timeout
        while True:
            msg = self.recv(max(0.0, deadline - time.monotonic()))
            if msg is None:
                return {"error": {"class": "AgentTimeout", "desc": "no reply from QEMU"}}
            if "event" in msg:
                self.events.append(msg)
                continue
            return msg

    def wait_event(self, name, timeout):
        deadline = time.monotonic() + timeout
        while True:
            for i, ev in enumerate(self.events):
                if ev.get("event") == name:
                    return self.events.pop(i)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.pump(min(left, 0.1))


def write_atomic(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def serve(qmp, d):
    while True:
        reqs = sorted(n for n in os.listdir(d) if n.endswith(".req"))
        for name in reqs:
            path = os.path.join(d, name)
            try:
                with open(path) as f:
                    req = json.load(f)
            except (OSError, ValueError) as e:
                reply = {"error": {"class": "AgentError", "desc": f"bad request: {e}"}}
            else:
                if req.get("agent") == "wait-event":
                    ev = qmp.wait_event(req.get("event", ""), float(req.get("timeout", 30)))
                    reply = {"event": ev} if ev else {"error": "timeout"}
                elif "execute" in req:
                    reply = qmp.command(req)
                else:
                    reply = {"error": {"class": "AgentError", "desc": "unknown request"}}
            write_atomic(path[:-len(".req")] + ".rep", json.dumps(reply) + "\n")
            os.rename(path, path + ".done")
        qmp.pump(0.05)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--socket", required=True, help="QEMU's QMP unix socket")
    ap.add_argument("--dir", required=True, help="request folder (the guest's $FRAC_OUT/qmp)")
    ap.add_argument("--connect-timeout", type=float, default=120,
                    help="seconds to wait for the socket (default 120)")
    args = ap.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    for n in os.listdir(args.dir):    # leftovers of an earlier run
        if n == "ready" or n.endswith((".req", ".rep", ".done", ".tmp")):
            os.remove(os.path.join(args.dir, n))
    logf = open(os.path.join(args.dir, "agent.log"), "a", buffering=1)

    def log(msg):
        logf.write(f"{time.strftime('%H:%M:%S')} {msg}\n")

    deadline = time.monotonic() + args.connect_timeout
    qmp = None
    while qmp is None:
        try:
            qmp = Qmp(args.socket, log)
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                log(f"no QMP socket at {args.socket}")
                return 1
            time.sleep(0.1)
    log("connected")
    write_atomic(os.path.join(args.dir, "ready"), "ready\n")
    try:
        serve(qmp, args.dir)
    except (EOFError, ConnectionResetError, BrokenPipeError):
        log("QEMU closed the connection")
    return 0


if __name__ == "__main__":
    sys.exit(main())
