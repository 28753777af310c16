#!/usr/bin/env bash
# Build a fixture tree for fractop --sysroot: tests/mkroot.sh DIR
#   DIR/sys/class/accel/accel0  a frac device (counters in device/frac, hwmon temp and power)
#   DIR/sys/class/accel/accel1  an intel_vpu device (no frac counters, no hwmon)
#   DIR/proc/interrupts         accel0's MSI-X vectors 35-38 (fixtures/interrupts.txt)
#   DIR/sys/kernel/debug/accel/0000:01:00.0/queues  2 queues (fixtures/debugfs-queues.txt)
#   DIR/dev/accel/accel{0,1}    char devices 261:{0,1}, DIR/dev/null 1:3 (mknod)
#   DIR/proc/100 "load"         fds 3 and 4 (dup) on accel0, client 7; a socket; /dev/null
#   DIR/proc/101 "load-child"   fd 3 on accel0, client 7 (a fork of 100)
#   DIR/proc/102 "other"        fd 7 on accel0 (client 8, fdinfo in DIR/frac8.txt), fd 8 on accel1
# Exit status 3 if mknod failed (needs root or CAP_MKNOD): the tree is there without nodes.
set -euo pipefail
[ $# = 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
fix=$(cd "$(dirname "${BASH_SOURCE[0]}")/fixtures" && pwd)
T=$1
mkdir -p "$T"
T=$(cd "$T" && pwd)
S=$T
mkdir -p "$S/sys/bus/pci/drivers/frac" "$S/sys/bus/pci/drivers/intel_vpu" "$S/sys/class/accel" \
	"$S/dev/accel" "$S/proc/sys"
fdev=$S/sys/devices/pci0000:00/0000:01:00.0
vdev=$S/sys/devices/pci0000:00/0000:00:0b.0
mkdir -p "$fdev/frac" "$fdev/hwmon/hwmon3" "$vdev"
ln -s ../../../bus/pci/drivers/frac "$fdev/driver"
ln -s ../../../bus/pci/drivers/intel_vpu "$vdev/driver"
for a in busy_ns_dma busy_ns_compute device_jobs_done device_jobs_failed bytes_read bytes_written \
	 interrupts jobs_submitted jobs_completed jobs_failed job_timeouts lost_interrupts \
	 queue_resets device_resets errors coredumps wedged; do
	echo 0 > "$fdev/frac/$a"
done
echo 1000000000 > "$fdev/frac/device_clock_ns"
echo 100 > "$fdev/frac/jobs_completed"
echo 4 > "$fdev/frac/num_queues"
echo 41500 > "$fdev/hwmon/hwmon3/temp1_input"
echo 12500000 > "$fdev/hwmon/hwmon3/power1_input"
for m in 0 1; do
	mkdir "$S/sys/class/accel/accel$m"
	echo "261:$m" > "$S/sys/class/accel/accel$m/dev"
done
ln -s ../../../devices/pci0000:00/0000:01:00.0 "$S/sys/class/accel/accel0/device"
ln -s ../../../devices/pci0000:00/0000:00:0b.0 "$S/sys/class/accel/accel1/device"

# MSI-X vectors 35-38 (msi_irqs/), their counts (/proc/interrupts), frac's debugfs queues
mkdir -p "$fdev/msi_irqs" "$S/sys/kernel/debug/accel/0000:01:00.0"
for v in 35 36 37 38; do echo msix > "$fdev/msi_irqs/$v"; done
cp "$fix/interrupts.txt" "$S/proc/interrupts"
cp "$fix/debugfs-queues.txt" "$S/sys/kernel/debug/accel/0000:01:00.0/queues"

mknod_ok=1
{ mknod "$S/dev/accel/accel0" c 261 0 && mknod "$S/dev/accel/accel1" c 261 1 &&
  mknod "$S/dev/null" c 1 3; } 2>/dev/null || mknod_ok=0
mkproc() { # mkproc PID COMM
	mkdir -p "$S/proc/$1/fd" "$S/proc/$1/fdinfo"
	echo "$2" > "$S/proc/$1/comm"
}
mkfd() { # mkfd PID FD TARGET [FDINFO_FILE]
	ln -s "$3" "$S/proc/$1/fd/$2"
	if [ -n "${4:-}" ]; then cp "$4" "$S/proc/$1/fdinfo/$2"; else echo "pos: 0" > "$S/proc/$1/fdinfo/$2"; fi
}
mkproc 100 load
mkfd 100 3 "$S/dev/accel/accel0" "$fix/frac.txt"
mkfd 100 4 "$S/dev/accel/accel0" "$fix/frac.txt"	# dup: same drm-client-id 7
mkfd 100 5 "socket:[1234]"
mkfd 100 6 "$S/dev/null"
mkproc 101 load-child
mkfd 101 3 "$S/dev/accel/accel0" "$fix/frac.txt"	# fork: client 7 again
mkproc 102 other
sed 's/^drm-client-id:.*/drm-client-id:\t8/' "$fix/frac.txt" > "$S/frac8.txt"
mkfd 102 7 "$S/dev/accel/accel0" "$S/frac8.txt"
mkfd 102 8 "$S/dev/accel/accel1" "$fix/ivpu.txt"

[ $mknod_ok = 1 ] || exit 3
