//go:build cgo && !noverbs

package verbs

import (
	"errors"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The tests in this file and the other integration_*_test.go files do
// what one test of rdma-core's own suite (pyverbs, tests/test_*.py) does,
// with pkg/verbs: scripts/vm/verbs-coverage.tsv maps each pyverbs test to
// its Go twin, and make test-vm runs both on the same devices.

// integrationDevice is the device list's entry for the device the test
// opened (Devices reads the attributes with ibv_query_device_ex).
func integrationDevice(t *testing.T, ctx *Context) Device {
	t.Helper()
	devs, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		if d.Name == ctx.Name() {
			return d
		}
	}
	t.Fatalf("%s is open but not in the device list", ctx.Name())
	return Device{}
}

// TestIntegrationDeviceList is pyverbs' DeviceTest.test_dev_list: the
// device list is not empty and has the device asked for.
func TestIntegrationDeviceList(t *testing.T) {
	ctx := integrationContext(t)
	names, err := DeviceNames()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Skip("No IB device found")
	}
	found := false
	for _, n := range names {
		found = found || n == ctx.Name()
	}
	if !found {
		t.Errorf("device list %v lacks %s", names, ctx.Name())
	}
}

// TestIntegrationOpenDevice is DeviceTest.test_open_dev: the device
// opens (a second context beside integrationContext's) and closes.
func TestIntegrationOpenDevice(t *testing.T) {
	name := integrationContext(t).Name()
	ctx, err := Open(name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	if err := ctx.Close(); err != nil {
		t.Errorf("closing %s: %v", name, err)
	}
}

// verifyDeviceAttr is pyverbs' verify_device_attr: the attributes it
// checks are set, on a device of transport tr.
func verifyDeviceAttr(t *testing.T, dev string, tr Transport, d DeviceAttr) {
	t.Helper()
	page := uint64(os.Getpagesize())
	a := d.Attr
	checks := []struct {
		what string
		ok   bool
	}{
		{"node GUID set", tr == TransportUnknown || d.NodeGUID != 0},
		{"system image GUID set", tr == TransportUnknown || d.SysImageGUID != 0},
		{"max MR size over a page", a.MaxMRSize > page},
		{"page size cap at least a page", a.PageSizeCap >= page},
		{"vendor ID set", d.VendorID != 0},
		{"max QP", a.MaxQP > 0},
		{"max QP WR", a.MaxQPWR > 0},
		{"max SGE", a.MaxSGE > 0},
		{"max SGE RD", a.MaxSGERd >= 0},
		{"max CQ", a.MaxCQ > 0},
		{"max CQE", a.MaxCQE > 0},
		{"max MR", a.MaxMR > 0},
		{"max PD", a.MaxPD > 0},
		// A channel adapter (InfiniBand transport: IB and RoCE) has P_Keys.
		{"max P_Keys on a CA", tr != TransportIB || a.MaxPKeys > 0},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %s does not hold: %+v", dev, c.what, d)
		}
	}
}

// TestIntegrationQueryDevice is DeviceTest.test_query_device_ex: the
// attributes pyverbs' verify_device_attr checks are set.
func TestIntegrationQueryDevice(t *testing.T) {
	d := integrationDevice(t, integrationContext(t))
	verifyDeviceAttr(t, d.Name, d.Transport, DeviceAttr{NodeGUID: d.NodeGUID, SysImageGUID: d.SysImageGUID,
		VendorID: d.VendorID, Attr: d.Attr})
}

// TestIntegrationQueryDeviceLegacy is DeviceTest.test_query_device: the
// legacy ibv_query_device's attributes pass verify_device_attr, and equal
// what ibv_query_device_ex reads (QueryDevice, and the device list's
// identity).
func TestIntegrationQueryDeviceLegacy(t *testing.T) {
	ctx := integrationContext(t)
	d := integrationDevice(t, ctx)
	got, err := ctx.QueryDeviceLegacy()
	ok(t, err)
	verifyDeviceAttr(t, d.Name, d.Transport, got)
	ex, err := ctx.QueryDevice()
	ok(t, err)
	want := DeviceAttr{FWVer: d.FWVer, NodeGUID: d.NodeGUID, SysImageGUID: d.SysImageGUID,
		VendorID: d.VendorID, VendorPartID: d.VendorPartID, HWVer: d.HWVer, Attr: legacyPart(ex)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: ibv_query_device and ibv_query_device_ex differ (-ex +legacy):\n%s", d.Name, diff)
	}
}

