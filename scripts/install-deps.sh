#!/usr/bin/env bash
# Installs the Debian packages the bench needs (simulator, subnet manager,
# reference tools, the umad2sim shim, gcc with libc's headers to build the
# bench's RMPP layer, internal/simfabric/rmppshim, and Prometheus with
# promtool for the exporter's tests) when any is missing. On a fresh machine
# the package lists may be stale: when the install fails, update them once
# and try again. With arguments, installs those packages instead.
# bash-completion is for the completion tests (e2e).
#
# Prometheus' package would start a system server on :9090 (and pull in
# node_exporter on :9100 as a recommendation): the tests run their own
# servers on free ports with their own data directories, so the packages are
# installed without recommendations, with services kept from starting, and
# its service is stopped and disabled if an init system started it anyway.
set -euo pipefail

pkgs=(ibsim-utils libumad2sim0 opensm infiniband-diags ibverbs-utils libibverbs-dev pkg-config time gcc libc6-dev prometheus bash-completion rpm systemd ibutils rdmacm-utils)
# The bench's own list names everything it needs (gcc's one recommendation,
# libc6-dev, included); other callers (scripts/vm) rely on recommendations.
opts=(--no-install-recommends)
[ $# -eq 0 ] || { pkgs=("$@"); opts=(); }

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive

# With no policy of the machine's own, one that refuses every service start
# (exit 101) while the packages install; a machine's own is left alone.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\n# scripts/install-deps.sh: no service starts while the bench installs\nexit 101\n' | $sudo tee "$policy" >/dev/null
	$sudo chmod 755 "$policy"
	trap '$sudo rm -f "$policy"' EXIT
fi

echo "installing ${missing[*]}" >&2
if ! $sudo apt-get install -y -qq "${opts[@]}" "${missing[@]}" >/dev/null; then
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq "${opts[@]}" "${missing[@]}" >/dev/null
fi

# A policy of the machine's own may allow starts: keep the system
# Prometheus stopped and off at boot either way.
for p in "${missing[@]}"; do
	[ "$p" = prometheus ] || continue
	if [ -d /run/systemd/system ]; then
		$sudo systemctl disable --now prometheus.service >/dev/null 2>&1 || true
	elif [ -x /etc/init.d/prometheus ]; then
		$sudo /etc/init.d/prometheus stop >/dev/null 2>&1 || true
		$sudo update-rc.d prometheus disable >/dev/null 2>&1 || true
	fi
done
