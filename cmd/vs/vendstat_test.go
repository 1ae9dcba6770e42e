package vs

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonkeys"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// is3Agent answers Mellanox vendor MADs as an InfiniScale III switch
// would (devID tells it which device it is): general info, and config
// space reads with the data at each address being the address's bits 12
// to 19 (0 for port 6's PortXmitWait). Other requests come back as sent.
func is3Agent(devID uint16) madtest.Handler {
	return func(req *mad.Packet) []mad.Packet {
		var h mad.Header
		if h.UnmarshalBinary(req.MAD) != nil {
			return nil
		}
		data := req.MAD[mad.HeaderLen:]
		var a interface{ MarshalBinary() ([]byte, error) }
		switch h.AttrID {
		case mad.AttrGeneralInfo:
			a = &mad.GeneralInfo{HWRevision: 0xa0, DeviceID: devID, Uptime: 0x1234, FWMajor: 1, FWMinor: 2, FWSubMinor: 3,
				FWBuildID: 0x77, FWMonth: 0x11, FWDay: 0x23, FWYear: 0x2008, PSID: mad.PSIDString([]byte("MT_0060000001\x00\x00\x00")),
				INIFileVersion: 9, SWMajor: 4, SWMinor: 5, SWSubMinor: 6}
		case mad.AttrConfigSpaceAccess:
			var cs mad.ConfigSpaceAccess
			if cs.UnmarshalBinary(data) != nil {
				return nil
			}
			for i := range cs.Records {
				r := &cs.Records[i]
				r.Data = r.Address >> 12 & 0xff
				if r.Address == mad.IS3PortXmitWaitAddr+3<<12 { // port 6: no waits
					r.Data = 0
				}
			}
			a = &cs
		case mad.AttrClassPortInfo:
			a = &mad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, CapabilityMask: 0x2, RespTimeValue: 18}
		case mad.AttrCounterGroupInfo:
			ci := mad.CounterGroupInfo{NumGroups: 2}
			ci.GroupMasks[0].Mask, ci.GroupMasks[1].Mask = 0xff, 0xf0
			a = &ci
		}
		if a != nil {
			data, _ = a.MarshalBinary()
		}
		return []mad.Packet{madtest.Reply(req, 0, mad.HeaderLen, data)}
	}
}

func runVendstat(t *testing.T, h madtest.Handler, args ...string) (string, error) {
	t.Helper()
	var o *vendstatOptions
	err := cmdtest.ParseToolArgs(t, "vendstat", func(f *cmdutil.Factory) *cobra.Command {
		return newVendstatCmd(f, func(opts *vendstatOptions) error { o = opts; return nil })
	}, args)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	o.IO.Out = &out
	o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
		opts := o.Common.TransactorOptions()
		// Long enough that a loaded machine retries no request the counts
		// of TestVendstatDryRun see twice.
		opts.Timeout = 100 * time.Millisecond
		o.Common.SetDryRun(&out, &opts)
		return madrpc.NewTransactor(madtest.New(h), opts), &rdma.Port{Number: 1, LID: 9}, nil
	}
	o.Common.Ctx = context.Background()
	err = vendstatRun(o)
	return out.String(), err
}

