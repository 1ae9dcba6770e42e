#!/usr/bin/env bash
# make deb: packs an ibtool binary and ibtool-exporter into a Debian
# package that installs beside infiniband-diags and ibverbs-utils without a
# file conflict, and an .rpm of the same content, both from
# packaging/nfpm.yaml (scripts/mkpkg, goreleaser's nfpm).
#
#   scripts/mkdeb.sh [IBTOOL_BINARY [OUT_DIR]]   (default bin/ibtool, bin)
#
# Prints the path of the .deb (the .rpm is beside it). Layout:
#   /usr/bin/ibtool                         the binary
#   /usr/bin/ibtool-exporter                the exporter (IBTOOL_BINARY's
#                                           sibling; "ibtool exporter" runs it)
#   /usr/lib/ibtool/bin/TOOL -> ../../../bin/ibtool
#                                           a symlink per tool, in a directory
#                                           of its own: put it first in PATH to
#                                           run ibtool's tools by their names
#   /usr/lib/ibtool/share/man/man8/TOOL.8.gz
#                                           the tools' pages; man-db finds them
#                                           through that PATH entry (manpath(5)),
#                                           so `man perfquery` follows `perfquery`
#   /usr/share/man/man8/ibtool.8.gz, ibtool-exporter.8.gz
#   bash, zsh and fish completions for ibtool in their vendor directories
#   (bash's also under each tool's name)
#   /usr/lib/systemd/system/ibtool-exporter.service, /etc/default/ibtool-exporter
#                                           the exporter's unit (user ibtool-exporter,
#                                           group rdma: made at install)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-bin/ibtool}")
outdir=${2:-bin}
GO=${GO:-go}

# objdump reads the libc symbol versions the binary needs.
"$(dirname "$0")/install-deps.sh" binutils

# A tag vX.Y.Z gives X.Y.Z; otherwise a snapshot version that sorts by
# commit time and names the commit. Debian versions must start with a digit.
version() {
	local tag
	if tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
		echo "${tag#v}"
		return
	fi
	local when hash
	when=$(git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S 2>/dev/null || echo 0)
	hash=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
	local v="0.0~git$when.$hash"
	[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || v="$v+dirty"
	echo "$v"
}

# glibc_dep BINARY: the libc6 dependency of a cgo binary, from the newest
# GLIBC_ symbol version it needs (a static binary needs none).
glibc_dep() {
	local v
	v=$(objdump -T "$1" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
	[ -n "$v" ] && echo "libc6 (>= $v)"
}

ver=$(version)
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/usr/bin" "$root/usr/lib/ibtool/bin" \
	"$root/usr/lib/ibtool/share/man/man8" "$root/usr/share/man/man8" \
	"$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
	"$root/usr/share/fish/vendor_completions.d" "$root/usr/share/doc/ibtool"
install -m 0755 "$bin" "$root/usr/bin/ibtool"
exporter=$(dirname "$bin")/ibtool-exporter
[ -x "$exporter" ] || { echo "mkdeb: no $exporter (make build builds it)" >&2; exit 1; }
install -m 0755 "$exporter" "$root/usr/bin/ibtool-exporter"

# The tool names come from the binary's own registry.
mkdir "$work/links"
"$bin" links "$work/links" >/dev/null 2>&1
for l in "$work"/links/*; do
	ln -s ../../../bin/ibtool "$root/usr/lib/ibtool/bin/$(basename "$l")"
done

$GO run ./internal/mangen -out "$work/man"
for p in "$work"/man/*.8; do
	name=$(basename "$p")
	if [ "$name" = ibtool.8 ] || [ "$name" = ibtool-exporter.8 ]; then
		gzip -9n <"$p" >"$root/usr/share/man/man8/$name.gz"
	else
		gzip -9n <"$p" >"$root/usr/lib/ibtool/share/man/man8/$name.gz"
	fi
done

"$bin" completion bash >"$root/usr/share/bash-completion/completions/ibtool"
# bash-completion loads a command's script by the command's name: each tool
# name loads ibtool's, which completes the name only while PATH resolves it
# to ibtool (infiniband-diags' tools are never run for completions).
for l in "$work"/links/*; do
	ln -s ibtool "$root/usr/share/bash-completion/completions/$(basename "$l")"
done
"$bin" completion zsh >"$root/usr/share/zsh/vendor-completions/_ibtool"
"$bin" completion fish >"$root/usr/share/fish/vendor_completions.d/ibtool.fish"
mkdir "$root/usr/share/doc/ibtool/docs"
cp README.md "$root/usr/share/doc/ibtool/"
cp docs/*.md docs/*.json "$root/usr/share/doc/ibtool/docs/" 2>/dev/null || true
gzip -9n "$root"/usr/share/doc/ibtool/*.md "$root"/usr/share/doc/ibtool/docs/*.md
find "$root/usr" -type f -exec chmod go-w {} +

# The package's description is packaging/nfpm.yaml, for the .deb and the
# .rpm alike (scripts/mkpkg, goreleaser's nfpm).
mkdir -p "$outdir"
rm -f "$outdir"/ibtool_*_"$arch".deb "$outdir"/ibtool-*."$(uname -m)".rpm
deb=$outdir/ibtool_${ver}_${arch}.deb
rpmver=${ver//\~/_}
rpm=$outdir/ibtool-${rpmver}.$(uname -m).rpm
export IBTOOL_STAGE=$root IBTOOL_ARCH=$arch IBTOOL_VERSION=$ver IBTOOL_LIBC_DEP="$(glibc_dep "$bin" || true)"
$GO run ./scripts/mkpkg -format deb -out "$deb"
IBTOOL_VERSION=$rpmver $GO run ./scripts/mkpkg -format rpm -out "$rpm"
echo "mkdeb: also $rpm" >&2
echo "$deb"
