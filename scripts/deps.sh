#!/usr/bin/env bash
# Install the Debian packages frac needs (bookworm + bookworm-backports), idempotently.
# Usage: scripts/deps.sh            (needs root; does nothing when all are present)
set -euo pipefail

BPO_FILE=/etc/apt/sources.list.d/frac-backports.sources

# Packages from bookworm-backports: the 6.12 kernel we test on, and the QEMU build deps.
# linux-source-6.12: checkpatch.pl for kernel/check.sh (and the kernel tree as a reference)
# libbpf-dev, bpftool, libelf-dev: libbpf 1.4 and bpftool 7.5 for the BPF tools (bpf/)
# linux-perf: perf 6.12 with Python scripting for tools/perf-scripts (trace-cmd is below)
BPO_PKGS=(linux-image-amd64 linux-headers-amd64 linux-source-6.12 meson python3-pycotap
          libbpf-dev bpftool libelf-dev linux-perf)
# Packages from bookworm.
PKGS=(build-essential gcc-12 ninja-build pkg-config libglib2.0-dev zlib1g-dev python3-venv
      bzip2 xz-utils seabios qemu-system-data ccache pciutils cpio kmod fio sparse
      libcap-ng-dev libattr1-dev clang llvm libzstd-dev bpftrace trace-cmd
      flex bison bc libssl-dev pahole    # these five: scripts/build-debug-kernel.sh
      libncurses-dev tmux prometheus     # tools/fractop: build; its guest test; the exporter's
      python3-numpy python3-scipy python3-matplotlib python3-psycopg2 sqlite3 # tools/regress;
      postgresql chromium                # its store on PostgreSQL, its HTML report rendered
      debhelper dh-dkms dkms lintian help2man)  # the .debs (debian/, make test-pkg), man pages

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: must run as root to install packages: ${*}" >&2
		exit 1
	fi
}

missing=()
for p in "${BPO_PKGS[@]}" "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && [ -f "$BPO_FILE" ] && exit 0
need_root "${missing[@]}"

if [ ! -f "$BPO_FILE" ]; then
	# Same mirror and keyring as the system's bookworm entry.
	uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	key=$(awk '/^Signed-By:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	cat > "$BPO_FILE" <<SRC
Types: deb deb-src
URIs: ${uri:-http://deb.debian.org/debian}
Suites: bookworm-backports
Components: main
Signed-By: ${key:-/usr/share/keyrings/debian-archive-keyring.gpg}
SRC
	apt-get update -qq
fi

export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends -t bookworm-backports "${BPO_PKGS[@]}" >/dev/null
apt-get install -y -qq --no-install-recommends "${PKGS[@]}" >/dev/null

# prometheus is here for its binary (fractop's exporter test runs its own instance on a
# loopback port); the package also enables a system service on :9090. If this run installed
# the package, stop and disable that service again; a prometheus that was already installed
# is left alone.
if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
	systemctl disable --now prometheus.service >/dev/null 2>&1 || true
fi
# postgresql likewise: tools/regress's test runs its own server (initdb + pg_ctl in a temp
# dir); the package's cluster service is stopped and disabled if this run installed it.
if [[ " ${missing[*]} " == *" postgresql "* ]] && [ -d /run/systemd/system ]; then
	systemctl disable --now postgresql.service >/dev/null 2>&1 || true
fi
