#!/usr/bin/env bash
# Guest fuzz group: tests/guest/fuzz/frac_fuzz, a structured fuzzer of every frac ioctl with
# several processes and threads, signals, fork, file closes and device faults injected through
# debugfs (fault-injection=on; without it the fuzzer runs without faults). Oracles: documented
# errnos and job statuses, every job ends within a bound after the faults stop, data (fresh BOs
# zeroed, no DMA after a job ended), the device works after, counters add up; then rmmod and a
# dmesg check that also catches KASAN, lockdep and kmemleak reports. Prints TAP.
#
# Environment:
#   FRAC_FUZZ_DURATION  seconds of fuzzing (default 30)
#   FRAC_FUZZ_SEED      seed (default: random; printed, and written to $FRAC_OUT/fuzz/seed)
#   FRAC_FUZZ_SCALE     multiplier of every time bound (default 1; 8 on a kernel with lockdep
#                       or KASAN, which runs syscalls 4-80x slower)
#   FRAC_FUZZ_ARGS      more frac_fuzz options, e.g. "--avoid-known --procs 2"
#   FRAC_FUZZ_JOB_TIMEOUT_MS  frac.ko job_timeout_ms (default 500; small values cut long
#                       commands short with queue resets)
. "$(dirname "$0")/lib/frac-guest.bash"

FUZZ=$GUEST_REPO/tests/guest/fuzz/frac_fuzz
DURATION=${FRAC_FUZZ_DURATION:-30}
SEED=${FRAC_FUZZ_SEED:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}
SCALE=${FRAC_FUZZ_SCALE:-}
if [ -z "$SCALE" ]; then
	SCALE=1
	[ -e /proc/lockdep_stats ] || [ -e /sys/kernel/debug/kmemleak ] ||
		grep -qs kasan /proc/cmdline && SCALE=8
fi
# Op logs are written line by line to tmpfs (cheap; they survive a fuzzer thread killed by an
# oops) and copied to $FRAC_OUT/fuzz at the end.
LOGDIR=/tmp/frac-fuzz
OUTDIR=${FRAC_OUT:-/tmp}/fuzz
GUEST_DMESG_PATTERN='BUG:|WARNING:|Oops|UBSAN|KASAN|kmemleak|general protection|circular locking|possible recursive locking|INFO: task .* blocked|Call Trace'

guest_begin
taint0=$(cat /proc/sys/kernel/tainted 2>/dev/null || echo 0)
mkdir -p "$OUTDIR" "$LOGDIR"
echo "$SEED" > "$OUTDIR/seed"
guest_diag "seed $SEED, duration $DURATION s, time scale $SCALE, op logs in $OUTDIR"
JT=${FRAC_FUZZ_JOB_TIMEOUT_MS:-500}
guest_ok "load frac.ko job_timeout_ms=$JT" guest_load_frac job_timeout_ms="$JT"
# A foreign dma-buf with more segments than the device takes needs udmabufs of 256 MiB.
UDMABUF_LIMIT=/sys/module/udmabuf/parameters/size_limit_mb
old_limit=
if [ -w $UDMABUF_LIMIT ]; then
	old_limit=$(cat $UDMABUF_LIMIT)
	echo 300 > $UDMABUF_LIMIT
fi
# shellcheck disable=SC2086
guest_run frac_fuzz "$FUZZ" --tap --seed "$SEED" --duration "$DURATION" --scale "$SCALE" \
	--out "$LOGDIR" ${FRAC_FUZZ_ARGS:-}
cp -r "$LOGDIR"/. "$OUTDIR"/ 2>/dev/null
[ -z "$old_limit" ] || echo "$old_limit" > $UDMABUF_LIMIT

# After an oops, tasks stuck in the kernel can hold the module: rmmod may never return.
unload_bounded() {
	local i
	guest_unload_frac &
	for i in $(seq $((30 * SCALE))); do
		[ -d /sys/module/frac ] || { wait; return 0; }
		sleep 1
	done
	guest_diag "rmmod frac still blocked after $((30 * SCALE)) s; refcnt $(cat /sys/module/frac/refcnt)"
	return 1
}
guest_ok "rmmod frac after the fuzzing" unload_bounded
if [ -r /proc/sys/kernel/tainted ]; then
	# Taint this group added, less 4096 (out-of-tree) and 8192 (unsigned) of loading frac.ko;
	# taint from before (a boot-time report) is the kernel's, not ours.
	t=$(( $(cat /proc/sys/kernel/tainted) & ~taint0 & ~(4096 | 8192) ))
	[ "$taint0" = 0 ] || guest_diag "taint $taint0 before the fuzzing"
	dmesg | head -n "$GUEST_DMESG_START" | grep -q 'BUG: KASAN' &&
		guest_diag "KASAN reported before this group: it reports once, so it saw nothing here"
	guest_ok "the fuzzing added no taint beyond the out-of-tree module's (added $t)" [ "$t" = 0 ]
fi
guest_dmesg_check
guest_end
