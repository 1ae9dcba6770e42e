package verbs

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// measureABI builds and runs testdata/abi/measure.c with the C compiler
// cgo uses, over ibt_verbs_abi.h or (real) over <infiniband/verbs.h>, and
// returns its table in order. It compiles in the test, not through cgo,
// because the go command does not rebuild a package when a header outside
// its directory changes: a cgo package measuring ../ibt_verbs_abi.h would
// go stale. Without a C compiler, or without the header (real), it skips,
// or fails under IBTOOL_REQUIRE_BENCH (make test: its machine has both).
func measureABI(t *testing.T, real bool) (names []string, values map[string]int64) {
	t.Helper()
	skip := func(why string) {
		t.Helper()
		if os.Getenv("IBTOOL_REQUIRE_BENCH") != "" {
			t.Fatalf("%s: the verbs ABI was not checked", why)
		}
		t.Skip(why)
	}
	cc := "cc"
	if out, err := exec.Command("go", "env", "CC").Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		cc = string(bytes.TrimSpace(out))
	}
	if _, err := exec.LookPath(strings.Fields(cc)[0]); err != nil {
		skip("no C compiler (" + cc + ")")
	}
	// Read what the program is built from, so that go test's cache sees
	// a change to any of them.
	for _, f := range []string{"ibt_verbs_abi.h", "testdata/abi/layout.h", "testdata/abi/measure.c"} {
		if _, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "measure")
	args := append(strings.Fields(cc)[1:], "-I.", "-o", bin, "testdata/abi/measure.c")
	if real {
		args = append([]string{"-DIBT_REAL"}, args...)
	}
	if out, err := exec.Command(strings.Fields(cc)[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	out, err := exec.Command(bin).Output()
	var ee *exec.ExitError
	if real && errors.As(err, &ee) && ee.ExitCode() == 3 {
		skip("<infiniband/verbs.h> is not installed (libibverbs-dev)")
	}
	if err != nil {
		t.Fatalf("measure: %v", err)
	}
	values = map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), "\t")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			t.Fatalf("measure printed %q", sc.Text())
		}
		names = append(names, name)
		values[name] = n
	}
	return names, values
}

// TestABIMatchesSystemHeader checks ibt_verbs_abi.h against libibverbs'
// <infiniband/verbs.h>: every struct's size, every field's offset and
// size and every constant's value the same, except that a struct the
// library fills up to a given size ("sizeof<=") and verbs_context's ops'
// distances from its end ("sizeof-offsetof") may be larger in a newer
// header.
func TestABIMatchesSystemHeader(t *testing.T) {
	real, got := measureABI(t, true)
	names, mine := measureABI(t, false)
	if len(names) != len(real) {
		t.Fatalf("the tables differ in length: %d against %d", len(names), len(real))
	}
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			t.Errorf("layout.h lists %s twice", name)
		}
		seen[name] = true
		grows := strings.HasPrefix(name, "sizeof<=(") || strings.HasPrefix(name, "sizeof-offsetof(")
		if m, r := mine[name], got[name]; m != r && !(grows && m < r) {
			t.Errorf("%s: ibt_verbs_abi.h has %d, <infiniband/verbs.h> %d", name, m, r)
		}
	}
	t.Logf("%d sizes, offsets and values match", len(names))
}

