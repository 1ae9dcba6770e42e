#!/usr/bin/env bash
# make test-vm: boots the cached Debian guest (build-image.sh) in qemu with
# software emulation, shares ibtool and guest-test.sh with it over 9p, and
# prints what the guest's checks printed. Exits 1 when a check failed, 3
# when the guest did not finish (a watchdog powers it off).
#
#   scripts/vm/run.sh [IBTOOL_BINARY]        (default bin/ibtool)
#
# guest-test.sh makes the rxe device and runs its own checks, then sources
# each scripts/vm/checks/*.sh in name order. IBTOOL_VM_ONLY=PATTERN runs
# only the check files whose names match the shell pattern (and none of
# guest-test.sh's own). Files a check writes to $H/out in the guest land
# in IBTOOL_VM_OUT on the host when it is set. IBTOOL_VM_DEB names a .deb
# (make deb) that checks/60-deb.sh installs and removes in the guest.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:-bin/ibtool}")
timeout=${IBTOOL_VM_TIMEOUT:-1800}

img=$("$here/build-image.sh")
share=$(mktemp -d)
trap 'rm -rf "$share"' EXIT
cp "$bin" "$share/ibtool"
cp "$here/guest-test.sh" "$share/guest-test.sh"
mkdir -p "$share/checks" "$share/out"
cp "$here"/checks/*.sh "$share/checks/" 2>/dev/null || true
# examples/rdmawrite, when make test-vm built it (checks/47-rdmawrite.sh).
[ ! -x "$(dirname "$bin")/rdmawrite" ] || cp "$(dirname "$bin")/rdmawrite" "$share/rdmawrite"
# pkg/verbs' test binary, when make test-vm built it (checks/80-verbs.sh).
[ ! -x "$(dirname "$bin")/verbs.test" ] || cp "$(dirname "$bin")/verbs.test" "$share/verbs.test"
# rdma-core's test suite's runner and the coverage table (checks/81-pyverbs.sh).
cp "$here/pyverbs-run.py" "$here/verbs-coverage.py" "$here/verbs-coverage.tsv" "$share/"
# The Debian package, when make test-vm built one (checks/60-deb.sh).
[ -z "${IBTOOL_VM_DEB:-}" ] || cp "$IBTOOL_VM_DEB" "$share/ibtool.deb"
printf '%s\n' "${IBTOOL_VM_ONLY:-}" >"$share/only"

echo "vm: booting $img (tcg, watchdog ${timeout}s)" >&2
start=$SECONDS
status=0
timeout --foreground -k 10 "$timeout" qemu-system-x86_64 \
	-accel tcg -cpu max -m 1536 -smp 2 \
	-nographic -no-reboot -nic none \
	-kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
	-append "root=/dev/vda rw console=ttyS0 quiet panic=-1 init=/sbin/ibtool-vm-init" \
	-drive "file=$img/rootfs.img,format=raw,if=virtio,snapshot=on" \
	-virtfs "local,path=$share,mount_tag=host,security_model=none,id=host" \
	>"$share/console.log" 2>&1 || status=$?
echo "vm: guest ran $((SECONDS - start))s (qemu exit $status)" >&2
if [ ! -f "$share/guest.exit" ]; then
	echo "vm: the guest did not finish its checks; console:" >&2
	tail -40 "$share/console.log" >&2
	[ -f "$share/guest.log" ] && cat "$share/guest.log"
	exit 3
fi
cat "$share/guest.log"
if [ -n "${IBTOOL_VM_OUT:-}" ]; then
	mkdir -p "$IBTOOL_VM_OUT"
	cp -r "$share/out/." "$IBTOOL_VM_OUT/"
fi
[ "$(cat "$share/guest.exit")" = 0 ] || exit 1
