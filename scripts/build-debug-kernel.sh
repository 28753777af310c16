#!/usr/bin/env bash
# Build (or fetch from cache) the debug guest kernel: 6.12 from linux-source-6.12 with KASAN,
# lockdep, kmemleak, debug objects and fault injection, plus what the frac stack needs.
#
# Usage: scripts/build-debug-kernel.sh              build if needed; prints the artefact dir
#                                                   as the last stdout line
#        scripts/build-debug-kernel.sh --print-path print the artefact dir if cached (exit 1 if not)
#        scripts/build-debug-kernel.sh --force      rebuild even on a cache hit
#
# Config: make x86_64_defconfig, then merge (scripts/kconfig/merge_config.sh) the source's
# kernel/configs/kvm_guest.config and scripts/debug-kernel/*.config in name order, then
# olddefconfig. olddefconfig silently drops options whose dependencies are missing, so every
# line of our fragments is checked against the final .config and the build fails listing the
# options that did not stick.
#
# Artefacts, in <cache>/debug-kernel/<kver>-<key>/ (key = sha256 over the linux-source package
# version, the fragments, KEY_VERSION below, and the gcc and pahole versions; a hit means no
# build at all):
#   bzImage               the kernel (scripts/vm --kernel)
#   build/                external-module build kit (scripts/package/install-extmod-build) with
#                         .config, Module.symvers and vmlinux stripped of DWARF but keeping
#                         .BTF: make -C kernel KDIR=<dir>/build
#   modules/lib/modules/<kver>/  modules_install output with depmod done; the debug lane bind-
#                         mounts it over /lib/modules in the guest (scripts/vm --bind), so the
#                         host's /lib/modules is never touched
#   config, kernelrelease, build.log, time
#
# Environment:
#   FRAC_CACHE               cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/frac)
#   FRAC_LINUX_TARBALL       kernel source tarball (default /usr/src/linux-source-6.12.tar.xz)
#   FRAC_DEBUG_KERNEL_CCACHE=1  compile through ccache (CCACHE_NOHASHDIR=1). Off by default:
#                            a cold build filling a ccache is ~30% slower, and every input that
#                            changes the key (a fragment, the source version) changes
#                            autoconf.h, which misses every object anyway.
#   JOBS                     make -j (default nproc)
# Everything but the final path goes to stderr.
set -euo pipefail

KEY_VERSION=1        # bump when the way the artefacts are made changes
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELF="$REPO/scripts/$(basename "${BASH_SOURCE[0]}")"
CACHE=${FRAC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/frac}
FRAG_DIR=$REPO/scripts/debug-kernel
TARBALL=${FRAC_LINUX_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
PKG=linux-source-6.12
BASE=$CACHE/debug-kernel
JOBS=${JOBS:-$(nproc)}

log() { echo "build-debug-kernel: $*" >&2; }
die() { log "error: $*"; exit 1; }

mode=build
case "${1:-}" in
	--print-path) mode=print ;;
	--force) mode=force ;;
	-h|--help) sed -n '2,/^set -euo/p' "$SELF" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
	"") ;;
	*) die "unknown option $1" ;;
esac

