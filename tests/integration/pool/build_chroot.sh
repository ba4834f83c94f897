#!/usr/bin/env bash
# Build (once) a Debian sid chroot with minicondor 25 for the real-pool tests (issue recipe).
# Usage: build_chroot.sh [DIR]   (default /var/cache/htcondor-advisor/chroot). Needs root.
# The finished chroot is marked with DIR/.advisor-ready; a partial one is rebuilt from scratch.
set -euo pipefail
DIR="${1:-${ADVISOR_CHROOT:-/var/cache/htcondor-advisor/chroot}}"
MIRROR="${ADVISOR_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
if [[ -f "$DIR/.advisor-ready" ]]; then
    echo "chroot ready: $DIR"
    exit 0
fi
if ! command -v debootstrap >/dev/null; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
fi
rm -rf "$DIR"
mkdir -p "$(dirname "$DIR")"
debootstrap --variant=minbase sid "$DIR" "$MIRROR"
cp /etc/resolv.conf "$DIR/etc/resolv.conf"
mount -t proc proc "$DIR/proc"
trap 'umount "$DIR/proc" || true' EXIT
chroot "$DIR" apt-get -o Acquire::Check-Valid-Until=false update
chroot "$DIR" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends minicondor
chroot "$DIR" condor_version
touch "$DIR/.advisor-ready"
echo "chroot built: $DIR"
