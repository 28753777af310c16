#!/usr/bin/env bash
# Build (or fetch from cache) a qemu-system-x86_64 that contains our FRAC-1 device model.
#
# Usage: QEMU=$(scripts/build-qemu.sh)     build if needed; the binary path is the last stdout line
#        scripts/build-qemu.sh --print-path print the cached binary path if present (exit 1 if not)
#        scripts/build-qemu.sh --force      rebuild even on a cache hit
#
# Environment:
#   FRAC_CACHE         cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/frac)
#   FRAC_EMULATOR_DIR  device sources to link into hw/frac (default <repo>/emulator)
#   FRAC_HW_H          register header to link into hw/frac (default <repo>/include/frac_hw.h)
#   FRAC_QEMU_TARBALL  use this qemu_*.orig.tar.xz instead of downloading one
#
# What it does: fetch Debian's QEMU source (bookworm-backports), unpack it into
# <cache>/qemu-<ver>, add hw/frac/ (symlinks to every emulator/ file, the device's C files
# being those emulator/meson.build lists, and to frac_hw.h), hook it into Kconfig/meson/trace,
# configure a minimal x86_64 system emulator and build only qemu-system-x86_64. The result is
# kept in <cache>/bin/<hash>/, hash = sha256 over the QEMU version, this script, every file in
# emulator/ and frac_hw.h: a hit means no build at all.
# Everything but the final path goes to stderr.
set -euo pipefail

QEMU_VER=10.0.2
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELF="$REPO/scripts/$(basename "${BASH_SOURCE[0]}")"
CACHE=${FRAC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/frac}
EMU_DIR=${FRAC_EMULATOR_DIR:-$REPO/emulator}
HW_H=${FRAC_HW_H:-$REPO/include/frac_hw.h}
SRC=$CACHE/qemu-$QEMU_VER
BUILD=$SRC/build
MAK_NAME=frac        # configs/devices/x86_64-softmmu/frac.mak

log() { echo "build-qemu: $*" >&2; }
die() { log "error: $*"; exit 1; }

mode=build
case "${1:-}" in
	--print-path) mode=print ;;
	--force) mode=force ;;
	-h|--help) sed -n '2,20p' "$SELF" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
	"") ;;
	*) die "unknown option $1" ;;
esac

