package umad

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// testFS is a sysfs tree with umad0 and umad1 on ports 1 and 2 of mlx5_0
// and umad2 on port 1 of mlx5_1, and abi as abi_version (none if empty).
func testFS(abi string) *rdma.FS {
	m := fstest.MapFS{
		"class/infiniband_mad/umad0/ibdev": {Data: []byte("mlx5_0\n")},
		"class/infiniband_mad/umad0/port":  {Data: []byte("1\n")},
		"class/infiniband_mad/umad1/ibdev": {Data: []byte("mlx5_0\n")},
		"class/infiniband_mad/umad1/port":  {Data: []byte("2\n")},
		"class/infiniband_mad/umad2/ibdev": {Data: []byte("mlx5_1\n")},
		"class/infiniband_mad/umad2/port":  {Data: []byte("1\n")},
	}
	if abi != "" {
		m["class/infiniband_mad/abi_version"] = &fstest.MapFile{Data: []byte(abi + "\n")}
	}
	return rdma.NewFS(m, "/sys")
}

// openFake opens mlx5_0 port 1 on f and closes it when the test ends.
func openFake(t *testing.T, f *fakeSys, opts Options) *Port {
	t.Helper()
	opts.Sys = f
	p, err := Open(context.Background(), testFS("5"), "mlx5_0", 1, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// unhex decodes hex digits, ignoring white space.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// littleEndian skips tests whose expected bytes hold host-order fields
// written for a little-endian host.
func littleEndian(t *testing.T) {
	t.Helper()
	if hostOrder.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected frames are written for a little-endian host")
	}
}

// testMAD returns a MAD of class and version with method Get, TID
// 0x12345678, attribute 0x15 and numbered data bytes.
func testMAD(class mad.Class, version uint8) []byte {
	m := make([]byte, mad.Size)
	h := mad.Header{BaseVersion: 1, MgmtClass: class, ClassVersion: version, Method: mad.MethodGet, TID: 0x12345678, AttrID: 0x15}
	h.MarshalTo(m)
	for i := mad.HeaderLen; i < len(m); i++ {
		m[i] = byte(i)
	}
	return m
}

// frame joins a header given in hex and a MAD.
func frame(t testing.TB, hdr string, m []byte) []byte {
	t.Helper()
	h := unhex(t, hdr)
	if len(h) != HeaderLen {
		t.Fatalf("test header of %d bytes", len(h))
	}
	return append(h, m...)
}

// regArg is a registration request in hex with the given method mask and
// qpn, class, version, OUI, RMPP version bytes.
func regArg(t testing.TB, mask, tail string) []byte {
	t.Helper()
	return unhex(t, "00000000"+mask+tail+"00")
}

const noMethods = "00000000 00000000 00000000 00000000"

// waitFor polls cond until it holds or a second passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (f *fakeSys) pollCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.polls
}

