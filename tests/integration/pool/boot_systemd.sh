#!/usr/bin/env bash
# Run as PID 1 of new PID, mount and cgroup namespaces (systemd_host.py starts it with unshare):
# this machine's own root as an overlay whose writes go to a tmpfs at $1 and vanish with the
# namespace, then this machine's systemd on it, booted to basic.target (none of its services).
# pivot_root, not chroot: in a chroot the kernel refuses the user namespace that the shipped
# unit's PrivateUsers= asks for ("Failed to set up user namespacing").
set -euo pipefail
LAYERS="$1"
mount --make-rprivate /
mount -t tmpfs -o mode=0755 advisor-layers "$LAYERS"
mkdir "$LAYERS/upper" "$LAYERS/work" "$LAYERS/root"
ROOT="$LAYERS/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$LAYERS/upper,workdir=$LAYERS/work" "$ROOT"
mount -t proc proc "$ROOT/proc"
mount -t sysfs sysfs "$ROOT/sys"
mount -t cgroup2 cgroup2 "$ROOT/sys/fs/cgroup"  # the cgroup namespace's own subtree
mount --rbind /dev "$ROOT/dev"
for dir in run tmp; do  # as at boot; systemd-tmpfiles would otherwise empty this machine's /tmp
    mount -t tmpfs -o mode=1777 tmpfs "$ROOT/$dir"
done
chmod 0755 "$ROOT/run"
mkdir "$ROOT/run/host-root"
cd "$ROOT"
pivot_root . run/host-root
umount -l /run/host-root
exec env -i container=advisor-test /lib/systemd/systemd --system --unit=basic.target
