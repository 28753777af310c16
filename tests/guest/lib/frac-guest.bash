# SPDX-License-Identifier: MIT
# Shared by the guest test runners (tests/guest/*.sh), sourced with bash.
#
# A runner prints one TAP stream: the results of the kselftest programs it runs, renumbered
# into one sequence (their own plans dropped), its own checks, and a final plan. Every runner
# ends with a dmesg check over what the kernel logged since the runner started.
#
#   guest_begin                   start a stream; remember where dmesg is
#   guest_load_frac [param=val..] (re)load frac.ko with these parameters (gpu-sched etc. first);
#                                 $FRAC_KO names another frac.ko (default kernel/frac.ko)
#   guest_unload_frac             rmmod frac if loaded
#   guest_have_device, guest_bdf  is there a FRAC-1; its PCI address
#   guest_run NAME PROG [ARGS..]  run a kselftest program, its results become ours; its wall
#                                 time and each test's in "# time: NAME S s" lines
#   guest_ok DESC CMD [ARGS..]    one result: ok if CMD succeeds
#   guest_diag TEXT..             a diagnostic line
#   guest_dmesg_check             one result: no BUG:/WARNING:/Oops/UBSAN since guest_begin
#   guest_end                     print the plan; exit status 0 if everything passed
#
# With FRAC_BOUNCE=1 (the bounce lane: swiotlb=force) guest_end first checks that the DMA went
# through bounce buffers since guest_begin: swiotlb's high-water mark, reset by guest_begin, is
# above zero; else the lane would pass on direct DMA and prove nothing.
set -uo pipefail
shopt -s lastpipe

GUEST_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
GUEST_TESTS=$GUEST_REPO/tests/guest/driver
GUEST_N=0
GUEST_FAILED=0
GUEST_DMESG_START=0
GUEST_DMESG_PATTERN='BUG:|WARNING:|Oops|UBSAN'

guest_diag() { echo "# $*"; }

guest_result() { # guest_result OK|FAIL|SKIP|TODO DESC [REASON]
	GUEST_N=$((GUEST_N + 1))
	case "$1" in
	OK) echo "ok $GUEST_N $2" ;;
	SKIP) echo "ok $GUEST_N $2 # SKIP ${3:-}" ;;
	TODO) echo "not ok $GUEST_N $2 # TODO ${3:-}" ;;	# a known failure: not counted
	*) echo "not ok $GUEST_N $2"; GUEST_FAILED=$((GUEST_FAILED + 1)) ;;
	esac
}

guest_ok() { # guest_ok DESC CMD [ARGS..]
	local desc=$1; shift
	if "$@"; then guest_result OK "$desc"; else guest_result FAIL "$desc"; fi
}

GUEST_SWIOTLB=/sys/kernel/debug/swiotlb

guest_begin() {
	echo "TAP version 13"
	GUEST_DMESG_START=$(dmesg | wc -l)
	if [ "${FRAC_BOUNCE:-0}" = 1 ]; then
		mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
		echo 0 > "$GUEST_SWIOTLB/io_tlb_used_hiwater" 2>/dev/null
	fi
}

# One result: since guest_begin, DMA went through swiotlb's bounce buffers.
guest_bounce_check() {
	local hi
	hi=$(cat "$GUEST_SWIOTLB/io_tlb_used_hiwater" 2>/dev/null)
	if grep -qw swiotlb=force /proc/cmdline && [ "${hi:-0}" -gt 0 ] 2>/dev/null; then
		guest_result OK "DMA went through bounce buffers (swiotlb high-water mark: $hi slots)"
	else
		guest_result FAIL "DMA went through bounce buffers (needs swiotlb=force in /proc/cmdline: $(grep -ow 'swiotlb=[^ ]*' /proc/cmdline || echo none); high-water mark: ${hi:-none} slots)"
	fi
}

guest_unload_frac() {
	[ -d /sys/module/frac ] || return 0
	rmmod frac
}

