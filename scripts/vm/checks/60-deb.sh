# The Debian package (make deb) in the guest, beside rdma-core's
# ibverbs-utils and infiniband-diags (sourced by guest-test.sh; run.sh
# shares the .deb as $H/ibtool.deb when make test-vm built one). It must
# install without a file conflict, leave the C tools where they were, run
# ibstat and ibv_devinfo from its own directory with the same output as
# rdma-core's, and remove cleanly.
if [ -f "$H/ibtool.deb" ]; then
	step "the Debian package"
	if dpkg -i "$H/ibtool.deb" >/tmp/deb.log 2>&1; then
		pass "dpkg -i ibtool.deb"
	else
		fail "dpkg -i ibtool.deb"
		tail -10 /tmp/deb.log
	fi
	# deb_same NAME REF_CMD DEB_CMD ARGS...: the C tool and the package's
	# symlink print the same and exit the same.
	deb_same() {
		name=$1
		ref=$2
		got=$3
		shift 3
		"$ref" "$@" >/tmp/ref.out 2>/dev/null
		rs=$?
		"$got" "$@" >/tmp/got.out 2>/dev/null
		gs=$?
		if [ $rs -eq $gs ] && cmp -s /tmp/ref.out /tmp/got.out; then
			pass "$name"
		else
			fail "$name (exit $rs vs $gs)"
			diff -u /tmp/ref.out /tmp/got.out | head -20
		fi
	}
	deb_same "deb: ibstat" /usr/sbin/ibstat /usr/lib/ibtool/bin/ibstat
	deb_same "deb: ibstat rxe0 1" /usr/sbin/ibstat /usr/lib/ibtool/bin/ibstat rxe0 1
	deb_same "deb: ibv_devinfo" /usr/bin/ibv_devinfo /usr/lib/ibtool/bin/ibv_devinfo
	deb_same "deb: ibv_devinfo -v" /usr/bin/ibv_devinfo /usr/lib/ibtool/bin/ibv_devinfo -v
	# With the package's directory first in PATH the names are ibtool's.
	if [ "$(PATH=/usr/lib/ibtool/bin:$PATH command -v ibstat)" = /usr/lib/ibtool/bin/ibstat ] &&
		[ "$(readlink -f /usr/lib/ibtool/bin/ibstat)" = /usr/bin/ibtool ]; then
		pass "deb: PATH=/usr/lib/ibtool/bin picks ibtool's ibstat"
	else
		fail "deb: PATH=/usr/lib/ibtool/bin picks ibtool's ibstat"
	fi
	if /usr/bin/ibtool --version >/tmp/deb.out 2>&1 && [ -s /usr/share/bash-completion/completions/ibtool ] &&
		[ -f /usr/lib/ibtool/share/man/man8/perfquery.8.gz ] && [ -f /usr/share/man/man8/ibtool.8.gz ] &&
		[ -f /usr/share/man/man8/ibtool-exporter.8.gz ]; then
		pass "deb: ibtool --version, completions and man pages: $(cat /tmp/deb.out)"
	else
		fail "deb: ibtool --version, completions and man pages"
		cat /tmp/deb.out
	fi
	# infiniband-diags' files are untouched: its binaries are its own.
	if dpkg -S /usr/sbin/ibstat 2>/dev/null | grep -q '^infiniband-diags:' &&
		[ "$(readlink -f /usr/sbin/ibstat)" = /usr/sbin/ibstat ]; then
		pass "deb: infiniband-diags' ibstat left alone"
	else
		fail "deb: infiniband-diags' ibstat left alone"
	fi
	if dpkg -r ibtool >/tmp/deb.log 2>&1 && [ ! -e /usr/bin/ibtool ] && [ ! -e /usr/lib/ibtool ] &&
		[ -x /usr/sbin/ibstat ]; then
		pass "dpkg -r ibtool"
	else
		fail "dpkg -r ibtool"
		tail -5 /tmp/deb.log
	fi
fi
