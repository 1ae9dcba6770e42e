# pkg/verbs' own tests on the kernel's devices (sourced by guest-test.sh):
# make test-vm builds the package's test binary (bin/verbs.test) and this
# runs its TestIntegration* tests once per device (rxe0, and siw0 from
# guest-test.sh's siw_dev_up), IBTOOL_VERBS_DEVICE naming it, one PASS or
# FAIL line per Go test (and subtest) and device. A test that skips (the
# device lacks what it needs) prints its reason.
verbs_go() { # DEVICE: run the integration tests on DEVICE
	local dev=$1 log=/tmp/verbs-go-$1.log rc=0
	IBTOOL_VERBS_DEVICE=$dev timeout 300 "$H/verbs.test" -test.run '^TestIntegration' -test.v \
		>"$log" 2>&1 || rc=$?
	cp "$log" "$H/out/" 2>/dev/null
	awk -v dev="$dev" '
		/^=== RUN/ { cur = $3 }
		/^ +[^ ]*_test\.go:[0-9]+: / { why[cur] = $0; sub(/^ +[^ ]*: /, "", why[cur]) }
		/^ *--- PASS: TestIntegration/ { print "PASS go " $3 " on " dev }
		/^ *--- FAIL: TestIntegration/ { print "FAIL go " $3 " on " dev }
		/^ *--- SKIP: TestIntegration/ { print "SKIP go " $3 " on " dev ": " why[$3] }
	' "$log"
	local failed # top-level tests only: a failing subtest fails its parent too
	failed=$(grep -c '^--- FAIL: TestIntegration' "$log")
	fails=$((fails + failed))
	if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		fail "go verbs tests on $dev (exit $rc, no test failed: the binary did not finish)"
		tail -20 "$log"
	fi
}
mkdir -p "$H/out"
if [ ! -x "$H/verbs.test" ]; then
	fail "pkg/verbs tests: not shared with the guest (make test-vm builds bin/verbs.test)"
else
	verbs_go rxe0
	if siw_dev_up; then
		verbs_go siw0
	else
		fail "go verbs tests on siw: modprobe siw on $(uname -r): $(cat /tmp/siw.modprobe)"
	fi
fi