# $FRAC_KO_PARAMS (param=value ..., before the caller's, which win) loads every runner's frac.ko
# with those too: a whole group run with, say, direct_submit=Y.
guest_load_frac() { # guest_load_frac [param=value...]
	local want=() have= p
	for p in ${FRAC_KO_PARAMS:-}; do
		[[ " $* " == *" ${p%%=*}="* ]] || want+=("$p")
	done
	want+=("$@")
	if [ -d /sys/module/frac ]; then
		for p in "${want[@]}"; do
			[ "$(cat "/sys/module/frac/parameters/${p%%=*}" 2>/dev/null)" = "${p#*=}" ] ||
				have=differs
		done
		[ -z "$have" ] && return 0
		rmmod frac || return 1
	fi
	modprobe gpu-sched && modprobe drm_shmem_helper || return 1
	insmod "${FRAC_KO:-$GUEST_REPO/kernel/frac.ko}" "${want[@]}" || return 1
	# No udev: devtmpfs creates the node; wait for it anyway (if there is a device).
	guest_have_device || return 0
	for _ in $(seq 50); do
		ls /dev/accel/accel* > /dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# Is there a FRAC-1 on the PCI bus? (The tests skip when not.)
# Note how frac.ko is loaded (job_timeout_ms, dbg_mask), or that it is not, for a runner whose
# tests unload it; guest_restore_frac then puts it back that way.
guest_save_frac() {
	GUEST_FRAC_PARAMS=()
	[ -d /sys/module/frac ] || return 0
	local p
	for p in job_timeout_ms dbg_mask; do
		GUEST_FRAC_PARAMS+=("$p=$(cat /sys/module/frac/parameters/$p)")
	done
}
guest_restore_frac() {
	if [ ${#GUEST_FRAC_PARAMS[@]} -gt 0 ]; then
		guest_ok "frac.ko loaded as found (${GUEST_FRAC_PARAMS[*]})" guest_load_frac \
			"${GUEST_FRAC_PARAMS[@]}"
	else
		guest_ok "frac.ko not loaded, as found" guest_unload_frac
	fi
}

guest_have_device() {
	grep -qs '^0x1234$' /sys/bus/pci/devices/*/vendor &&
		grep -qs '^0xfac1$' /sys/bus/pci/devices/*/device
}

# PCI address of the first FRAC-1, e.g. 0000:01:00.0 (empty if none).
guest_bdf() {
	local d
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor" 2>/dev/null):$(cat "$d/device" 2>/dev/null)" = 0x1234:0xfac1 ] &&
			{ basename "$d"; return 0; }
	done
	return 1
}

# Run a kselftest-harness program; renumber its results into this stream. A program that dies
# before reporting everything it planned, or exits non-zero without a failed result, adds a
# failed result of its own.
guest_run() { # guest_run NAME PROG [ARGS..]
	local name=$1 plan=-1 ran=0 bad=0 rc=255 line num rest t0 tt= us; shift
	guest_diag "--- $name: $*"
	t0=$(date +%s.%N)
	# A pipe, not a process substitution: the guest has no /dev/fd. lastpipe keeps the loop
	# in this shell, so its counters survive.
	{ "$@" 2>&1; echo "__frac_rc=$?"; } | while IFS= read -r line; do
		case "$line" in
		__frac_rc=*) rc=${line#__frac_rc=} ;;
		"TAP version"*) ;;
		1..*) plan=${line#1..}; plan=${plan%% *} ;;
		"#  RUN "*) tt=${EPOCHREALTIME/./}; echo "$line" ;;
		"ok "*|"not ok "*)
			if [[ $line == "not ok "* ]]; then rest=${line#not ok }; else rest=${line#ok }; fi
			num=${rest%% *}; rest=${rest#"$num"}
			ran=$((ran + 1)); GUEST_N=$((GUEST_N + 1))
			if [[ $line == "not ok "* ]]; then
				bad=$((bad + 1)); GUEST_FAILED=$((GUEST_FAILED + 1))
				echo "not ok $GUEST_N$rest"
			else
				echo "ok $GUEST_N$rest"
			fi
			# Each test's wall time, from its RUN line (scripts/tap-summary: the slowest).
			if [ -n "$tt" ]; then
				us=$(( ${EPOCHREALTIME/./} - tt )); tt=
				rest=${rest# }; rest=${rest%% *}
				printf '# time: %s %d.%01d s\n' "$rest" $((us / 1000000)) $((us % 1000000 / 100000))
			fi ;;
		*) echo "$line" ;;
		esac
	done
	# scripts/tap-summary lists the slowest programs from these lines.
	awk -v n="$name" -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "# time: %s %.1f s\n", n, b - a }'
	if [ "$plan" != "$ran" ]; then
		guest_result FAIL "$name: planned $plan results, reported $ran (exit status $rc)"
	elif [ "$rc" != 0 ] && [ "$bad" = 0 ]; then
		guest_result FAIL "$name: exit status $rc"
	fi
	[ "$bad" = 0 ] && [ "$rc" = 0 ]
}

guest_dmesg_check() {
	local hits log=/tmp/frac-guest-dmesg.$$ ln r why= unknown=
	dmesg | tail -n +$((GUEST_DMESG_START + 1)) > "$log"
	for ln in $(grep -n -E "$GUEST_DMESG_PATTERN" "$log" | cut -d: -f1); do
		if r=$("$GUEST_REPO/scripts/known-report" "$log" "$ln"); then why=$r; else unknown=1; fi
	done
	rm -f "$log"
	if [ -z "$unknown" ] && [ -n "$why" ]; then
		guest_result TODO "dmesg has no BUG:, WARNING:, Oops or UBSAN" "known, not frac: $why"
		return
	fi
	hits=$(dmesg | tail -n +$((GUEST_DMESG_START + 1)) | grep -E "$GUEST_DMESG_PATTERN")
	if [ -n "$hits" ]; then
		guest_result FAIL "dmesg has no BUG:, WARNING:, Oops or UBSAN"
		dmesg | tail -n +$((GUEST_DMESG_START + 1)) | grep -E -A25 "$GUEST_DMESG_PATTERN" |
			head -n 80 | sed 's/^/#   /'
	else
		guest_result OK "dmesg has no BUG:, WARNING:, Oops or UBSAN"
	fi
}

guest_end() {
	[ "${FRAC_BOUNCE:-0}" = 1 ] && guest_bounce_check
	echo "1..$GUEST_N"
	[ "$GUEST_FAILED" = 0 ]
}