// TestLayout checks the offsets and sizes against Go mirrors of the
// kernel's structs, which have no implicit padding on any architecture.
func TestLayout(t *testing.T) {
	type ibUserMadHdr struct {
		ID, Status, TimeoutMS, Retries, Length uint32
		QPN, QKey                              uint32
		LID                                    uint16
		SL, PathBits, GRHPresent, GIDIndex     uint8
		HopLimit, TrafficClass                 uint8
		GID                                    [16]uint8
		FlowLabel                              uint32
		PKeyIndex                              uint16
		Reserved                               [6]uint8
	}
	type ibUserMadRegReq struct {
		ID                  uint32
		MethodMask          [4]uint32
		QPN, Class, Version uint8
		OUI                 [3]uint8
		RMPPVersion         uint8
	}
	var h ibUserMadHdr
	var r ibUserMadRegReq
	got := map[string]uintptr{
		"hdr": unsafe.Sizeof(h), "id": unsafe.Offsetof(h.ID), "status": unsafe.Offsetof(h.Status),
		"timeout_ms": unsafe.Offsetof(h.TimeoutMS), "retries": unsafe.Offsetof(h.Retries),
		"length": unsafe.Offsetof(h.Length), "qpn": unsafe.Offsetof(h.QPN), "qkey": unsafe.Offsetof(h.QKey),
		"lid": unsafe.Offsetof(h.LID), "sl": unsafe.Offsetof(h.SL), "path_bits": unsafe.Offsetof(h.PathBits),
		"grh_present": unsafe.Offsetof(h.GRHPresent), "gid_index": unsafe.Offsetof(h.GIDIndex),
		"hop_limit": unsafe.Offsetof(h.HopLimit), "traffic_class": unsafe.Offsetof(h.TrafficClass),
		"gid": unsafe.Offsetof(h.GID), "flow_label": unsafe.Offsetof(h.FlowLabel),
		"pkey_index": unsafe.Offsetof(h.PKeyIndex),
		"reg_req":    unsafe.Sizeof(r), "reg.id": unsafe.Offsetof(r.ID), "reg.method_mask": unsafe.Offsetof(r.MethodMask),
		"reg.qpn": unsafe.Offsetof(r.QPN), "reg.mgmt_class": unsafe.Offsetof(r.Class),
		"reg.mgmt_class_version": unsafe.Offsetof(r.Version), "reg.oui": unsafe.Offsetof(r.OUI),
		"reg.rmpp_version": unsafe.Offsetof(r.RMPPVersion),
	}
	want := map[string]uintptr{
		"hdr": HeaderLen, "id": offAgentID, "status": offStatus, "timeout_ms": offTimeoutMS,
		"retries": offRetries, "length": offLength, "qpn": offQPN, "qkey": offQKey, "lid": offLID,
		"sl": offSL, "path_bits": offPathBits, "grh_present": offGRHPresent, "gid_index": offGIDIndex,
		"hop_limit": offHopLimit, "traffic_class": offTrafficClass, "gid": offGID,
		"flow_label": offFlowLabel, "pkey_index": offPKeyIndex,
		"reg_req": regReqLen, "reg.id": regOffID, "reg.method_mask": regOffMask, "reg.qpn": regOffQPN,
		"reg.mgmt_class": regOffClass, "reg.mgmt_class_version": regOffVersion, "reg.oui": regOffOUI,
		"reg.rmpp_version": regOffRMPP,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layout (-want +got):\n%s", diff)
	}
}

func TestIoctlNumbers(t *testing.T) {
	switch runtime.GOARCH {
	case "ppc64", "ppc64le", "mips", "mipsle", "mips64", "mips64le":
		t.Skipf("the literal numbers are those of the generic _IOC layout, not %s's", runtime.GOARCH)
	}
	got := []uint{ioctlRegisterAgent, ioctlUnregisterAgent, ioctlEnablePKey}
	want := []uint{0xc01c1b01, 0x40041b02, 0x1b03}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ioctl requests (-want +got):\n%s", diff)
	}
}

