package local

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonkeys"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// fakeVerbs is an mlx5 InfiniBand HCA with two ports (one down) and an
// rxe device.
var fakeVerbs = []verbs.Device{
	{Name: "mlx5_0", Transport: verbs.TransportIB, FWVer: "20.31.1014", NodeGUID: 0x0c42a10300a1b2c4, SysImageGUID: 0x0c42a10300a1b2c4,
		VendorID: 0x02c9, VendorPartID: 4123, HWVer: 0x0, PhysPortCnt: 2, IBDevPath: "board",
		Ports: []verbs.Port{
			{Num: 1, State: 4, MaxMTU: 5, ActiveMTU: 5, SMLID: 1, LID: 12, LMC: 0, LinkLayer: verbs.LinkLayerInfiniBand},
			{Num: 2, State: 1, MaxMTU: 5, ActiveMTU: 1, LinkLayer: verbs.LinkLayerInfiniBand},
		}},
	{Name: "rxe0", Transport: verbs.TransportIB, NodeGUID: 0x505400fffe123456, SysImageGUID: 0, VendorID: 0xffffff, VendorPartID: 0, PhysPortCnt: 1,
		Ports: []verbs.Port{{Num: 1, State: 4, MaxMTU: 5, ActiveMTU: 3, LinkLayer: verbs.LinkLayerEthernet}}},
}

const mlx5Devinfo = "hca_id:\tmlx5_0\n" +
	"\ttransport:\t\t\tInfiniBand (0)\n" +
	"\tfw_ver:\t\t\t\t20.31.1014\n" +
	"\tnode_guid:\t\t\t0c42:a103:00a1:b2c4\n" +
	"\tsys_image_guid:\t\t\t0c42:a103:00a1:b2c4\n" +
	"\tvendor_id:\t\t\t0x02c9\n" +
	"\tvendor_part_id:\t\t\t4123\n" +
	"\thw_ver:\t\t\t\t0x0\n" +
	"\tboard_id:\t\t\tMT_0000000012\n" +
	"\tphys_port_cnt:\t\t\t2\n"

const mlx5Port1 = "\t\tport:\t1\n" +
	"\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n" +
	"\t\t\tmax_mtu:\t\t4096 (5)\n" +
	"\t\t\tactive_mtu:\t\t4096 (5)\n" +
	"\t\t\tsm_lid:\t\t\t1\n" +
	"\t\t\tport_lid:\t\t12\n" +
	"\t\t\tport_lmc:\t\t0x00\n" +
	"\t\t\tlink_layer:\t\tInfiniBand\n\n"

const mlx5Port2 = "\t\tport:\t2\n" +
	"\t\t\tstate:\t\t\tPORT_DOWN (1)\n" +
	"\t\t\tmax_mtu:\t\t4096 (5)\n" +
	"\t\t\tactive_mtu:\t\t256 (1)\n" +
	"\t\t\tsm_lid:\t\t\t0\n" +
	"\t\t\tport_lid:\t\t0\n" +
	"\t\t\tport_lmc:\t\t0x00\n" +
	"\t\t\tlink_layer:\t\tInfiniBand\n\n"

const rxeDevinfo = "hca_id:\trxe0\n" +
	"\ttransport:\t\t\tInfiniBand (0)\n" +
	"\tnode_guid:\t\t\t5054:00ff:fe12:3456\n" +
	"\tsys_image_guid:\t\t\t0000:0000:0000:0000\n" +
	"\tvendor_id:\t\t\t0xffffff\n" +
	"\tvendor_part_id:\t\t\t0\n" +
	"\thw_ver:\t\t\t\t0x0\n" +
	"\tphys_port_cnt:\t\t\t1\n" +
	"\t\tport:\t1\n" +
	"\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n" +
	"\t\t\tmax_mtu:\t\t4096 (5)\n" +
	"\t\t\tactive_mtu:\t\t1024 (3)\n" +
	"\t\t\tsm_lid:\t\t\t0\n" +
	"\t\t\tport_lid:\t\t0\n" +
	"\t\t\tport_lmc:\t\t0x00\n" +
	"\t\t\tlink_layer:\t\tEthernet\n\n"

