# rdma-core's own test suite (pyverbs, /opt/rdma-core-tests/tests in the
# guest) on the kernel's devices (sourced by guest-test.sh): its generic
# modules on Soft-RoCE (rxe0) and on Soft-iWARP (siw0, guest-test.sh's
# siw_dev_up), each test's result (pass, skip with pyverbs' reason, fail,
# error) one line in $H/out/pyverbs-DEV.tsv. Then the coverage table: one line per pyverbs
# test, its result, the Go test that scripts/vm/verbs-coverage.tsv maps it
# to and that test's result on the same device (80-verbs.sh's run), and the
# closing count. A mapped Go test that does not pass is a FAIL line.
PYV_SUITE=/opt/rdma-core-tests/tests
# Every generic module: the vendor ones (mlx5, efa) and CUDA are out. siw
# runs them all too: the whole suite takes seconds, and pyverbs itself
# skips what siw cannot do (its GID looks empty to the suite, so it runs no
# traffic there; siw has no UC or UD QPs and no AHs).
PYV_MODULES="test_device test_pd test_mr test_cq test_cq_events test_cqex
	test_qp test_qpex test_atomic test_odp test_addr test_parent_domain
	test_shared_pd test_relaxed_ordering test_fork test_flow test_rss_traffic
	test_tag_matching test_rdmacm"

# pyverbs_dev DEV MODULES: the suite's MODULES on DEV into
# $H/out/pyverbs-DEV.tsv; a test that hangs is written as timeout after
# 60 s and the run goes on with the next one.
pyverbs_dev() {
	local dev=$1 out=$H/out/pyverbs-$1.tsv t0 rc tries=0
	t0=$(date +%s)
	: >"$out"
	while :; do
		rc=0
		# shellcheck disable=SC2086 # one word per module
		python3 "$H/pyverbs-run.py" "$PYV_SUITE" "$out" --dev "$dev" --test-timeout 60 $2 \
			>>"/tmp/pyverbs-$dev.log" 2>&1 || rc=$?
		[ "$rc" -eq 3 ] && [ $tries -lt 10 ] || break
		tries=$((tries + 1))
	done
	cp "/tmp/pyverbs-$dev.log" "$H/out/" 2>/dev/null
	local n
	n=$(wc -l <"$out")
	if [ "$rc" -ne 0 ] || [ "$n" -eq 0 ]; then
		fail "pyverbs on $dev: exit $rc after $n tests"
		tail -20 "/tmp/pyverbs-$dev.log"
		return
	fi
	pass "pyverbs on $dev: $n tests in $(($(date +%s) - t0))s: $(cut -f2 "$out" | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')"
}

mkdir -p "$H/out"
if [ ! -f "$PYV_SUITE/run_tests.py" ]; then
	fail "pyverbs: rdma-core's test suite is not in the guest ($PYV_SUITE)"
else
	pyverbs_dev rxe0 "$PYV_MODULES"
	if siw_dev_up; then
		pyverbs_dev siw0 "$PYV_MODULES"
	else
		fail "pyverbs on siw: modprobe siw on $(uname -r): $(cat /tmp/siw.modprobe)"
	fi
fi

# The coverage table: pyverbs' results against the Go tests' (80-verbs.sh
# left their logs in $H/out).
step "verbs coverage (scripts/vm/verbs-coverage.tsv)"
cov_devs=""
for d in rxe0 siw0; do
	[ -s "$H/out/pyverbs-$d.tsv" ] && cov_devs="$cov_devs $d"
done
cov_rc=0
# shellcheck disable=SC2086 # one word per device
python3 "$H/verbs-coverage.py" "$H/verbs-coverage.tsv" "$H/out" $cov_devs \
	>/tmp/verbs-coverage.out 2>&1 || cov_rc=$?
cat /tmp/verbs-coverage.out
cp /tmp/verbs-coverage.out "$H/out/"
fails=$((fails + $(grep -c '^FAIL ' /tmp/verbs-coverage.out)))
if [ "$cov_rc" -ne 0 ] || ! grep -q '^verbs coverage: ' /tmp/verbs-coverage.out; then
	fail "verbs coverage: the table did not come out (exit $cov_rc)"
fi
