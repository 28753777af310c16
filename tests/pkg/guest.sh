#!/usr/bin/env bash
# tests/pkg/guest.sh: the guest half of tests/pkg/run.sh (TAP). The frac packages are
# installed on the host, whose root this guest sees: only what they installed is used, never
# the repository's builds. modprobe loads frac.ko from DKMS's updates/dkms; udevd (the
# host's, bookworm-backports' 254 here) applies the package's rule; the installed tools run a
# workload as root and as nobody with and without group render; fraclat and the perf
# wrappers watch one. PKG_VERSION: the package version the host installed.
set -uo pipefail
n=0 fail=0
T=$(mktemp -d)
ok() {   # ok DESCRIPTION command...: one TAP result, the command's output as diagnostics
	local d=$1; shift
	n=$((n + 1))
	if "$@" > "$T/out" 2>&1; then echo "ok $n - $d"
	else echo "not ok $n - $d"; sed 's/^/# /' "$T/out" | tail -n 20; fail=1; fi
}
kver=$(uname -r)
ok "modinfo frac: the DKMS build (frac $PKG_VERSION) under updates/dkms" bash -c \
	"modinfo -n frac && modinfo -n frac | grep -q '^/lib/modules/$kver/updates/dkms/frac.ko'"
ok "modprobe frac (gpu-sched, drm_shmem_helper as its dependencies)" modprobe frac
wait_node() { for _ in $(seq 100); do [ -c /dev/accel/accel0 ] && return 0; sleep 0.1; done; return 1; }
ok "/dev/accel/accel0 appears" wait_node

# udev: the package's rule gives the node render:0660. The guest has no udev running: start a
# udevd on the guest's tmpfs /run and replay the add event, twice. First the host's udev
# (bookworm-backports' 254, whose 50-udev-default.rules gives every accel node render 0660
# already): udevadm test must name 70-frac.rules as what sets GROUP and MODE. Then bookworm's
# 252 (U252: its udev package unpacked by run.sh) with its own rules over /lib/udev/rules.d:
# root 0600 without 70-frac.rules (252 has no accel rule), render 0660 with it.
# The guest chroots into the host root: systemd's tools ignore requests in a chroot unless told.
export SYSTEMD_IGNORE_CHROOT=1
udev_run() {   # udev_run UDEVADM: start its udevd, replay accel's add events, stop it
	local adm=$1
	ln -sf "$(command -v "$adm")" /run/systemd-udevd
	/run/systemd-udevd --daemon --resolve-names=early || return 1
	"$adm" trigger --action=add --subsystem-match=accel && "$adm" settle -t 20
	"$adm" control --exit 2>/dev/null || true
	for _ in $(seq 50); do pgrep -x systemd-udevd > /dev/null || break; sleep 0.1; done
	echo "accel0 with udev $("$adm" --version): $(stat -c '%G %a' /dev/accel/accel0)"
}
node_reset() { chown root:root /dev/accel/accel0 && chmod 600 /dev/accel/accel0; }
udev_254() {
	node_reset && udev_run udevadm || return 1
	[ "$(stat -c '%G %a' /dev/accel/accel0)" = "render 660" ] || return 1
	udevadm test --action=add /sys/class/accel/accel0 2>&1 | grep -E '70-frac.rules:[0-9]+ (GROUP|MODE)' | tee /dev/stderr | grep -q MODE
}
ok "udev $(udevadm --version): /dev/accel/accel0 is render 0660, set by 70-frac.rules" udev_254
udev_252() {
	mkdir -p /run/r252 /run/empty && cp "$U252"/lib/udev/rules.d/*.rules /run/r252/ || return 1
	mount --bind /run/r252 /lib/udev/rules.d && mount --bind /run/empty /etc/udev/rules.d || return 1
	node_reset && udev_run "$U252/bin/udevadm"
	local without; without=$(stat -c '%G %a' /dev/accel/accel0)
	cp /run/r252-frac/70-frac.rules /run/r252/ && node_reset && udev_run "$U252/bin/udevadm"
	local with; with=$(stat -c '%G %a' /dev/accel/accel0)
	umount /etc/udev/rules.d; umount /lib/udev/rules.d
	echo "252 without the rule: $without; with it: $with"
	[ "$without" = "root 600" ] && [ "$with" = "render 660" ]
}
if [ -n "${U252:-}" ] && [ -x "$U252/bin/udevadm" ]; then
	mkdir -p /run/r252-frac && cp /lib/udev/rules.d/70-frac.rules /run/r252-frac/
	ok "udev 252 (bookworm): accel0 root 0600 without 70-frac.rules, render 0660 with it" udev_252
else
	n=$((n + 1)); echo "ok $n - udev 252 (bookworm) # SKIP its udev package could not be fetched"
fi
ok "udev: accel0 not world-writable" bash -c '[ $(( 0$(stat -c %a /dev/accel/accel0) & 2 )) = 0 ]'

load_ok() {   # load_ok -n N fracload-args...: exit 0, N jobs and "failed":0 in its JSON
	local j; j=$(/usr/bin/fracload -j "$@") || return 1
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("jobs", d["jobs"], "failed", d["failed"]); sys.exit(d["failed"] != 0 or d["jobs"] != int(sys.argv[2]))' "$j" "$2"
}
ok "fracload -n 64 -o copy,crc32c -j (root): 64 jobs, 0 failed" load_ok -n 64 -o copy,crc32c
ok "fracload as nobody in group render: 0 failed" \
	setpriv --reuid=nobody --regid=nogroup --groups=render bash -c "$(declare -f load_ok); load_ok -n 16 -o copy"
ok "fracload as nobody without group render: refused" \
	bash -c '! setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/fracload -n 1'
ok "fracbench -n 50 -j (root)" bash -c '/usr/bin/fracbench -n 50 -W 5 -j > '"$T"'/bench.json && python3 -m json.tool '"$T"'/bench.json > /dev/null'
ok "fractop -J -n 1 names accel0" bash -c '/usr/bin/fractop -J -n 1 --no-bpf | grep -q accel0'

# fraclat (installed in /usr/sbin) over a workload: its JSON counts the workload's jobs.
fraclat_run() {
	/usr/sbin/fraclat -j > "$T/lat.json" 2> "$T/lat.err" & local p=$!
	for _ in $(seq 600); do grep -q '^Tracing' "$T/lat.err" && break; sleep 0.1; done
	grep -q '^Tracing' "$T/lat.err" || { cat "$T/lat.err"; kill $p; return 1; }
	/usr/bin/fracload -n 32 -o copy > /dev/null || { kill $p; return 1; }
	sleep 1; kill -INT $p; wait $p
	cat "$T/lat.err"; tail -c 300 "$T/lat.json"; echo
	python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); sys.exit(d["ended"]["ok"] != 32)' "$T/lat.json"
}
ok "fraclat -j sees the 32 jobs of a fracload run" fraclat_run

# The perf wrappers from /usr/bin (links into /usr/share/frac/perf-scripts).
perf_run() {
	cd "$T" && frac-stages-record -o "$T/perf.data" -- /usr/bin/fracload -n 16 -o copy > /dev/null 2>&1 &&
		frac-stages-report -i "$T/perf.data" --by none > "$T/stages.txt" 2>&1
	local rc=$?; head -n 20 "$T/stages.txt"; [ $rc = 0 ] && grep -q 16 "$T/stages.txt"
}
ok "frac-stages-record + frac-stages-report over 16 jobs" perf_run

ok "rmmod frac" modprobe -r frac
echo "1..$n"
rm -rf "$T"
exit $fail