func TestOpenRegistersAgents(t *testing.T) {
	littleEndian(t)
	f := newFakeSys()
	f.nextID = 3
	p := openFake(t, f, Options{Agents: []Agent{
		{Class: mad.ClassSMIDirect, ClassVersion: 1},
		{Class: 0x32, ClassVersion: 1, Methods: []mad.Method{mad.MethodGet, mad.MethodSet, mad.MethodGetTable}, RMPPVersion: 1},
		{Class: mad.ClassSA, ClassVersion: 2, RMPPVersion: 1, OUI: [3]byte{0x00, 0x02, 0xc9}},
	}})
	if got, want := f.opened, []string{"/dev/infiniband/umad0"}; !cmp.Equal(want, got) {
		t.Errorf("opened %q, want %q", got, want)
	}
	if want := unix.O_RDWR | unix.O_NONBLOCK | unix.O_CLOEXEC; f.flags != want {
		t.Errorf("open flags %#x, want %#x", f.flags, want)
	}
	if got, want := p.LocalPort(), (mad.LocalPort{Device: "mlx5_0", Port: 1}); got != want {
		t.Errorf("LocalPort() = %+v, want %+v", got, want)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	want := []ioctlCall{
		{Req: ioctlEnablePKey},
		{Req: ioctlRegisterAgent, Arg: regArg(t, noMethods, "00 81 01 001405 00")},
		{Req: ioctlRegisterAgent, Arg: regArg(t, "06000400 00000000 00000000 00000000", "01 32 01 001405 01")},
		{Req: ioctlRegisterAgent, Arg: regArg(t, noMethods, "01 03 02 0002c9 01")},
		{Req: ioctlUnregisterAgent, Arg: unhex(t, "03000000")},
		{Req: ioctlUnregisterAgent, Arg: unhex(t, "04000000")},
		{Req: ioctlUnregisterAgent, Arg: unhex(t, "05000000")},
	}
	if diff := cmp.Diff(want, f.ioctls); diff != "" {
		t.Errorf("ioctls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{fakeUmadFD, fakeEventFD}, f.closed); diff != "" {
		t.Errorf("closed descriptors (-want +got):\n%s", diff)
	}
}

func TestOpenDevice(t *testing.T) {
	tests := []struct {
		dev  string
		port int
		path string
		want mad.LocalPort
	}{
		{"", 0, "/dev/infiniband/umad0", mad.LocalPort{Device: "mlx5_0", Port: 1}},
		{"", 2, "/dev/infiniband/umad1", mad.LocalPort{Device: "mlx5_0", Port: 2}},
		{"mlx5_0", 2, "/dev/infiniband/umad1", mad.LocalPort{Device: "mlx5_0", Port: 2}},
		{"mlx5_1", 1, "/dev/infiniband/umad2", mad.LocalPort{Device: "mlx5_1", Port: 1}},
	}
	for _, tt := range tests {
		f := newFakeSys()
		p, err := Open(context.Background(), testFS("5"), tt.dev, tt.port, Options{Sys: f})
		if err != nil {
			t.Errorf("Open(%q, %d): %v", tt.dev, tt.port, err)
			continue
		}
		if p.Device().DevPath() != tt.path || f.opened[0] != tt.path || p.LocalPort() != tt.want {
			t.Errorf("Open(%q, %d) opened %s (%s) for %+v, want %s for %+v", tt.dev, tt.port, f.opened[0], p.Device().DevPath(), p.LocalPort(), tt.path, tt.want)
		}
		p.Close()
	}
}

func TestOpenErrors(t *testing.T) {
	noDevices := rdma.NewFS(fstest.MapFS{"class/infiniband_mad/abi_version": {Data: []byte("5\n")}}, "/sys")
	smiDR := Agent{Class: mad.ClassSMIDirect, ClassVersion: 1}
	sa := Agent{Class: mad.ClassSA, ClassVersion: 2}
	tests := []struct {
		name       string
		fsys       *rdma.FS
		dev        string
		port       int
		agents     []Agent
		cancelled  bool
		setup      func(*fakeSys)
		wantErr    string
		wantIs     []error
		wantIoctls []uint
		wantClosed []int
	}{
		{name: "context cancelled", cancelled: true, wantErr: "context canceled", wantIs: []error{context.Canceled}},
		{name: "no ABI version", fsys: testFS(""),
			wantErr: "can't read the user MAD ABI version (is the ib_umad module loaded?): open /sys/class/infiniband_mad/abi_version: file does not exist",
			wantIs:  []error{fs.ErrNotExist}},
		{name: "ABI 4", fsys: testFS("4"),
			wantErr: "/sys/class/infiniband_mad/abi_version: the kernel speaks user MAD ABI version 4; ibtool speaks only version 5"},
		{name: "ABI 6", fsys: testFS("6"),
			wantErr: "/sys/class/infiniband_mad/abi_version: the kernel speaks user MAD ABI version 6; ibtool speaks only version 5"},
		{name: "unknown device", dev: "mlx5_9", port: 1,
			wantErr: "no umad device for mlx5_9 port 1 under /sys/class/infiniband_mad: file does not exist",
			wantIs:  []error{fs.ErrNotExist}},
		{name: "no devices", fsys: noDevices, dev: "-", port: 0,
			wantErr: "no umad devices under /sys/class/infiniband_mad: file does not exist",
			wantIs:  []error{fs.ErrNotExist}},
		{name: "no device for the port", dev: "-", port: 3,
			wantErr: "no umad device for port 3 under /sys/class/infiniband_mad: file does not exist",
			wantIs:  []error{fs.ErrNotExist}},
		{name: "response method", agents: []Agent{{Class: mad.ClassSA, ClassVersion: 2, Methods: []mad.Method{mad.MethodGetResp}}},
			wantErr: "agent for SA version 2: method GetResp is a response; a server agent receives requests"},
		{name: "two agents for a class", agents: []Agent{smiDR, sa, smiDR},
			wantErr: "two agents for SMI-DR version 1"},
		{name: "open EACCES", setup: func(f *fakeSys) { f.openErr = syscall.EACCES },
			wantErr: "open /dev/infiniband/umad0: permission denied; run as root or grant access to /dev/infiniband/umad0",
			wantIs:  []error{os.ErrPermission, syscall.EACCES}},
		{name: "open EPERM", setup: func(f *fakeSys) { f.openErr = syscall.EPERM },
			wantErr: "open /dev/infiniband/umad0: operation not permitted; run as root or grant access to /dev/infiniband/umad0",
			wantIs:  []error{os.ErrPermission, syscall.EPERM}},
		{name: "open ENOENT", setup: func(f *fakeSys) { f.openErr = syscall.ENOENT },
			wantErr: "open /dev/infiniband/umad0: no such file or directory",
			wantIs:  []error{os.ErrNotExist, syscall.ENOENT}},
		{name: "open ENODEV", setup: func(f *fakeSys) { f.openErr = syscall.ENODEV },
			wantErr: "open /dev/infiniband/umad0: no such device",
			wantIs:  []error{os.ErrNotExist, syscall.ENODEV}},
		{name: "enable P_Key index EINVAL", setup: func(f *fakeSys) { f.pkeyErr = syscall.EINVAL },
			wantErr:    "ioctl IB_USER_MAD_ENABLE_PKEY /dev/infiniband/umad0: invalid argument",
			wantIs:     []error{syscall.EINVAL},
			wantIoctls: []uint{ioctlEnablePKey}, wantClosed: []int{fakeUmadFD}},
		{name: "eventfd EMFILE", setup: func(f *fakeSys) { f.efdErr = syscall.EMFILE },
			wantErr:    "eventfd for /dev/infiniband/umad0: too many open files",
			wantIs:     []error{syscall.EMFILE},
			wantIoctls: []uint{ioctlEnablePKey}, wantClosed: []int{fakeUmadFD}},
		{name: "register EINVAL", agents: []Agent{smiDR, sa}, setup: func(f *fakeSys) { f.regErr = syscall.EINVAL },
			wantErr:    "registering a MAD agent for SMI-DR version 1: ioctl IB_USER_MAD_REGISTER_AGENT /dev/infiniband/umad0: invalid argument",
			wantIs:     []error{syscall.EINVAL},
			wantIoctls: []uint{ioctlEnablePKey, ioctlRegisterAgent}, wantClosed: []int{fakeUmadFD, fakeEventFD}},
		{name: "second register EINVAL", agents: []Agent{smiDR, sa}, setup: func(f *fakeSys) { f.regErr, f.regOK = syscall.EINVAL, 1 },
			wantErr:    "registering a MAD agent for SA version 2: ioctl IB_USER_MAD_REGISTER_AGENT /dev/infiniband/umad0: invalid argument",
			wantIs:     []error{syscall.EINVAL},
			wantIoctls: []uint{ioctlEnablePKey, ioctlRegisterAgent, ioctlRegisterAgent, ioctlUnregisterAgent},
			wantClosed: []int{fakeUmadFD, fakeEventFD}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSys()
			if tt.setup != nil {
				tt.setup(f)
			}
			fsys, dev, port := tt.fsys, tt.dev, tt.port
			if fsys == nil {
				fsys = testFS("5")
			}
			switch dev {
			case "":
				dev, port = "mlx5_0", 1
			case "-":
				dev = ""
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tt.cancelled {
				cancel()
			}
			defer cancel()
			p, err := Open(ctx, fsys, dev, port, Options{Agents: tt.agents, Sys: f})
			if err == nil {
				p.Close()
				t.Fatalf("Open succeeded, want %q", tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error:\n got %q\nwant %q", err, tt.wantErr)
			}
			for _, target := range tt.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = false", err, target)
				}
			}
			var reqs []uint
			for _, c := range f.ioctls {
				reqs = append(reqs, c.Req)
			}
			if diff := cmp.Diff(tt.wantIoctls, reqs); diff != "" {
				t.Errorf("ioctls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantClosed, f.closed); diff != "" {
				t.Errorf("closed descriptors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenPermissionIsSysError(t *testing.T) {
	f := newFakeSys()
	f.openErr = syscall.EACCES
	_, err := Open(context.Background(), testFS("5"), "mlx5_0", 1, Options{Sys: f})
	var se *rdma.SysError
	if !errors.As(err, &se) || se.Op != "open" || se.Path != "/dev/infiniband/umad0" || se.Err != syscall.EACCES {
		t.Errorf("error %#v, want a *rdma.SysError for open of /dev/infiniband/umad0 with EACCES", err)
	}
}

func TestSend(t *testing.T) {
	littleEndian(t)
	gid := rdma.GID{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x01, 0x23, 0x45}
	tests := []struct {
		name    string
		pkt     mad.Packet
		wantReg []byte
		wantHdr string
	}{
		{
			name:    "LID-routed SMP",
			pkt:     mad.Packet{MAD: testMAD(mad.ClassSMI, 1), Addr: mad.Address{LID: 5}, Timeout: time.Second},
			wantReg: regArg(t, noMethods, "00 01 01 001405 00"),
			wantHdr: `05000000 00000000 e8030000 00000000 40010000
				00000000 00000000 0005 00 00 00 00 00 00
				00000000000000000000000000000000 00000000 0000 000000000000`,
		},
		{
			name:    "directed-route SMP",
			pkt:     mad.Packet{MAD: testMAD(mad.ClassSMIDirect, 1), Addr: mad.Address{LID: rdma.PermissiveLID}, Timeout: 250 * time.Millisecond},
			wantReg: regArg(t, noMethods, "00 81 01 001405 00"),
			wantHdr: `05000000 00000000 fa000000 00000000 40010000
				00000000 00000000 ffff 00 00 00 00 00 00
				00000000000000000000000000000000 00000000 0000 000000000000`,
		},
		{
			name: "GMP to QP1",
			pkt: mad.Packet{MAD: testMAD(mad.ClassPerf, 1), Timeout: 1500 * time.Microsecond, Addr: mad.Address{
				LID: 0x1234, QPN: 1, QKey: mad.QP1QKey, SL: 3, PathBits: 1, PKeyIndex: 2}},
			wantReg: regArg(t, noMethods, "01 04 01 001405 00"),
			wantHdr: `05000000 00000000 02000000 00000000 40010000
				00000001 80010000 1234 03 01 00 00 00 00
				00000000000000000000000000000000 00000000 0200 000000000000`,
		},
		{
			name: "GMP with GRH",
			pkt: mad.Packet{MAD: testMAD(mad.ClassSA, 2), Timeout: time.Second, Addr: mad.Address{
				LID: 0x10, QPN: 1, QKey: mad.QP1QKey, HasGRH: true,
				GRH: mad.GRH{GID: gid, GIDIndex: 3, HopLimit: 64, TrafficClass: 0x28, FlowLabel: 0xfff12345}}},
			wantReg: regArg(t, noMethods, "01 03 02 001405 01"), // SA: RMPP version 1
			wantHdr: `05000000 00000000 e8030000 00000000 40010000
				00000001 80010000 0010 00 00 01 03 40 28
				fe800000000000000002c90300012345 00012345 0000 000000000000`,
		},
		{
			name:    "long MAD",
			pkt:     mad.Packet{MAD: append(testMAD(mad.ClassSA, 2), make([]byte, 44)...), Addr: mad.Address{LID: 1, QPN: 1, QKey: mad.QP1QKey}},
			wantReg: regArg(t, noMethods, "01 03 02 001405 01"), // SA: RMPP version 1
			wantHdr: `05000000 00000000 00000000 00000000 6c010000
				00000001 80010000 0001 00 00 00 00 00 00
				00000000000000000000000000000000 00000000 0000 000000000000`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSys()
			f.nextID = 5
			p := openFake(t, f, Options{})
			if err := p.Send(context.Background(), &tt.pkt); err != nil {
				t.Fatal(err)
			}
			want := [][]byte{frame(t, tt.wantHdr, tt.pkt.MAD)}
			if diff := cmp.Diff(want, f.writes); diff != "" {
				t.Errorf("frames written (-want +got):\n%s", diff)
			}
			wantIoctls := []ioctlCall{{Req: ioctlEnablePKey}, {Req: ioctlRegisterAgent, Arg: tt.wantReg}}
			if diff := cmp.Diff(wantIoctls, f.ioctls); diff != "" {
				t.Errorf("ioctls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSendPicksAgent(t *testing.T) {
	f := newFakeSys()
	p := openFake(t, f, Options{Agents: []Agent{{Class: 0x32, ClassVersion: 1, Methods: []mad.Method{mad.MethodGet}}}})
	resp := testMAD(0x32, 1)
	resp[3] = byte(mad.MethodGetResp)
	sends := [][]byte{
		testMAD(mad.ClassSMI, 1),       // new client agent 1
		testMAD(mad.ClassSMIDirect, 1), // new client agent 2
		testMAD(mad.ClassSMI, 1),       // agent 1 again
		resp,                           // the server agent 0
		testMAD(mad.ClassSMI, 2),       // another version: new agent 3
	}
	for _, m := range sends {
		if err := p.Send(context.Background(), &mad.Packet{MAD: m}); err != nil {
			t.Fatal(err)
		}
	}
	var got []uint32
	for _, w := range f.writes {
		got = append(got, hostOrder.Uint32(w))
	}
	if diff := cmp.Diff([]uint32{1, 2, 1, 0, 3}, got); diff != "" {
		t.Errorf("agent ids (-want +got):\n%s", diff)
	}
	if n := len(f.ioctls); n != 5 {
		t.Errorf("%d ioctls, want 5 (ENABLE_PKEY and 4 registrations)", n)
	}
}

func TestSendErrors(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(*fakeSys)
		mad     []byte
		wantErr string
		wantIs  []error
	}{
		{name: "write EIO", setup: func(f *fakeSys) { f.writeErr = syscall.EIO },
			wantErr: "write /dev/infiniband/umad0: input/output error", wantIs: []error{syscall.EIO}},
		{name: "write ENOSPC", setup: func(f *fakeSys) { f.writeErr = syscall.ENOSPC },
			wantErr: "write /dev/infiniband/umad0: no space left on device", wantIs: []error{syscall.ENOSPC}},
		{name: "write EINVAL", setup: func(f *fakeSys) { f.writeErr = syscall.EINVAL },
			wantErr: "write /dev/infiniband/umad0: invalid argument", wantIs: []error{syscall.EINVAL}},
		{name: "short write", setup: func(f *fakeSys) { f.short = true },
			wantErr: "write /dev/infiniband/umad0: short write", wantIs: []error{io.ErrShortWrite}},
		{name: "register EINVAL", setup: func(f *fakeSys) { f.regErr = syscall.EINVAL },
			wantErr: "registering a MAD agent for PerfMgt version 1: ioctl IB_USER_MAD_REGISTER_AGENT /dev/infiniband/umad0: invalid argument",
			wantIs:  []error{syscall.EINVAL}},
		{name: "short MAD", mad: testMAD(mad.ClassPerf, 1)[:35],
			wantErr: "/dev/infiniband/umad0: a MAD to send needs at least 36 bytes, not 35"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSys()
			p := openFake(t, f, Options{})
			if tt.setup != nil {
				tt.setup(f)
			}
			m := tt.mad
			if m == nil {
				m = testMAD(mad.ClassPerf, 1)
			}
			err := p.Send(context.Background(), &mad.Packet{MAD: m, Addr: mad.Address{LID: 1, QPN: 1, QKey: mad.QP1QKey}})
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error:\n got %v\nwant %s", err, tt.wantErr)
			}
			for _, target := range tt.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = false", err, target)
				}
			}
		})
	}
}

func TestTimeoutMS(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want uint32
	}{
		{0, 0}, {-time.Second, 0}, {time.Nanosecond, 1}, {time.Millisecond, 1},
		{1500 * time.Microsecond, 2}, {time.Second, 1000}, {math.MaxInt64, math.MaxUint32},
	}
	for _, tt := range tests {
		if got := timeoutMS(tt.d); got != tt.want {
			t.Errorf("timeoutMS(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}

func TestMethodMask(t *testing.T) {
	littleEndian(t)
	var got [methodMaskBytes]byte
	putMethodMask(got[:], []mad.Method{mad.MethodGet, mad.MethodTrap, mad.MethodGetTable, 0x40, 0x7f})
	want := unhex(t, "22000400 00000000 01000000 00000080")
	if diff := cmp.Diff(want, got[:]); diff != "" {
		t.Errorf("method mask (-want +got):\n%s", diff)
	}
}

// TestUnixSys runs the real system calls on what every Linux has: an
// eventfd, and a path that does not exist.
func TestUnixSys(t *testing.T) {
	var s UnixSys
	if _, err := s.Open("/nonexistent/umad0", unix.O_RDWR); err != syscall.ENOENT {
		t.Errorf("Open of a missing file: %v, want ENOENT", err)
	}
	fd, err := s.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, err := s.Poll(fds, 0); n != 0 || err != nil {
		t.Errorf("Poll of a new eventfd: %d, %v", n, err)
	}
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	hostOrder.PutUint64(one, 1)
	if n, err := s.Write(fd, one); n != 8 || err != nil {
		t.Errorf("Write: %d, %v", n, err)
	}
	if n, err := s.Poll(fds, 1000); n != 1 || err != nil || fds[0].Revents&unix.POLLIN == 0 {
		t.Errorf("Poll after Write: %d, %v, revents %#x", n, err, fds[0].Revents)
	}
	buf := make([]byte, 8)
	if n, err := s.Read(fd, buf); n != 8 || err != nil || hostOrder.Uint64(buf) != 1 {
		t.Errorf("Read: %d, %v, %x", n, err, buf)
	}
	req := (&Agent{Class: mad.ClassSMI, ClassVersion: 1}).regReq()
	if err := s.Ioctl(fd, ioctlRegisterAgent, unsafe.Pointer(req)); err != syscall.ENOTTY {
		t.Errorf("REGISTER_AGENT on an eventfd: %v, want ENOTTY", err)
	}
	if err := s.Ioctl(fd, ioctlEnablePKey, nil); err != syscall.ENOTTY {
		t.Errorf("ENABLE_PKEY on an eventfd: %v, want ENOTTY", err)
	}
	if err := s.Close(-1); err != syscall.EBADF {
		t.Errorf("Close(-1): %v, want EBADF", err)
	}
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, HeaderLen-1))
	f.Add(make([]byte, HeaderLen))
	f.Add(append(make([]byte, HeaderLen), testMAD(mad.ClassSA, 2)...))
	grh := append(make([]byte, HeaderLen), testMAD(mad.ClassPerf, 1)...)
	grh[offGRHPresent], grh[offHopLimit], grh[offFlowLabel] = 1, 64, 0xff
	hostOrder.PutUint32(grh[offStatus:], uint32(syscall.ETIMEDOUT))
	f.Add(grh)
	f.Fuzz(func(t *testing.T, b []byte) {
		var p mad.Packet
		err := decodeFrame(b, &p)
		if err != nil {
			if len(b) >= HeaderLen {
				t.Fatalf("decodeFrame of %d bytes: %v", len(b), err)
			}
			return
		}
		if len(p.MAD) != len(b)-HeaderLen {
			t.Fatalf("MAD of %d bytes from a frame of %d", len(p.MAD), len(b))
		}
		// What decodes encodes back to the same address and MAD.
		again := make([]byte, frameLen(len(p.MAD)))
		encodeFrame(again, 1, &p)
		var q mad.Packet
		if err := decodeFrame(again, &q); err != nil {
			t.Fatal(err)
		}
		p.Status = 0
		if diff := cmp.Diff(p, q); diff != "" {
			t.Fatalf("decode, encode, decode (-first +second):\n%s", diff)
		}
	})
}

// TestSendEndedContext: a Send whose context has ended writes nothing.
func TestSendEndedContext(t *testing.T) {
	f := newFakeSys()
	p := openFake(t, f, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Send(ctx, &mad.Packet{MAD: testMAD(mad.ClassSMI, 1)}); !errors.Is(err, context.Canceled) {
		t.Errorf("Send with an ended context: %v, want context.Canceled", err)
	}
	if n := len(f.writes); n != 0 {
		t.Errorf("%d frames written", n)
	}
}
