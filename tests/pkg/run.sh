#!/usr/bin/env bash
# tests/pkg/run.sh [OUTDIR]: the Debian packages end to end, as TAP (make test-pkg).
#  1. HEAD (git archive: committed files only) unpacked into a temp dir, the source package
#     and the four .debs built
#     there with dpkg-buildpackage (parallel, no QEMU), then lintian on them;
#  2. make install / make uninstall of that tree into a DESTDIR: uninstall leaves nothing;
#  3. the .debs installed into / with apt: DKMS builds frac.ko against the installed headers
#     (frac-dkms's postinst: dkms add, build, install; depmod), the man pages checked against
#     each installed tool's --help (tests/pkg/man-check.sh), a program built on libfrac-dev;
#  4. one guest (tests/pkg/guest.sh): plain `modprobe frac` of the DKMS module, the udev rule,
#     a workload with the installed tools;
#  5. apt purge, then nothing left: no file of dpkg -L, no /usr/src/frac-*, no frac.ko under
#     /lib/modules/*/updates/dkms, nothing in dkms status.
# Root only (it installs into /). Whatever happens, the exit trap purges the frac packages and
# removes frac from dkms. apt runs in a session of its own (setsid -w): a signal to the test's
# process group (timeout, Ctrl-C) waits for the dpkg transaction instead of breaking it, then
# the trap purges. Logs: OUTDIR (default results/test/pkg). QEMU: the binary to boot.
set -uo pipefail
R=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${1:-$R/results/test/pkg}
PKGS=(frac-dkms frac-tools libfrac0 libfrac-dev)
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
rm -rf "${OUT:?}"/*
W=$(mktemp -d /tmp/frac-pkg.XXXXXX)
n=0 fail=0
tap() {   # tap RC DESCRIPTION [LOG]: one result; on failure the log's tail as diagnostics
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"
	else echo "not ok $n - $2${3:+ (log: $3)}"; fail=1
		[ -n "${3:-}" ] && [ -f "$3" ] && tail -n 15 "$3" | sed 's/^/# /'; fi
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
installed() { dpkg-query -W -f='${db:Status-Abbrev}\n' "$1" 2>/dev/null | grep -q '^.[ic]'; }
purge_all() {
	local p v left=() i
	for p in "${PKGS[@]}"; do installed "$p" && left+=("$p"); done
	# dpkg itself, not apt: it also purges half-installed packages after an interrupted run
	# ("dpkg was interrupted" stops apt-get). Retried while another dpkg holds the lock.
	for i in $(seq 30); do
		[ ${#left[@]} = 0 ] && break
		dpkg --purge "${left[@]}" >> "$OUT/purge.log" 2>&1 && break
		sleep 2
	done
	# a dkms tree left by a failed postinst or prerm (dkms 3 wants module/version)
	for v in $(dkms status frac 2>/dev/null | sed -n 's|^frac/\([^,]*\),.*|\1|p' | sort -u); do
		dkms remove "frac/$v" --all >> "$OUT/purge.log" 2>&1 || true
	done
}
cleanup() {
	local rc=$?
	purge_all
	rm -rf "$W"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || { echo "1..1"; echo "not ok 1 - test-pkg needs root (it installs into /)"; exit 1; }
if [ -z "$(git -C "$R" status --porcelain --untracked-files=no -- debian kernel lib bpf tools man udev scripts/install Makefile 2>/dev/null)" ]; then
	note=""
else note=" (uncommitted changes are not in it)"; fi
head=$(git -C "$R" rev-parse --short HEAD)
for p in "${PKGS[@]}"; do
	installed "$p" && { echo "# $p was installed before the test: purged first"; purge_all; break; }
done
kver=$(ls /lib/modules | sort -V | while read -r v; do [ -d "/lib/modules/$v/build" ] && echo "$v"; done | tail -n 1)

# ---- 1. build in a clean tree, lintian ----------------------------------------------------
mkdir -p "$W/src"
git -C "$R" archive --format=tar HEAD | tar -x -C "$W/src"
version=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$W/src/debian/changelog")
s=$(date +%s)
(cd "$W/src" && DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -F -uc -us) \
	> "$OUT/build.log" 2>&1
rc=$?
debs=()
for p in "${PKGS[@]}"; do
	f=$(ls "$W"/${p}_"$version"_*.deb 2>/dev/null) && debs+=("$f")
done
[ $rc = 0 ] && [ ${#debs[@]} = ${#PKGS[@]} ]
tap $? "dpkg-buildpackage (source and binaries) of $head$note in a clean tree: ${PKGS[*]} $version ($(( $(date +%s) - s )) s)" "$OUT/build.log"
cp "$W"/*.deb "$W"/*.changes "$W"/*.buildinfo "$OUT/" 2>/dev/null

lintian --pedantic --display-info "$W"/frac_"$version"_*.changes > "$OUT/lintian.txt" 2>&1
! grep -q '^[EW]:' "$OUT/lintian.txt"
tap $? "lintian --pedantic: no error or warning tags ($(grep -c '^[EWIP]:' "$OUT/lintian.txt") tags in all)" "$OUT/lintian.txt"
sed -n 's/^\([EWIP]: .*\)/# lintian: \1/p' "$OUT/lintian.txt"

# ---- 2. make install / uninstall into a DESTDIR ------------------------------------------
st=$W/stage
( make -C "$W/src" install DESTDIR="$st" PREFIX=/usr &&
  for f in usr/bin/fracload usr/sbin/fraclat usr/bin/frac-stages-report \
	usr/share/frac/perf-scripts/frac-stages.py usr/lib/libfrac.so.0 usr/lib/libfrac.a \
	usr/include/frac/libfrac.h usr/lib/pkgconfig/libfrac.pc usr/share/man/man4/frac.4 \
	usr/share/man/man8/fraclat.8 lib/udev/rules.d/70-frac.rules \
	"usr/src/frac-$version/dkms.conf" "usr/src/frac-$version/kernel/Kbuild"; do
	[ -e "$st/$f" ] || { echo "missing: $f"; exit 1; }
  done && grep -q "^PACKAGE_VERSION=\"$version\"" "$st/usr/src/frac-$version/dkms.conf" ) \
	> "$OUT/install.log" 2>&1
tap $? "make install DESTDIR PREFIX=/usr: tools, libfrac, man pages, udev rule, /usr/src/frac-$version" "$OUT/install.log"
( make -C "$W/src" uninstall DESTDIR="$st" PREFIX=/usr && left=$(find "$st" ! -type d) &&
  echo "left: $left" && [ -z "$left" ] ) > "$OUT/uninstall.log" 2>&1
tap $? "make uninstall: no file left in the DESTDIR" "$OUT/uninstall.log"

# ---- 3. install with apt; DKMS ------------------------------------------------------------
if [ ${#debs[@]} != ${#PKGS[@]} ]; then
	echo "# no packages: the rest is skipped"; echo "1..$n"; exit 1
fi
s=$(date +%s)
setsid -w apt-get install -y -q "${debs[@]}" > "$OUT/apt-install.log" 2>&1
tap $? "apt-get install ./*.deb (dkms builds frac.ko: $(( $(date +%s) - s )) s)" "$OUT/apt-install.log"
for p in "${PKGS[@]}"; do dpkg -L "$p" > "$OUT/$p.list" 2>/dev/null; done

dkms status frac > "$OUT/dkms-status.txt" 2>&1
grep -q "^frac/$version, $kver, [^:]*: installed" "$OUT/dkms-status.txt"
tap $? "dkms status: frac/$version installed for $kver ($(grep -m 1 '^frac/' "$OUT/dkms-status.txt"))" "$OUT/dkms-status.txt"
ko=$(ls /lib/modules/"$kver"/updates/dkms/frac.ko* 2>/dev/null | head -n 1)
{ echo "file: $ko"; [ -n "$ko" ] && modinfo -k "$kver" -n frac && [ "$(modinfo -k "$kver" -n frac)" = "$ko" ] &&
  grep -q "updates/dkms/frac.ko" "/lib/modules/$kver/modules.dep"; } > "$OUT/module.log" 2>&1
tap $? "frac.ko in /lib/modules/$kver/updates/dkms, in modules.dep (depmod ran)" "$OUT/module.log"

KO=$ko "$R/tests/pkg/man-check.sh" /usr /usr > "$OUT/man-check.tap" 2>&1
tap $? "man pages of the installed tools list exactly their --help options; frac(4) complete ($(grep -c '^ok' "$OUT/man-check.tap") of $(grep -c '^\(not \)\?ok' "$OUT/man-check.tap"))" "$OUT/man-check.tap"

cat > "$W/t.c" <<'C'
#include <stdio.h>
#include <libfrac.h>
int main(void) { printf("%s\n", frac_op_name(DRM_FRAC_OP_CRC32C)); return 0; }
C
ex=$(ls /usr/share/doc/libfrac-dev/examples/frac-example.c* 2>/dev/null | head -n 1)
{ cc -o "$W/t" "$W/t.c" $(pkg-config --cflags --libs libfrac) && "$W/t" | grep -qi crc32c &&
  readelf -d "$W/t" | grep -q 'NEEDED.*libfrac.so.0' && echo "example: $ex" && [ -n "$ex" ] &&
  { case $ex in *.gz) zcat "$ex" ;; *) cat "$ex" ;; esac; } > "$W/ex.c" &&
  cc -o "$W/ex" "$W/ex.c" $(pkg-config --cflags --libs libfrac) -lm; } > "$OUT/libfrac-dev.log" 2>&1
tap $? "programs built with pkg-config libfrac (one, and the installed frac-example.c) link libfrac.so.0" "$OUT/libfrac-dev.log"

# ---- 4. the guest -----------------------------------------------------------------------
{
	qemu=${QEMU:-$("$R/scripts/build-qemu.sh")}
	# bookworm's udev 252 for the guest's rule check: unpacked, never installed (the host has
	# backports' 254). Cached; the guest sees it through a writable share at the same path.
	u252=${FRAC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/frac}/udev-252
	uver=$(apt-cache show udev 2>/dev/null | awk '/^Version: 252\./ { print $2; exit }')
	if [ -n "$uver" ] && [ ! -x "$u252/$uver/bin/udevadm" ]; then
		rm -rf "$u252"; mkdir -p "$u252/$uver"
		(cd "$W" && apt-get download -q "udev=$uver" && dpkg -x udev_*.deb "$u252/$uver") \
			> "$OUT/udev-252.log" 2>&1 || rm -rf "$u252"
	fi
	venv=() rw=()
	[ -n "$uver" ] && [ -x "$u252/$uver/bin/udevadm" ] && cp -a "$u252/$uver" "$W/udev-252" &&
		venv=(--env "U252=$W/udev-252") rw=(--rwdir "$W/udev-252")
	s=$(date +%s)
	(cd "$R" && scripts/vm -q --qemu "$qemu" --timeout 600 --out "$OUT/vm" \
		--env PKG_VERSION="$version" "${venv[@]}" "${rw[@]}" -- tests/pkg/guest.sh) > "$OUT/guest.tap" 2>&1
	grc=$?
	while IFS= read -r l; do
		case $l in
		"ok "*) n=$((n + 1)); echo "ok $n - guest: ${l#ok * - }" ;;
		"not ok "*) n=$((n + 1)); fail=1; echo "not ok $n - guest: ${l#not ok * - }" ;;
		"#"*) echo "$l" ;;
		esac
	done < "$OUT/guest.tap"
	grep -q '^1\.\.' "$OUT/guest.tap"
	tap $(( $? || grc )) "guest ran to its end, exit $grc ($(( $(date +%s) - s )) s)" "$OUT/vm/console.log"
}

# ---- 5. purge, nothing left ---------------------------------------------------------------
setsid -w apt-get purge -y -q "${PKGS[@]}" > "$OUT/apt-purge.log" 2>&1
tap $? "apt-get purge ${PKGS[*]}" "$OUT/apt-purge.log"
( r=0
  for p in "${PKGS[@]}"; do installed "$p" && { echo "still known to dpkg: $p"; r=1; }; done
  for p in "${PKGS[@]}"; do
	while IFS= read -r f; do
		[ -e "$f" ] && [ ! -d "$f" ] && { echo "left: $f ($p)"; r=1; }
		[ -d "$f" ] && case $f in *frac*) echo "left dir: $f ($p)"; r=1 ;; esac
	done < "$OUT/$p.list"
  done
  for f in /usr/src/frac-* /lib/modules/*/updates/dkms/frac.ko* /var/lib/dkms/frac; do
	[ -e "$f" ] && { echo "left: $f"; r=1; }
  done
  grep -q 'updates/dkms/frac.ko' /lib/modules/*/modules.dep && { echo "frac.ko still in modules.dep"; r=1; }
  dkms status frac | grep . && { echo "dkms still knows frac"; r=1; }
  exit $r ) > "$OUT/leftovers.log" 2>&1
tap $? "nothing left: dpkg -L files, /usr/src/frac-*, updates/dkms/frac.ko*, modules.dep, dkms status" "$OUT/leftovers.log"
echo "1..$n"
exit $fail
