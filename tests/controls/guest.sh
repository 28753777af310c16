#!/usr/bin/env bash
# In the controls' guest (tests/controls/run.sh): load kcheck_ctl.ko ($KCHECK_CTL_KO) once per
# bug, each between "kcheck-ctl: begin BUG" and "kcheck-ctl: end BUG" lines in the kernel log,
# so that the host can judge each bug's part of the log alone. Prints TAP: that each load ran.
set -uo pipefail
ko=${KCHECK_CTL_KO:?KCHECK_CTL_KO: the kcheck_ctl.ko to load}
# lockdep first: a KASAN report taints the kernel LOCKDEP_NOW_UNRELIABLE, which turns lockdep off.
BUGS=${KCHECK_CTL_BUGS:-abba oob dma-size dma-held hung uaf leak}
ht=/proc/sys/kernel/hung_task_timeout_secs
# DMA-API debug prints only its first error unless told to print them all.
echo 1 > /sys/kernel/debug/dma-api/all_errors || { echo "Bail out! cannot make DMA-API debug print every error"; exit 1; }
echo "TAP version 13"
n=0 rc=0
for b in $BUGS; do
	n=$((n + 1))
	args=(bug="$b")
	if [ "$b" = hung ]; then
		# Report a task in D state after 5 s; the control's task stays there 25 s.
		old=$(cat $ht); echo 5 > $ht
		args+=(hung_secs=25)
	fi
	echo "kcheck-ctl: begin $b" > /dev/kmsg
	if insmod "$ko" "${args[@]}" && rmmod kcheck_ctl; then
		echo "ok $n - kcheck_ctl bug=$b loaded and unloaded"
	else
		echo "not ok $n - kcheck_ctl bug=$b loaded and unloaded"; rc=1
		rmmod kcheck_ctl 2>/dev/null
	fi
	[ "$b" = hung ] && echo "$old" > $ht
	# Let the checkers print (a report is not always synchronous with the bug).
	sleep 2
	echo "kcheck-ctl: end $b" > /dev/kmsg
done
echo "1..$n"
exit $rc
