#!/usr/bin/env bash
# Builds (once, cached) the Debian bookworm guest for the real-kernel tests:
# a root file system image with the Debian kernel, rdma-core, the verbs
# providers (rxe), perftest, infiniband-diags, tcpdump and the NFS server and
# client (checks/50-nfs-rdma.sh), plus the kernel and initrd
# to boot it with. Prints the cache directory. Needs root (debootstrap).
#
#   scripts/vm/build-image.sh            # IBTOOL_VM_CACHE, default /var/cache/ibtool-vm
set -euo pipefail
# Only the cache directory goes to stdout; everything else to stderr.
exec 3>&1 1>&2
here=$(cd "$(dirname "$0")" && pwd)
cache=${IBTOOL_VM_CACHE:-/var/cache/ibtool-vm}
mirror=${IBTOOL_VM_MIRROR:-http://deb.debian.org/debian}
pkgs=linux-image-amd64,initramfs-tools,kmod,iproute2,rdma-core,ibverbs-providers,ibverbs-utils,perftest,infiniband-diags,libibverbs1,procps,tcpdump,nfs-kernel-server

# The cache key covers everything that goes into the image.
key=$(cat "$here/build-image.sh" "$here/guest-init" | sha256sum | cut -c1-12)
out=$cache/$key
if [ -f "$out/rootfs.img" ] && [ -f "$out/vmlinuz" ] && [ -f "$out/initrd.img" ]; then
	echo "$out" >&3
	exit 0
fi

"$here/../install-deps.sh" debootstrap qemu-system-x86 e2fsprogs
mkdir -p "$cache"
work=$(mktemp -d "$cache/build-XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root

echo "vm: debootstrap bookworm into $root (a few minutes, once)" >&2
start=$SECONDS
# A mirror hiccup should not fail the run: try twice.
if ! debootstrap --variant=minbase --include="$pkgs" bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1; then
	echo "vm: debootstrap failed, trying once more" >&2
	rm -rf "$root"
	debootstrap --variant=minbase --include="$pkgs" bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
		{ tail -30 "$work/debootstrap.log" >&2; exit 1; }
fi
install -m 0755 "$here/guest-init" "$root/sbin/ibtool-vm-init"
mkdir -p "$root/mnt/host"
echo ibtool-vm >"$root/etc/hostname"
# Keep the image small: no docs, no apt lists.
rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/var/lib/apt/lists"/* "$root/var/cache/apt"/*.bin

mkdir -p "$work/out"
cp "$root"/boot/vmlinuz-* "$work/out/vmlinuz"
cp "$root"/boot/initrd.img-* "$work/out/initrd.img"
size=$(( $(du -sm "$root" | cut -f1) + 300 ))
mkfs.ext4 -q -L ibtool-vm -d "$root" "$work/out/rootfs.img" "${size}M"
rm -rf "$out"
mv "$work/out" "$out"
# Images of older keys are dead weight (a gigabyte each).
find "$cache" -mindepth 1 -maxdepth 1 -type d ! -name "$key" ! -name 'build-*' -exec rm -rf {} +
echo "vm: image built in $((SECONDS - start))s: $out" >&2
echo "$out" >&3