func runIbvDevinfo(t *testing.T, devs []verbs.Device, listErr error, args ...string) (string, error) {
	t.Helper()
	var o *ibvDevinfoOptions
	err := cmdtest.ParseToolArgs(t, "ibv_devinfo", func(f *cmdutil.Factory) *cobra.Command {
		return newIbvDevinfoCmd(f, func(opts *ibvDevinfoOptions) error { o = opts; return nil })
	}, args)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	o.IO.Out = &out
	o.Devices = func() ([]verbs.Device, error) { return devs, listErr }
	o.Names = func() ([]string, error) {
		var n []string
		for _, d := range devs {
			n = append(n, d.Name)
		}
		return n, listErr
	}
	o.BoardID = func(d *verbs.Device) (string, error) {
		switch d.IBDevPath {
		case "board":
			return "MT_0000000012", nil
		case "unreadable":
			return "", &os.PathError{Op: "read", Path: "/sys/class/infiniband/" + d.Name + "/board_id", Err: syscall.EIO}
		}
		return "", nil
	}
	err = ibvDevinfoRun(o)
	return out.String(), err
}

func TestIbvDevinfo(t *testing.T) {
	tests := []struct {
		args     []string
		devs     []verbs.Device
		want     string
		wantErr  string
		wantCode int
	}{
		{nil, fakeVerbs, mlx5Devinfo + mlx5Port1 + mlx5Port2 + rxeDevinfo, "", 0},
		{[]string{"-d", "mlx5_0", "-i", "2"}, fakeVerbs, mlx5Devinfo + mlx5Port2, "", 0},
		{[]string{"--ib-dev=rxe0"}, fakeVerbs, rxeDevinfo, "", 0},
		{[]string{"-l"}, fakeVerbs, "2 HCAs found:\n\tmlx5_0\n\trxe0\n\n", "", 0},
		{[]string{"-l"}, fakeVerbs[1:], "1 HCA found:\n\trxe0\n\n", "", 0},
		{[]string{"-d", "mlx9"}, fakeVerbs, "", "IB device 'mlx9' wasn't found", cmdutil.ExitUsage},
		{nil, nil, "", "no IB devices found", cmdutil.ExitFailure},
		{[]string{"-i", "3"}, fakeVerbs, "", "mlx5_0: invalid port 3 requested: the device has 2", cmdutil.ExitUsage},
		{[]string{"-i", "0"}, fakeVerbs, "", `invalid port "0"`, cmdutil.ExitUsage},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := runIbvDevinfo(t, tt.devs, nil, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || cmdutil.ExitCode(err) != tt.wantCode {
					t.Fatalf("error %v (exit %d), want %q (exit %d)", err, cmdutil.ExitCode(err), tt.wantErr, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := runIbvDevinfo(t, nil, verbs.ErrNoVerbs); !errors.Is(err, verbs.ErrNoVerbs) || cmdutil.ExitCode(err) != cmdutil.ExitFailure {
		t.Errorf("without verbs: %v (exit %d)", err, cmdutil.ExitCode(err))
	}
}

// TestIbvDevinfoBoardID checks that a board_id that is there and does not
// read leaves its line out, as rdma-core does, then says so and exits 3;
// a driver without one is not a problem.
func TestIbvDevinfoBoardID(t *testing.T) {
	devs := append([]verbs.Device{}, fakeVerbs...)
	devs[0].IBDevPath = "unreadable"
	got, err := runIbvDevinfo(t, devs, nil)
	if diff := cmp.Diff(strings.Replace(mlx5Devinfo, "\tboard_id:\t\t\tMT_0000000012\n", "", 1)+mlx5Port1+mlx5Port2+rxeDevinfo, got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	const want = "read /sys/class/infiniband/mlx5_0/board_id: input/output error"
	if err == nil || err.Error() != want || cmdutil.ExitCode(err) != cmdutil.ExitFailure {
		t.Errorf("error %v (exit %d), want %q (exit 3)", err, cmdutil.ExitCode(err), want)
	}

	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "board_id"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, wantErr := range map[string]bool{"": false, t.TempDir(): false, dir: true} {
		board, err := sysfsBoardID(&verbs.Device{IBDevPath: path})
		if board != "" || (err != nil) != wantErr {
			t.Errorf("board_id in %q: %q, %v; want an error: %v", path, board, err, wantErr)
		}
	}
}

func TestIbvDevinfoVerbose(t *testing.T) {
	dev := fakeVerbs[1]
	dev.Attr = verbs.Attr{DeviceCapFlags: 1<<0 | 1<<11 | 1<<15, ODPRC: 1 << 1, NumCompVectors: 2, MaxSRQ: 3, MaxSRQWR: 4}
	dev.Ports = []verbs.Port{dev.Ports[0]}
	dev.Ports[0].ActiveWidth, dev.Ports[0].ActiveSpeed = 2, 1
	dev.Ports[0].GIDs = []verbs.GID{
		{Index: 0, Type: verbs.GIDTypeIBRoCEv1, Raw: [16]byte{0xfe, 0x80, 8: 0x50, 9: 0x54, 15: 0x56}},
		{Index: 1, Type: verbs.GIDTypeRoCEv2, Raw: [16]byte{10: 0xff, 11: 0xff, 12: 192, 13: 0, 14: 2, 15: 1}},
		{Index: 2, Type: verbs.GIDTypeInvalid, Raw: [16]byte{15: 1}},
	}
	got, err := runIbvDevinfo(t, []verbs.Device{dev}, nil, "-v")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\tdevice_cap_flags:\t\t0x00008801\n\t\t\t\t\tRESIZE_MAX_WR\n\t\t\t\t\tSYS_IMAGE_GUID\n\t\t\t\t\tUnknown flags: 0x8000\n",
		"\tmax_srq:\t\t\t3\n\tmax_srq_wr:\t\t\t4\n\tmax_srq_sge:\t\t\t0\n",
		"\trc_odp_caps:\n\t\t\t\t\tSUPPORT_RECV\n\tuc_odp_caps:\n\t\t\t\t\tNO SUPPORT\n",
		"\tcompletion_timestamp_mask not supported\n\tcore clock not supported\n",
		"\ttag matching not supported\n\tnum_comp_vectors:\t\t2\n",
		"\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t2.5 Gbps (1)\n\t\t\tphys_state:\t\tinvalid physical state (0)\n",
		"\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:5054:0000:0000:0056, RoCE v1\n\t\t\tGID[  1]:\t\t::ffff:192.0.2.1, RoCE v2\n\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// TestIbvDevinfoJSONKeys pins the keys of --json, with and without -l.
func TestIbvDevinfoJSONKeys(t *testing.T) {
	var device []string
	for _, k := range []string{"attr.atomicCap", "attr.completionTimestampMask", "attr.deviceCapFlags",
		"attr.deviceCapFlagsEx", "attr.hcaCoreClock", "attr.localCaAckDelay", "attr.maxDmSize", "attr.maxMrSize",
		"attr.maxPkeys", "attr.maxWqTypeRq", "attr.numCompVectors", "attr.odpGeneralCaps", "attr.pageSizeCap",
		"attr.rawPacketCaps", "fwVer", "hwVer", "name", "nodeGUID", "physPortCnt", "ports[].activeMtu",
		"ports[].activeSpeed", "ports[].activeWidth", "ports[].badPkeyCntr", "ports[].gidTblLen", "ports[].gids",
		"ports[].initTypeReply", "ports[].lid", "ports[].linkLayer", "ports[].lmc", "ports[].maxMsgSz",
		"ports[].maxMtu", "ports[].maxVlNum", "ports[].physState", "ports[].pkeyTblLen", "ports[].port",
		"ports[].portCapFlags", "ports[].portCapFlags2", "ports[].qkeyViolCntr", "ports[].smLid", "ports[].smSl",
		"ports[].state", "ports[].subnetTimeout", "sysImageGUID", "transport", "vendorId", "vendorPartId"} {
		device = append(device, "devices[].device."+k)
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--json", "-l"}, []string{"devices[]"}},
		{[]string{"--json"}, append([]string{"devices[].boardId", "devices[].hcaId"}, device...)},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := runIbvDevinfo(t, fakeVerbs, nil, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string(nil), tt.want...)
			sort.Strings(want)
			var doc any
			if err := json.Unmarshal([]byte(got), &doc); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, jsonkeys.Leaves(doc)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}
