#!/usr/bin/env bash
# Installs what sharebench's build, tests, demo and benchmarks need on a fresh Debian
# machine (as root). Idempotent: packages already present are left as they are.
# Fails loudly, naming what is missing, when something cannot be had.
set -euo pipefail

need_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps: must run as root (apt-get, loop devices and mounts need it)" >&2
    exit 1
  fi
}

PACKAGES=(dpkg-dev fio xfsprogs e2fsprogs btrfs-progs util-linux time procps rsync chromium libnfs-dev libsmbclient-dev libglusterfs-dev libssl-dev pkg-config patch curl)
# The lab's servers and the clients its tests use (docs/methods/lab.md).
LAB_PACKAGES=(iproute2 samba smbclient nfs-ganesha nfs-ganesha-vfs nfs-ganesha-gluster rpcbind libnfs-utils glusterfs-server glusterfs-client smbnetfs nbdkit libnbd-bin)
PACKAGES+=("${LAB_PACKAGES[@]}")
# Multi-client runs: OpenMPI, and libclang for the Rust MPI bindings (cargo feature mpi).
PACKAGES+=(openmpi-bin libopenmpi-dev libclang-dev openssh-server openssh-client)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  need_root
  echo "install-deps: installing ${missing[*]}" >&2
  # Keep apt from starting daemons it installs.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] || { echo "install-deps: cargo (Rust stable) is missing; install it with rustup" >&2; exit 1; }
fi
for tool in patch curl fio mkfs.xfs mkfs.ext4 mkfs.btrfs losetup filefrag rsync chromium /usr/bin/time smbd ganesha.nfsd rpcbind smbclient nfs-cp glusterd glusterfs smbnetfs nbdkit nbdfuse; do
  command -v "$tool" >/dev/null 2>&1 || { echo "install-deps: '$tool' is still missing after install" >&2; exit 1; }
done