// TestIntegrationQueryGID is DeviceTest.test_query_gid: GID index 0 of
// the port reads when the port has a GID table.
func TestIntegrationQueryGID(t *testing.T) {
	ctx := integrationContext(t)
	p, err := ctx.QueryPort(1)
	if err != nil {
		t.Fatal(err)
	}
	if p.GIDTblLen > 0 {
		if _, err := ctx.QueryGID(1, 0); err != nil {
			t.Error(err)
		}
	}
}

// TestIntegrationQueryPort is DeviceTest.test_query_port: every port
// attribute pyverbs' verify_port_attr translates has a name.
func TestIntegrationQueryPort(t *testing.T) {
	ctx := integrationContext(t)
	p, err := ctx.QueryPort(1)
	if err != nil {
		t.Fatal(err)
	}
	widths := map[uint8]bool{1: true, 2: true, 4: true, 8: true, 16: true}
	speeds := map[uint8]bool{1: true, 2: true, 4: true, 8: true, 16: true, 32: true, 64: true, 128: true}
	checks := []struct {
		what string
		ok   bool
	}{
		// pyverbs hands the logical state to phys_state_to_str, which
		// names 1 to 7.
		{"state", p.State >= 1 && p.State <= 7},
		{"max MTU", p.MaxMTU.Bytes() != 0},
		{"active MTU", p.ActiveMTU.Bytes() != 0},
		{"active width", widths[p.ActiveWidth]},
		{"active speed", speeds[p.ActiveSpeed]},
		{"link layer", p.LinkLayer >= LinkLayerUnspecified && p.LinkLayer <= LinkLayerEthernet},
		{"max message size over 4 KiB", p.MaxMsgSz > 0x1000},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s port 1: %s is not valid: %+v", ctx.Name(), c.what, p)
		}
	}
}

// TestIntegrationQueryPortBadFlow is DeviceTest.test_query_port_bad_flow:
// a port past the device's last fails with EINVAL.
func TestIntegrationQueryPortBadFlow(t *testing.T) {
	ctx := integrationContext(t)
	d := integrationDevice(t, ctx)
	port := d.PhysPortCnt + 1 + rand.IntN(10)
	_, err := ctx.QueryPort(port)
	var ve *VerbError
	if !errors.As(err, &ve) || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("QueryPort(%d) of %d ports: error %v, want a VerbError wrapping EINVAL", port, d.PhysPortCnt, err)
	}
}

// TestIntegrationQueryPKey is DeviceTest.test_query_pkey: P_Key index 0
// of port 1 reads on a channel adapter (an InfiniBand or RoCE device).
// pyverbs asks nothing of an iWARP RNIC, and passes; so does this.
// rxe's one P_Key is the default, full-membership 0xffff.
func TestIntegrationQueryPKey(t *testing.T) {
	ctx := integrationContext(t)
	if d := integrationDevice(t, ctx); d.Transport != TransportIB {
		t.Logf("%s is an %s device, not a channel adapter: no P_Key to read", ctx.Name(), d.Transport)
		return
	}
	pk, err := ctx.QueryPKey(1, 0)
	ok(t, err)
	if pk&0x7fff == 0 {
		t.Errorf("%s port 1 P_Key 0 is %#x: not a valid P_Key", ctx.Name(), pk)
	}
	t.Logf("%s port 1 P_Key 0: %#x", ctx.Name(), pk)
}

// TestIntegrationPhysPortCntEx is DeviceTest.test_phys_port_cnt_ex: the
// extended attributes' port count equals ibv_device_attr's, which is 255
// when there are more.
func TestIntegrationPhysPortCntEx(t *testing.T) {
	ctx := integrationContext(t)
	a, err := ctx.QueryDevice()
	ok(t, err)
	want := int(a.PhysPortCntEx)
	if a.PhysPortCntEx > 255 {
		want = 255
	}
	if a.PhysPortCnt != want {
		t.Errorf("%s: phys_port_cnt %d, phys_port_cnt_ex %d", ctx.Name(), a.PhysPortCnt, a.PhysPortCntEx)
	}
}