[ -f "$TARBALL" ] || die "no $TARBALL (apt-get install -t bookworm-backports $PKG=<the headers' version>)"
SRCVER=$(dpkg-query -W -f '${Version}' "$PKG" 2>/dev/null || true)
[ -n "$SRCVER" ] || SRCVER="tarball $(stat -c '%s %Y' "$TARBALL")"
# The guest's frac.ko is built against this kernel, the host's against the headers: the two
# need not match, but the lane is only meaningful if they are the same 6.12 stable release.
HDRVER=$(ls /lib/modules 2>/dev/null | sort -V | tail -n1)
frags() { LC_ALL=C ls "$FRAG_DIR"/*.config; }
key() {
	{
		echo "key $KEY_VERSION"
		echo "src $SRCVER"
		for f in $(frags); do printf '%s ' "$(basename "$f")"; sha256sum < "$f"; done
		gcc --version | head -n1
		pahole --version
	} | sha256sum | cut -c1-16
}
KEY=$(key)
# The kernel's version (6.12.95) is in the package version (6.12.95-1~bpo12+1).
KV=${SRCVER%%-*}
OUT=$BASE/$KV-$KEY

if [ "$mode" = print ]; then
	[ -f "$OUT/done" ] && { echo "$OUT"; exit 0; }
	exit 1
fi
if [ "$mode" = build ] && [ -f "$OUT/done" ]; then
	log "cached: $OUT"
	echo "$OUT"
	exit 0
fi
case "$HDRVER" in "$KV"+*|"$KV"-*|"$KV") ;; *)
	log "warning: $PKG is $SRCVER but the installed headers are $HDRVER" ;;
esac

command -v pahole >/dev/null || die "no pahole (apt-get install dwarves): BTF needs it"
for t in flex bison bc; do command -v $t >/dev/null || die "no $t (apt-get install flex bison bc)"; done
[ -f /usr/include/openssl/ssl.h ] || die "no libssl-dev"
[ -f /usr/include/libelf.h ] || die "no libelf-dev"

mkdir -p "$BASE"
exec 9> "$BASE/.lock"
flock 9
[ "$mode" = build ] && [ -f "$OUT/done" ] && { log "cached: $OUT"; echo "$OUT"; exit 0; }

t0=$(date +%s)
# ---- source: unpacked once per source version -----------------------------------------------
SRC=$BASE/src/$KV
if [ ! -f "$SRC/.unpacked" ]; then
	log "unpacking $TARBALL"
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -xf "$TARBALL" -C "$SRC.tmp" --strip-components=1
	touch "$SRC.tmp/.unpacked"
	mv "$SRC.tmp" "$SRC"
fi
grep -q "^SUBLEVEL = ${KV##*.}\$" "$SRC/Makefile" || die "$SRC is not $KV"

# ---- config ---------------------------------------------------------------------------------
# One object dir (O=) per key would keep old trees around; one shared dir, rebuilt incrementally
# when the key changes, is what a developer editing a fragment wants.
OBJ=$BASE/obj
mkdir -p "$OBJ"
MAKEARGS=(-C "$SRC" O="$OBJ" -j"$JOBS")
if [ "${FRAC_DEBUG_KERNEL_CCACHE:-0}" = 1 ] && command -v ccache >/dev/null; then
	export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache} CCACHE_NOHASHDIR=1 CCACHE_BASEDIR=$BASE
	MAKEARGS+=(CC="ccache gcc")
fi
LOG=$OBJ/build.log
: > "$LOG"
run() { "$@" >> "$LOG" 2>&1 || { tail -n 40 "$LOG" >&2; die "failed: $* (log: $LOG)"; }; }

log "config ($KV, key $KEY; fragments: $(frags | xargs -n1 basename | xargs))"
run make "${MAKEARGS[@]}" x86_64_defconfig
run env KCONFIG_CONFIG="$OBJ/.config" "$SRC/scripts/kconfig/merge_config.sh" -m -O "$OBJ" \
	"$OBJ/.config" "$SRC/kernel/configs/kvm_guest.config" $(frags)
run make "${MAKEARGS[@]}" olddefconfig

# Every option of our fragments must be in the final .config with the value we asked for.
missing=()
while IFS= read -r line; do
	if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
		opt=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
		have=$(grep -E "^$opt=" "$OBJ/.config" | cut -d= -f2- || true)
		[ "$have" = "$want" ] || missing+=("$opt=$want (have: ${have:-not set})")
	elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set ]]; then
		opt=${BASH_REMATCH[1]}
		have=$(grep -E "^$opt=" "$OBJ/.config" | cut -d= -f2- || true)
		[ -z "$have" ] || missing+=("$opt is not set (have: $have)")
	fi
done < <(cat $(frags))
if [ ${#missing[@]} -gt 0 ]; then
	log "error: the final .config lacks ${#missing[@]} option(s) the fragments ask for"
	log "(olddefconfig drops an option whose dependencies are missing: add them to a fragment):"
	printf '  %s\n' "${missing[@]}" >&2
	exit 1
fi
log "config: every fragment option is in .config"

# ---- build ----------------------------------------------------------------------------------
log "make -j$JOBS bzImage modules (log: $LOG; cold: 26 min on 2 cores, 2075 s of CPU)"
run make "${MAKEARGS[@]}" bzImage modules
KREL=$(make -s -C "$SRC" O="$OBJ" kernelrelease 2>/dev/null | tail -n1)
[ -n "$KREL" ] || die "no kernelrelease"

# ---- artefacts ------------------------------------------------------------------------------
log "packaging $KREL into $OUT"
rm -rf "$OUT.tmp"
mkdir -p "$OUT.tmp/modules"
cp "$OBJ/arch/x86/boot/bzImage" "$OUT.tmp/bzImage"
cp "$OBJ/.config" "$OUT.tmp/config"
echo "$KREL" > "$OUT.tmp/kernelrelease"
run make "${MAKEARGS[@]}" INSTALL_MOD_PATH="$OUT.tmp/modules" INSTALL_MOD_STRIP=1 modules_install
rm -f "$OUT.tmp/modules/lib/modules/$KREL/build"
# The build kit: what `make M=...` needs. install-extmod-build copies the host programs,
# headers, Makefiles and Module.symvers; it reads srctree/objtree from the environment.
run make "${MAKEARGS[@]}" run-command \
	KBUILD_RUN_COMMAND="\${srctree}/scripts/package/install-extmod-build $OUT.tmp/build"
cp "$OBJ/.config" "$OUT.tmp/build/.config"
# vmlinux without DWARF but with .BTF: module BTF (DEBUG_INFO_BTF_MODULES) is deduplicated
# against it, and the host's bpftool can read it.
objcopy --strip-debug "$OBJ/vmlinux" "$OUT.tmp/build/vmlinux"
readelf -S "$OUT.tmp/build/vmlinux" | grep -c '\.BTF' > /dev/null || die "stripped vmlinux lost .BTF"
ln -sfn "$OUT/build" "$OUT.tmp/modules/lib/modules/$KREL/build"
cp "$LOG" "$OUT.tmp/build.log"
echo "$(( $(date +%s) - t0 ))" > "$OUT.tmp/time"
touch "$OUT.tmp/done"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
# keep the newest two artefact sets
ls -1dt "$BASE"/[0-9]*-*/ 2>/dev/null | tail -n +3 | xargs -r rm -rf
log "done in $(cat "$OUT/time") s: $OUT"
echo "$OUT"
