#!/usr/bin/env bash
# Builds (once, cached) the Debian bookworm guest for the real-kernel tests:
# a root file system image with the Debian kernel, rdma-core, the verbs
# providers (rxe), perftest, infiniband-diags, tcpdump, the NFS server and
# client (checks/50-nfs-rdma.sh), rdmacm-utils (checks/70-rdmacm.sh) and
# python3-pyverbs (rdma-core's own test suite, issue 31),
# plus the kernel and initrd to boot it with. Debian's kernel is built
# without Soft-iWARP (siw), so the image carries an siw.ko built here from
# the same kernel's source. Prints the cache directory. Needs root
# (debootstrap).
#
#   scripts/vm/build-image.sh            # IBTOOL_VM_CACHE, default /var/cache/ibtool-vm
set -euo pipefail
# Only the cache directory goes to stdout; everything else to stderr.
exec 3>&1 1>&2
here=$(cd "$(dirname "$0")" && pwd)
cache=${IBTOOL_VM_CACHE:-/var/cache/ibtool-vm}
mirror=${IBTOOL_VM_MIRROR:-http://deb.debian.org/debian}
pkgs=linux-image-amd64,initramfs-tools,kmod,iproute2,rdma-core,ibverbs-providers,ibverbs-utils,perftest,infiniband-diags,libibverbs1,procps,tcpdump,nfs-kernel-server,rdmacm-utils,python3-pyverbs

# The cache key covers everything that goes into the image.
key=$(cat "$here/build-image.sh" "$here/guest-init" | sha256sum | cut -c1-12)
out=$cache/$key
if [ -f "$out/rootfs.img" ] && [ -f "$out/vmlinuz" ] && [ -f "$out/initrd.img" ]; then
	echo "$out" >&3
	exit 0
fi

"$here/../install-deps.sh" debootstrap qemu-system-x86 e2fsprogs xz-utils
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
# Soft-iWARP: Debian's 6.1 kernel has `# CONFIG_RDMA_SIW is not set`, so
# build drivers/infiniband/sw/siw out of tree against the guest's own
# kernel: its headers package (which pulls the gcc Debian built it with)
# and the linux-source of the very same version, inside the chroot so the
# host's compiler does not matter. The build packages go again afterwards.
kver=$(ls "$root/lib/modules")
[ "$(echo "$kver" | wc -l)" -eq 1 ] || { echo "vm: want one kernel in the image, have: $kver" >&2; exit 1; }
kdeb=$(chroot "$root" dpkg-query -W -f='${Version}' "linux-image-$kver")
kser=${kver%.*-*-*}
echo "vm: debootstrap done in $((SECONDS - start))s" >&2
sstart=$SECONDS
echo "vm: building siw.ko for $kver ($kdeb)" >&2
build_pkgs="linux-headers-$kver linux-source-$kser"
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
{
	in_root apt-get update &&
		in_root apt-get install -y --no-install-recommends linux-headers-$kver "linux-source-$kser=$kdeb" make
} >"$work/siw-deps.log" 2>&1 || { tail -30 "$work/siw-deps.log" >&2; exit 1; }
mkdir -p "$root/tmp/siw"
tar -xJf "$root/usr/src/linux-source-$kser.tar.xz" -C "$root/tmp/siw" --strip-components=5 \
	"linux-source-$kser/drivers/infiniband/sw/siw"
# 6.1's siw has no module parameters: its "try to negotiate MPA CRCs" is
# a constant, false. Turn it on, so the NFS check's iWARP capture carries
# real CRC32c values for trace to check.
sed -i 's/^const bool mpa_crc_required;$/const bool mpa_crc_required = true;/' "$root/tmp/siw/siw_main.c"
grep -q '^const bool mpa_crc_required = true;$' "$root/tmp/siw/siw_main.c" ||
	{ echo "vm: cannot turn on MPA CRCs in siw_main.c" >&2; exit 1; }
in_root make -C "/usr/src/linux-headers-$kver" M=/tmp/siw CONFIG_RDMA_SIW=m modules >"$work/siw-build.log" 2>&1 ||
	{ tail -30 "$work/siw-build.log" >&2; exit 1; }
mkdir -p "$root/lib/modules/$kver/updates"
in_root strip --strip-debug -o "/lib/modules/$kver/updates/siw.ko" /tmp/siw/siw.ko
in_root depmod -a "$kver"
in_root modinfo -F vermagic "/lib/modules/$kver/updates/siw.ko" | grep -q "^$kver " ||
	{ echo "vm: siw.ko's vermagic is not $kver" >&2; exit 1; }
in_root apt-get purge -y --autoremove $build_pkgs make >>"$work/siw-deps.log" 2>&1 ||
	{ tail -30 "$work/siw-deps.log" >&2; exit 1; }
in_root apt-get clean
rm -rf "$root/tmp/siw" "$root/usr/src"/linux-*
echo "vm: siw.ko built in $((SECONDS - sstart))s" >&2

install -m 0755 "$here/guest-init" "$root/sbin/ibtool-vm-init"
mkdir -p "$root/mnt/host"
echo ibtool-vm >"$root/etc/hostname"
# rdma-core's own test suite ships under doc/ with some files gzipped:
# keep it, unpacked, as the package `tests` in /opt/rdma-core-tests.
mkdir -p "$root/opt/rdma-core-tests"
cp -r "$root/usr/share/doc/rdma-core/tests" "$root/opt/rdma-core-tests/tests"
gunzip "$root/opt/rdma-core-tests/tests/"*.gz
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
