#!/usr/bin/env bash
# Installs the Debian packages the bench needs (simulator, subnet manager,
# reference tools, the umad2sim shim, and gcc with libc's headers to build
# the bench's RMPP layer, internal/simfabric/rmppshim) when any is missing.
# On a fresh machine the package lists may be stale: when the install fails,
# update them once and try again. With arguments, installs those packages
# instead. bash-completion is for the completion tests (e2e).
set -euo pipefail

pkgs=(ibsim-utils libumad2sim0 opensm infiniband-diags ibverbs-utils libibverbs-dev pkg-config time gcc libc6-dev bash-completion)
[ $# -eq 0 ] || pkgs=("$@")

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
echo "installing ${missing[*]}" >&2
if ! $sudo apt-get install -y -qq "${missing[@]}" >/dev/null; then
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