[ -d "$EMU_DIR" ] || die "no emulator dir $EMU_DIR"
[ -f "$HW_H" ] || die "no $HW_H"
# Every C file of the device is in its meson.build: one left out would be linked into hw/frac
# but never built, and the link would fail on its functions with no hint why.
if [ -f "$EMU_DIR/meson.build" ]; then
	for c in "$EMU_DIR"/*.c; do
		[ -e "$c" ] || continue
		grep -q "'$(basename "$c")'" "$EMU_DIR/meson.build" ||
			die "$(basename "$c") is not in $EMU_DIR/meson.build"
	done
fi

# ---- inputs hash --------------------------------------------------------------------------
emu_files() { find -L "$EMU_DIR" -maxdepth 1 -type f ! -name '.*' ! -name '*~' ! -name '*.sw?' -printf '%f\n' | LC_ALL=C sort; }
input_hash() {
	{
		echo "qemu $QEMU_VER"
		sha256sum < "$SELF"
		emu_files | while read -r f; do
			printf '%s ' "$f"; sha256sum < "$EMU_DIR/$f"
		done
		printf 'frac_hw.h '; sha256sum < "$HW_H"
	} | sha256sum | cut -c1-16
}
HASH=$(input_hash)
OUT=$CACHE/bin/$HASH/qemu-system-x86_64

if [ "$mode" = print ]; then
	[ -x "$OUT" ] || { log "no cached binary for the current sources ($HASH); run scripts/build-qemu.sh"; exit 1; }
	echo "$OUT"; exit 0
fi
if [ "$mode" = build ] && [ -x "$OUT" ]; then
	[ -z "${FRAC_VERBOSE:-}" ] || log "cache hit $HASH"
	echo "$OUT"; exit 0
fi

mkdir -p "$CACHE"
# One build at a time per cache (two callers may race, e.g. make -j).
exec 9>"$CACHE/.build-qemu.lock"
flock 9
if [ "$mode" = build ] && [ -x "$OUT" ]; then echo "$OUT"; exit 0; fi

# ---- source ---------------------------------------------------------------------------------
fetch_tarball() {
	local dl=$CACHE/src t
	mkdir -p "$dl"
	if [ -n "${FRAC_QEMU_TARBALL:-}" ]; then echo "$FRAC_QEMU_TARBALL"; return; fi
	t=$(ls "$dl"/qemu_"$QEMU_VER"*.orig.tar.xz 2>/dev/null | head -n1 || true)
	if [ -z "$t" ]; then
		log "downloading QEMU $QEMU_VER source (apt-get source, bookworm-backports)"
		# Exits 100 after the tarball because the Debian packaging files are not served.
		(cd "$dl" && apt-get source -qq --download-only -t bookworm-backports qemu >&2 2>"$dl/apt.log") || true
		t=$(ls "$dl"/qemu_"$QEMU_VER"*.orig.tar.xz 2>/dev/null | head -n1 || true)
		[ -n "$t" ] || { cat "$dl/apt.log" >&2; die "no qemu_${QEMU_VER}*.orig.tar.xz downloaded (is bookworm-backports deb-src configured? run scripts/deps.sh)"; }
	fi
	echo "$t"
}

if [ ! -f "$SRC/.frac-unpacked" ]; then
	tarball=$(fetch_tarball)
	log "unpacking $(basename "$tarball")"
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -xJf "$tarball" -C "$SRC.tmp"
	top=$(find "$SRC.tmp" -mindepth 1 -maxdepth 1 -type d | head -n1)
	[ -f "$top/VERSION" ] || die "unexpected tarball layout"
	[ "$(cat "$top/VERSION")" = "$QEMU_VER" ] || die "tarball is QEMU $(cat "$top/VERSION"), want $QEMU_VER"
	mv "$top" "$SRC"
	rmdir "$SRC.tmp"
	touch "$SRC/.frac-unpacked"
fi

# ---- patch the tree (idempotent) ----------------------------------------------------------
# Write a file only when its content changes, so mtimes (and ninja) stay quiet.
put() { # put FILE < content
	local tmp; tmp=$(mktemp); cat > "$tmp"
	if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; chmod 644 "$1"; fi
}
# Append a line to a file unless it is already there.
add_line() { grep -qxF "$2" "$1" || echo "$2" >> "$1"; }

FR=$SRC/hw/frac
mkdir -p "$FR"
want=()
while read -r f; do
	want+=("$f")
	[ "$(readlink "$FR/$f" 2>/dev/null)" = "$EMU_DIR/$f" ] || ln -sfn "$EMU_DIR/$f" "$FR/$f"
done < <(emu_files)
want+=(frac_hw.h)
[ "$(readlink "$FR/frac_hw.h" 2>/dev/null)" = "$HW_H" ] || ln -sfn "$HW_H" "$FR/frac_hw.h"
# QEMU's per-directory trace.h; an empty trace-events if the device has none (yet).
if [ ! -e "$EMU_DIR/trace.h" ]; then
	want+=(trace.h)
	echo '#include "trace/trace-hw_frac.h"' | put "$FR/trace.h"
fi
if [ ! -e "$EMU_DIR/trace-events" ]; then
	want+=(trace-events)
	[ -L "$FR/trace-events" ] && rm -f "$FR/trace-events"
	printf '# no trace events yet\n' | put "$FR/trace-events"
fi
# Drop links to files that left emulator/.
for p in "$FR"/* ; do
	[ -e "$p" ] || [ -L "$p" ] || continue
	b=$(basename "$p") keep=0
	for w in "${want[@]}"; do [ "$w" = "$b" ] && keep=1; done
	[ $keep = 1 ] || rm -f "$p"
done

add_line "$SRC/hw/Kconfig" "source frac/Kconfig"
add_line "$SRC/hw/meson.build" "subdir('frac')"
# trace_events_subdirs is built up in blocks in the top meson.build (conditional on
# have_system etc.) before the "Collect sources" section: add ours just before it, once.
line="trace_events_subdirs += [ 'hw/frac' ]"
if ! grep -qxF "$line" "$SRC/meson.build"; then
	n=$(grep -n '^# Collect sources #$' "$SRC/meson.build" | head -n1 | cut -d: -f1)
	[ -n "$n" ] || die "meson.build layout changed: no 'Collect sources' section"
	sed -i "$((n - 1))i $line" "$SRC/meson.build"
fi
# The +ds tarball has no edk2 blobs: only unpack them when installing blobs.
sed -i "s/^    unpack_edk2_blobs = bzip2.found()$/    unpack_edk2_blobs = bzip2.found() and get_option('install_blobs')/" "$SRC/meson.build"
grep -q "unpack_edk2_blobs = bzip2.found() and get_option('install_blobs')" "$SRC/meson.build" ||
	die "could not patch unpack_edk2_blobs in meson.build"

# Devices: only what the q35 guest rig and our tests need. Q35 selects the PC basics (i8259,
# i8254, RTC, ISA serial, LPC, AHCI, ACPI, fw_cfg); PCIE_PORT for pcie-root-port,
# VIRTIO_PCI + VIRTIO_9P for the 9p shares, NVME_PCI for the nvme comparison device (it links
# against the SPDM socket backend, a default-y option that --without-default-devices drops),
# VTD for -device intel-iommu (the IOMMU lane, scripts/vm --iommu).
put "$SRC/configs/devices/x86_64-softmmu/$MAK_NAME.mak" <<'MAK'
# frac: minimal device set (generated by scripts/build-qemu.sh)
CONFIG_Q35=y
CONFIG_PCIE_PORT=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_9P=y
CONFIG_NVME_PCI=y
CONFIG_SPDM_SOCKET=y
CONFIG_VTD=y
CONFIG_FRAC_NPU=y
MAK

# ---- configure -------------------------------------------------------------------------------
CONF_ARGS=(--python=/usr/bin/python3 --target-list=x86_64-softmmu
	--without-default-features --without-default-devices
	--with-devices-x86_64=$MAK_NAME
	--enable-tcg --enable-kvm --enable-virtfs --enable-attr
	--disable-docs --disable-download --disable-install-blobs)

if command -v ccache >/dev/null && [ -d /usr/lib/ccache ]; then
	export PATH=/usr/lib/ccache:$PATH
	export CCACHE_DIR=$CACHE/ccache CCACHE_BASEDIR=$SRC CCACHE_NOHASHDIR=1
	ccache -M 5G >/dev/null 2>&1 || true
fi
# pyenv or a venv earlier in PATH must not provide meson/python.
export PATH=$(echo "$PATH" | tr ':' '\n' | grep -v -e pyenv -e '/\.venv/' | paste -sd: -)

conf_stamp=$( { printf '%s\n' "${CONF_ARGS[@]}"; echo "ccache=$(command -v gcc)"
	cat "$SRC/configs/devices/x86_64-softmmu/$MAK_NAME.mak"; } | sha256sum | cut -c1-16)
if [ ! -f "$BUILD/build.ninja" ] || [ "$(cat "$BUILD/.frac-configured" 2>/dev/null)" != "$conf_stamp" ]; then
	log "configuring QEMU (log: $SRC/configure.log)"
	rm -rf "$BUILD"
	mkdir -p "$BUILD"
	if ! (cd "$BUILD" && ../configure "${CONF_ARGS[@]}") > "$SRC/configure.log" 2>&1; then
		tail -n 30 "$SRC/configure.log" >&2
		rm -f "$BUILD/build.ninja"
		die "configure failed (full log: $SRC/configure.log)"
	fi
	echo "$conf_stamp" > "$BUILD/.frac-configured"
fi

# The hw/frac symlinks may now point at files older than the objects built from another
# checkout: when the inputs changed since the last build, drop what was built from hw/frac so
# ninja cannot skip it, and force a meson regeneration if the build description changed.
last=$(cat "$BUILD/.frac-last-hash" 2>/dev/null || true)
if [ "$last" != "$HASH" ]; then
	find "$BUILD" \( -name '*hw_frac_*' -o -name 'trace-hw_frac.*' \) -type f -delete 2>/dev/null || true
	desc=$( { emu_files; cat "$FR/meson.build" "$FR/Kconfig" 2>/dev/null; } | sha256sum | cut -c1-16)
	if [ "$(cat "$BUILD/.frac-last-desc" 2>/dev/null)" != "$desc" ]; then
		touch "$SRC/meson.build"
		echo "$desc" > "$BUILD/.frac-last-desc"
	fi
fi

log "building qemu-system-x86_64 ($HASH)"
start=$SECONDS
if ! ninja -C "$BUILD" qemu-system-x86_64 > "$SRC/build.log" 2>&1; then
	grep -v -E '^\[[0-9]+/[0-9]+\] ' "$SRC/build.log" | head -n 60 >&2 || true
	rm -f "$BUILD/.frac-last-desc"
	die "build failed (full log: $SRC/build.log)"
fi
echo "$HASH" > "$BUILD/.frac-last-hash"
log "built in $((SECONDS - start)) s"

"$BUILD/qemu-system-x86_64" -device help 2>/dev/null | grep -q '"frac-npu"' ||
	die "built QEMU has no frac-npu device (check emulator/Kconfig and emulator/meson.build)"

mkdir -p "$CACHE/bin/$HASH"
cp "$BUILD/qemu-system-x86_64" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
ln -sfn "$SRC" "$CACHE/bin/$HASH/qemu-src"
# Keep the last few binaries only.
ls -1dt "$CACHE"/bin/*/ 2>/dev/null | tail -n +9 | xargs -r rm -rf
echo "$OUT"