// TestGoConstantsMatchSystemHeader checks the Go constants that cross
// into C as plain numbers (or come back as them) against
// <infiniband/verbs.h>.
func TestGoConstantsMatchSystemHeader(t *testing.T) {
	_, real := measureABI(t, true)
	goValues := map[string]int64{
		"IBV_TRANSPORT_UNKNOWN": int64(TransportUnknown), "IBV_TRANSPORT_IB": int64(TransportIB),
		"IBV_TRANSPORT_IWARP": int64(TransportIWARP), "IBV_TRANSPORT_USNIC": int64(TransportUSNIC),
		"IBV_TRANSPORT_USNIC_UDP": int64(TransportUSNICUDP), "IBV_TRANSPORT_UNSPECIFIED": int64(TransportUnspecified),
		"IBV_LINK_LAYER_UNSPECIFIED": int64(LinkLayerUnspecified), "IBV_LINK_LAYER_INFINIBAND": int64(LinkLayerInfiniBand),
		"IBV_LINK_LAYER_ETHERNET": int64(LinkLayerEthernet),
		"IBV_PORT_NOP":            int64(PortStateNop), "IBV_PORT_DOWN": int64(PortStateDown), "IBV_PORT_INIT": int64(PortStateInit),
		"IBV_PORT_ARMED": int64(PortStateArmed), "IBV_PORT_ACTIVE": int64(PortStateActive),
		"IBV_PORT_ACTIVE_DEFER": int64(PortStateActiveDefer),
		"IBV_MTU_256":           int64(MTU256), "IBV_MTU_512": int64(MTU512), "IBV_MTU_1024": int64(MTU1024),
		"IBV_MTU_2048": int64(MTU2048), "IBV_MTU_4096": int64(MTU4096),
		"IBV_QPS_RESET": int64(QPStateReset), "IBV_QPS_INIT": int64(QPStateInit), "IBV_QPS_RTR": int64(QPStateRTR),
		"IBV_QPS_RTS": int64(QPStateRTS), "IBV_QPS_SQD": int64(QPStateSQD), "IBV_QPS_SQE": int64(QPStateSQE),
		"IBV_QPS_ERR": int64(QPStateErr),
		"IBV_QPT_RC":  int64(QPTypeRC), "IBV_QPT_UC": int64(QPTypeUC), "IBV_QPT_UD": int64(QPTypeUD),
		"IBV_QPT_XRC_SEND": int64(QPTypeXRCSend), "IBV_QPT_XRC_RECV": int64(QPTypeXRCRecv),
		"IBV_WR_RDMA_WRITE": int64(OpRDMAWrite), "IBV_WR_RDMA_WRITE_WITH_IMM": int64(OpRDMAWriteImm),
		"IBV_WR_SEND": int64(OpSend), "IBV_WR_SEND_WITH_IMM": int64(OpSendImm), "IBV_WR_RDMA_READ": int64(OpRDMARead),
		"IBV_SEND_SIGNALED": int64(sendSignaled), "IBV_SEND_SOLICITED": int64(sendSolicited),
		"IBV_SEND_INLINE":        int64(sendInline),
		"IBV_ACCESS_LOCAL_WRITE": int64(AccessLocalWrite), "IBV_ACCESS_REMOTE_WRITE": int64(AccessRemoteWrite),
		"IBV_ACCESS_REMOTE_READ": int64(AccessRemoteRead), "IBV_ACCESS_REMOTE_ATOMIC": int64(AccessRemoteAtomic),
		"IBV_ACCESS_ON_DEMAND": int64(AccessOnDemand),
		"IBV_WC_SEND":          int64(WCSend), "IBV_WC_RDMA_WRITE": int64(WCRDMAWrite), "IBV_WC_RDMA_READ": int64(WCRDMARead),
		"IBV_WC_RECV": int64(WCRecv), "IBV_WC_RECV_RDMA_WITH_IMM": int64(WCRecvRDMAWithImm),
		"IBV_WC_SUCCESS": int64(WCSuccess), "IBV_WC_TM_RNDV_INCOMPLETE": int64(WCTMRndvIncomplete),
		"IBV_EVENT_CQ_ERR": int64(EventCQErr), "IBV_EVENT_WQ_FATAL": int64(EventWQFatal),
		"IBV_GID_TYPE_IB": GIDTypeIBRoCEv1,
	}
	// The iota runs between the ends checked above must have no gaps.
	for i, name := range eventNames {
		goValues[name] = int64(i)
	}
	for name, g := range goValues {
		r, ok := real[name]
		if !ok {
			t.Errorf("%s is not in layout.h's table", name)
			continue
		}
		if g != r {
			t.Errorf("%s: Go has %d, <infiniband/verbs.h> %d", name, g, r)
		}
	}
	if n := len(wcStatusText); int64(n-1) != real["IBV_WC_TM_RNDV_INCOMPLETE"] {
		t.Errorf("wcStatusText has %d statuses, <infiniband/verbs.h> %d", n, real["IBV_WC_TM_RNDV_INCOMPLETE"]+1)
	}
}
