#!/usr/bin/env bash
# Guest module reload test: after a finished workload (jobs, syncobjs, dma-bufs, files closed
# with jobs in flight, a process killed mid-run, one that exits leaving jobs on the rings and
# queued) nothing of frac is left: no open clients, no
# jobs on the rings, no dma-buf, no module reference; rmmod succeeds and releases gpu-sched and
# drm_shmem_helper; insmod brings the device back as the same accel minor (the old DRM device
# was freed, so no BO, file or fence leaked a reference to it) and it works again. rmmod with a
# file open is refused. Prints TAP.
. "$(dirname "$0")/lib/frac-guest.bash"

guest_begin
guest_ok "load frac.ko" guest_load_frac
if ! guest_have_device; then
	guest_result SKIP "module reload" "no frac device"
	guest_dmesg_check
	guest_end
	exit
fi
BDF=$(guest_bdf)
SYS=/sys/bus/pci/devices/$BDF/frac
minor0=$(ls /dev/accel)

# A workload that leaves as much behind as it can, if the driver lets it.
workload() { # workload ROUND
	guest_run "frac_uapi_test (round $1)" "$GUEST_TESTS/frac_uapi_test" -t prime_export_host \
		-t syncobj_out -t syncobj_in -t close_with_jobs_in_flight -t bo_close_while_busy \
		-t submit_wait
	guest_run "frac_stress_test (round $1)" "$GUEST_TESTS/frac_stress_test" -t threads_own_files \
		-t ring_wrap_max_cmds
}

no_clients() { # no process holds a frac file open
	local l
	for l in /proc/[0-9]*/fd/*; do
		case "$(readlink "$l" 2>/dev/null)" in /dev/accel/*) echo "# open: $l"; return 1 ;; esac
	done
}
rings_empty() {
	! grep -E 'jobs_in_ring [1-9]' /sys/kernel/debug/accel/"$BDF"/queues
}
jobs_accounted() { # every submitted job ended
	local s c f
	s=$(cat "$SYS/jobs_submitted") c=$(cat "$SYS/jobs_completed") f=$(cat "$SYS/jobs_failed")
	[ "$s" = $((c + f)) ] || { echo "# submitted $s, completed $c, failed $f"; return 1; }
}
no_dmabufs() { grep -q '^Total 0 objects' /sys/kernel/debug/dma_buf/bufinfo; }
refcnt_is() { [ "$(cat "/sys/module/$1/refcnt" 2>/dev/null)" = "$2" ]; }
gone() {
	[ ! -d /sys/module/frac ] && ! ls /dev/accel/accel* > /dev/null 2>&1 &&
		[ -z "$(ls /sys/kernel/debug/accel/ 2>/dev/null)" ] &&
		[ -z "$(ls /sys/class/accel/ 2>/dev/null)" ]
}
# rmmod, retrying while files of exiting processes are still being released
rmmod_settled() {
	for _ in $(seq 50); do
		rmmod frac 2> /dev/null && return 0
		sleep 0.2
	done
	rmmod frac
}
after_workload_checks() { # after_workload_checks ROUND
	guest_ok "round $1: no process has a frac file open" no_clients
	guest_ok "round $1: no job left on any ring" rings_empty
	guest_ok "round $1: every submitted job ended (sysfs)" jobs_accounted
	guest_ok "round $1: no dma-buf left" no_dmabufs
	guest_ok "round $1: frac module refcount is 0" refcnt_is frac 0
}
unload_checks() { # unload_checks ROUND
	guest_ok "round $1: rmmod frac" rmmod_settled
	guest_ok "round $1: device node, sysfs class and debugfs gone" gone
	guest_ok "round $1: gpu-sched no longer used" refcnt_is gpu_sched 0
	guest_ok "round $1: drm_shmem_helper no longer used" refcnt_is drm_shmem_helper 0
}
reload_checks() { # reload_checks ROUND
	guest_ok "round $1: insmod frac" guest_load_frac
	guest_ok "round $1: same accel minor ($minor0) again" test "$(ls /dev/accel 2>/dev/null)" = "$minor0"
	guest_ok "round $1: counters of a new device" test "$(cat "$SYS/jobs_submitted")" = 0
}

workload 1
after_workload_checks 1
unload_checks 1
reload_checks 1

# A process killed in the middle of its jobs: its files close with jobs in flight.
FRAC_STRESS_BATCHES=1000000 "$GUEST_TESTS/frac_stress_test" -t processes_own_files \
	> /dev/null 2>&1 &
pid=$!
tree() { # the pids of $1 and its descendants, from one pass over /proc (pgrep is slow here)
	awk -v root="$1" '{ l = $0; sub(/.*\) /, "", l); split(l, f, " "); pp[$1] = f[2] }
		END { print root; n = 1; q[1] = root
			for (i = 1; i <= n; i++) for (p in pp) if (pp[p] == q[i]) { q[++n] = p; print p } }' \
		/proc/[0-9]*/stat 2> /dev/null
}
# Wait until its workers run (harness, test, fixture and 4+ worker processes).
for _ in $(seq 30); do [ "$(tree "$pid" | wc -l)" -ge 6 ] && break; sleep 0.2; done
pids=$(tree "$pid")
kill -STOP $pids 2> /dev/null	# no forks while we collect and kill
pids=$(tree "$pid")
guest_diag "killing the workload mid-run: $(echo $pids | wc -w) processes"
kill -9 $pids 2> /dev/null
wait "$pid" 2> /dev/null
for _ in $(seq 50); do no_clients > /dev/null && break; sleep 0.2; done
after_workload_checks 2
unload_checks 2
reload_checks 2

# A process that exits with jobs in flight (held by injected latency), 100 more per queue on the
# rings and jobs queued in the scheduler behind them:
# rmmod as soon as its file is released, the jobs still on the rings.
guest_ok "round 3: jobs left behind by an exiting process" "$GUEST_TESTS/frac_orphan" 3000 100
unload_checks 3
reload_checks 3

workload 4
after_workload_checks 4

# A file open keeps the module: rmmod is refused, and works once the file is closed.
exec 3<> "/dev/accel/$minor0"
guest_ok "rmmod refused while a file is open" eval '! rmmod frac 2> /dev/null'
guest_ok "device still there" test -e "/dev/accel/$minor0"
exec 3>&-
unload_checks 4
reload_checks 4

guest_dmesg_check
guest_end