func TestVendstat(t *testing.T) {
	tests := []struct {
		args    []string
		devID   uint16
		want    string
		wantErr string
	}{
		{[]string{"-N", "6"}, 0x5a44, `hw_dev_rev:  0x00a0
hw_dev_id:   0x5a44
hw_uptime:   0x00001234
fw_version:  01.02.03
fw_build_id: 0x0077
fw_date:     11/23/2008
fw_psid:     'MT_0060000001'
fw_ini_ver:  9
sw_version:  04.05.06
`, ""},
		{[]string{"-w", "6"}, mad.IS3DeviceID, "Port 4: PortXmitWait 0x1\nPort 5: PortXmitWait 0x2\n" +
			"Port 7: PortXmitWait 0x4\nPort 8: PortXmitWait 0x5\nPort 9: PortXmitWait 0x6\nPort 10: PortXmitWait 0x7\n" +
			"Port 11: PortXmitWait 0x8\nPort 12: PortXmitWait 0x9\nPort 13: PortXmitWait 0xa\nPort 14: PortXmitWait 0xb\n" +
			"Port 15: PortXmitWait 0xc\nPort 16: PortXmitWait 0xd\nPort 17: PortXmitWait 0xe\nPort 18: PortXmitWait 0xf\n" +
			"Port 19: PortXmitWait 0x10\nPort 21: PortXmitWait 0x11\nPort 22: PortXmitWait 0x12\nPort 23: PortXmitWait 0x13\n" +
			"Port 24: PortXmitWait 0x14\nPort 1: PortXmitWait 0x15\nPort 2: PortXmitWait 0x16\nPort 3: PortXmitWait 0x17\n" +
			"Port 4: PortXmitWait 0x18\n", ""},
		{[]string{"-N", "6"}, 0x1003, `hw_dev_rev:  0x00a0
hw_dev_id:   0x1003
hw_uptime:   0x00001234
fw_version:  263430.00.00
fw_build_id: 0x0077
fw_date:     11/23/2008
fw_psid:     'MT_0060000001'
fw_ini_ver:  9
sw_version:  00.00.00
`, ""}, // extended firmware info: the version where sw_version was
		{[]string{"-w", "6"}, 0x5a44, "", "unsupported device ID 0x5a44"},
		{[]string{"-R", "0x10213c", "-R", "10413c,0x6", "6"}, 0, "Config space record at 0x10213c: 0x2\nConfig space record at 0x10413c: 0x4\n", ""},
		{[]string{"-i"}, 0, "counter_group_info:\n2 counter groups\ngroup0 mask 0xff\ngroup1 mask 0xf0\n", ""},
		{[]string{"-c", "1,2", "6"}, 0, "counter_groups_config: configuring group0 1 group1 2\n", ""},
		{[]string{"-W", "0x10213c,0x5", "-W", "10413c,6,0xf0", "6"}, 0, "Config space record at 0x10213c: 0x2\nConfig space record at 0x10413c: 0x0\n", ""},
		// --cpi (python-rdma's): the vendor class's ClassPortInfo.
		{[]string{"--cpi", "6"}, 0, `BaseVersion:.....................1
ClassVersion:....................1
CapabilityMask:..................0x0002
CapabilityMask2:.................0x00000000
RespTimeVal:.....................18
RedirectGID:.....................00000000000000000000000000000000
RedirectTC:......................0x00
RedirectSL:......................0
RedirectFL:......................0x000000
RedirectLID:.....................0
RedirectPKey:....................0x0000
RedirectQP:......................0x000000
RedirectQKey:....................0x00000000
TrapGID:.........................00000000000000000000000000000000
TrapTC:..........................0x00
TrapSL:..........................0
TrapFL:..........................0x000000
TrapLID:.........................0
TrapPKey:........................0x0000
TrapHL:..........................0
TrapQP:..........................0x000000
TrapQKey:........................0x00000000
`, ""},
		{[]string{"6"}, 0, "", "at least one of -N and -w"},
		{[]string{"-R", "zz", "6"}, 0, "", `"zz" is not a hex number`},
		{[]string{"-c", "1", "6"}, 0, "", "want two counter group numbers"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := runVendstat(t, is3Agent(tt.devID), tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
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
}

func TestVendstatNoAnswer(t *testing.T) {
	silent := func(*mad.Packet) []mad.Packet { return nil }
	_, err := runVendstat(t, silent, "-N", "6")
	want := "classportinfo query: Vendor1(0x0a) Get(ClassPortInfo) to Lid 6: no response after 3 tries"
	if err == nil || !strings.Contains(err.Error(), want) || cmdutil.ExitCode(err) != cmdutil.ExitFailure {
		t.Errorf("error %v (exit %d), want %q", err, cmdutil.ExitCode(err), want)
	}
}

// TestVendstatDryRun checks that under --dry-run the Sets of -c and -W
// reach no port while the Gets do, that the plan comes where the Set's
// reply would have been printed, and that nothing is printed of a reply
// that never came.
func TestVendstatDryRun(t *testing.T) {
	const writePlan = "dry-run: Vendor1(0x0a)Set(ConfigSpaceAccess) from=madtest0/1 lid=6 attrmod=0x820000 " +
		"Data=00000000000000000010213c00000005ffffffff0010413c00000006000000f0\n"
	tests := []struct {
		args       []string
		want       string
		gets, sets int // reaching the port without --dry-run
	}{
		{[]string{"-W", "0x10213c,0x5", "-W", "10413c,6,0xf0", "6"}, writePlan, 0, 1},
		{[]string{"-R", "0x10213c", "-W", "0x10213c,0x5", "-W", "10413c,6,0xf0", "6"},
			"Config space record at 0x10213c: 0x2\n" + writePlan, 1, 1},
		{[]string{"-c", "1,2", "6"}, "counter_groups_config: configuring group0 1 group1 2\n" +
			"dry-run: Vendor1(0x0a)Set(ConfigCounterGroup) from=madtest0/1 lid=6 attrmod=0x0 Data=0000000000000000000000000000000100000002\n", 1, 1},
		{[]string{"-c", "0,1"}, "counter_groups_config: configuring group0 0 group1 1\n" +
			"dry-run: Vendor1(0x0a)Set(ConfigCounterGroup) from=madtest0/1 lid=9 attrmod=0x1 Data=0000000000000000000000000000000000000001\n", 1, 1},
		{[]string{"-N", "6"}, "", 2, 0},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var sent, planned madtest.MethodCounter
			without, err := runVendstat(t, sent.Count(is3Agent(0)), tt.args...)
			if err != nil || sent.Gets() != tt.gets || sent.Sets() != tt.sets {
				t.Fatalf("without --dry-run: %v, %d Gets and %d Sets sent; want %d and %d", err, sent.Gets(), sent.Sets(), tt.gets, tt.sets)
			}
			got, err := runVendstat(t, planned.Count(is3Agent(0)), append([]string{"--dry-run"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if planned.Sets() != 0 || planned.Gets() != tt.gets {
				t.Errorf("%d Gets and %d Sets reached the port, want %d Gets and none", planned.Gets(), planned.Sets(), tt.gets)
			}
			if tt.sets == 0 {
				tt.want = without // a run without a Set prints the same
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestVendstatDryRunJSON checks a --json dry run's document: the plan
// under "dryRun", and no line of a reply that never came.
func TestVendstatDryRunJSON(t *testing.T) {
	var c madtest.MethodCounter
	out, err := runVendstat(t, c.Count(is3Agent(0)), "--dry-run", "--json", "-W", "0x10213c,0x5", "6")
	if err != nil || c.Sets() != 0 {
		t.Fatalf("%v, %d Sets sent", err, c.Sets())
	}
	var doc struct {
		Lines  []string      `json:"lines"`
		DryRun []madrpc.Plan `json:"dryRun"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	want := []madrpc.Plan{{Request: "Vendor1(0x0a) Set(ConfigSpaceAccess)", Device: "madtest0", Port: 1, Class: "Vendor1(0x0a)", LID: 6,
		Attribute: "ConfigSpaceAccess", AttrID: mad.AttrConfigSpaceAccess, AttrMod: 0x810000,
		Fields: []madrpc.PlannedField{{Name: "Data", Text: "00000000000000000010213c00000005ffffffff"}}}}
	if diff := cmp.Diff(want, doc.DryRun, cmpopts.IgnoreFields(madrpc.Plan{}, "Data")); diff != "" || len(doc.Lines) != 0 {
		t.Errorf("lines %q, unexpected dryRun (-want +got):\n%s", doc.Lines, diff)
	}
}

func TestVendstatJSONKeys(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"-N", "6"}, []string{"lines[]", "target"}},
		{[]string{"-w", "6"}, []string{"lines[]", "target"}},
		{[]string{"--dry-run", "-c", "1,2", "6"}, []string{"dryRun[].attribute", "dryRun[].attributeId", "dryRun[].attributeModifier",
			"dryRun[].class", "dryRun[].device", "dryRun[].fields[].name", "dryRun[].fields[].text", "dryRun[].lid", "dryRun[].port",
			"dryRun[].request", "lines[]", "target"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := runVendstat(t, is3Agent(mad.IS3DeviceID), append([]string{"--json"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := jsonkeys.Paths([]byte(out))
			if err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected JSON keys (-want +got):\n%s", diff)
			}
		})
	}
}
