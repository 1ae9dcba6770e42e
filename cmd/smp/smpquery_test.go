package smp

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func TestSmpqueryArgs(t *testing.T) {
	tests := []struct {
		args    []string
		wantOp  string
		wantErr string
	}{
		{[]string{"nodeinfo", "12"}, "NodeInfo", ""},
		{[]string{"NI", "0,1"}, "NodeInfo", ""},
		{[]string{"nd", "0x1a"}, "NodeDesc", ""},
		{[]string{"PortInfo", "12", "1"}, "PortInfo", ""},
		{[]string{"nodeinfo", "12", "1"}, "", "operation NodeInfo takes no port number"},
		{[]string{"bogus", "12"}, "", "operation 'bogus' not supported"},
		{[]string{"ni", "0x"}, "", `invalid LID or GUID "0x"`},
		{[]string{"-D", "ni", "12"}, "", `-D given but "12" is a LID`},
		{[]string{"pi", "12", "300"}, "", "out of range 0 to 255"},
		{[]string{"pi", "12", "x"}, "", `invalid port number "x"`},
		{[]string{"pi", "12", "010"}, "PortInfo", ""},
		{[]string{"-c", "ni", "12", "0,1"}, "NodeInfo", ""},
		{[]string{"-c", "pi", "12", "0,1", "2"}, "PortInfo", ""},
		{[]string{"-c", "ni", "12"}, "", "-c needs a LID and a DR path"},
		{[]string{"-c", "ni", "0x", "0,1"}, "", `invalid LID "0x"`},
		{[]string{"pi", "12", "1", "2"}, "", "expected at most 3 argument(s)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *smpqueryOptions
			err := cmdtest.ParseToolArgs(t, "smpquery", func(f *cmdutil.Factory) *cobra.Command {
				return newSmpqueryCmd(f, func(o *smpqueryOptions) error { got = o; return nil })
			}, tt.args)
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			if got.Op.Name != tt.wantOp {
				t.Errorf("op %s, want %s", got.Op.Name, tt.wantOp)
			}
		})
	}
}

// runSmpquery runs smpquery's logic on a madtest fabric.
func runSmpquery(t *testing.T, h madtest.Handler, args ...string) (string, error) {
	t.Helper()
	out, _, err := smpToolRunners["smpquery"](t, h, args)
	return out, err
}

func TestSmpqueryRun(t *testing.T) {
	raw, _ := hex.DecodeString(cmdtest.Hca1NodeInfo)
	var ni mad.NodeInfo
	if err := ni.UnmarshalBinary(raw); err != nil {
		t.Fatal(err)
	}
	fabric := madtest.NewSMA().Put(&ni, 0).Put(&mad.NodeDescription{NodeDescription: nodeDesc("Hca1 HCA-1")}, 0).Handle
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"nd", "2"}, "Node Description:......................Hca1 HCA-1\n"},
		{[]string{"--json", "nd", "0,1"}, "{\n  \"nodeDescription\": \"Hca1 HCA-1\",\n  \"target\": \"DR path slid 65535; dlid 65535; 0,1\"\n}\n"},
		{[]string{"ni", "2"}, `# Node info: Lid 2
BaseVers:........................1
ClassVers:.......................1
NodeType:........................Channel Adapter
NumPorts:........................2
SystemGuid:......................0x0000000000100000
Guid:............................0x0000000000100000
PortGuid:........................0x0000000000100001
PartCap:.........................64
DevId:...........................0x0000
Revision:........................0x000000a1
LocalPort:.......................1
VendorId:........................0x000000
`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := runSmpquery(t, fabric, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSmpqueryRunErrors(t *testing.T) {
	silent := func(*mad.Packet) []mad.Packet { return nil }
	badStatus := func(req *mad.Packet) []mad.Packet {
		return []mad.Packet{madtest.Reply(req, mad.StatusMethodAttrUnsupported, mad.SMPDataOffset, nil)}
	}
	tests := []struct {
		h        madtest.Handler
		args     []string
		wantCode int
		wantErr  string
	}{
		{silent, []string{"ni", "12"}, cmdutil.ExitFailure, "operation NodeInfo: SubnGet(NodeInfo) to Lid 12: no response after 3 tries"},
		{silent, []string{"--retries", "0", "ni", "12"}, cmdutil.ExitFailure, "no response after 1 try"},
		{badStatus, []string{"nd", "0"}, cmdutil.ExitFailure, "SubnGet(NodeInfo) to DR path slid 65535; dlid 65535; 0: MAD status 0x000c: method/attribute combination unsupported"},
		{silent, []string{"ni", "0x0002c90300a1b2c4"}, cmdutil.ExitFailure, "resolving port GUID 0x0002c90300a1b2c4: the local port knows no SM LID"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := runSmpquery(t, tt.h, tt.args...)
			if cmdutil.ExitCode(err) != tt.wantCode || err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v (exit %d), want exit %d and %q", err, cmdutil.ExitCode(err), tt.wantCode, tt.wantErr)
			}
		})
	}
}

// TestSmpqueryScopedGID checks that a scoped GID target is resolved
// through the SA's PathRecord to a LID and gives what the same query by
// that LID gives; the scope picks the local port (cmdutil), not the route.
func TestSmpqueryScopedGID(t *testing.T) {
	const switchGID = "fe80::20:0" // smpFabric's switch, port GUID 0x200000, LID 2
	run := func(t *testing.T, args ...string) (string, []mad.Packet, error) {
		t.Helper()
		fabric := newSMPFabric()
		var asked []mad.Packet
		h := func(req *mad.Packet) []mad.Packet {
			if req.MAD[1] != byte(mad.ClassSA) {
				return fabric.handle(req)
			}
			asked = append(asked, *req)
			var q mad.PathRecord
			if err := q.UnmarshalBinary(req.MAD[mad.SAHeaderEnd:]); err != nil || q.DGID.GUID() != 0x200000 {
				return []mad.Packet{madtest.Reply(req, 0x0d00, mad.SAHeaderEnd, nil)} // ERR_NO_RECORDS
			}
			rec := mad.PathRecord{DGID: q.DGID, SGID: q.SGID, DLID: 2, SLID: 2, SL: 0, PKey: 0xffff}
			b, _ := rec.MarshalBinary()
			return []mad.Packet{madtest.Reply(req, 0, mad.SAHeaderEnd, b)}
		}
		o, out, _ := parseSMPTool(t, "smpquery", newSmpqueryCmd, args)
		o.IO.Out = out
		o.Common.Open = cmdtest.NoPort(func() (*madrpc.Transactor, error) {
			opts := o.Common.TransactorOptions()
			opts.Timeout = 20 * time.Millisecond
			opts.SA = &madrpc.SAAddress{SMLID: 1, PortGUID: 0x200000, LID: 2}
			return madrpc.NewTransactor(madtest.New(h), opts), nil
		})
		err := smpqueryRun(o)
		return out.String(), asked, err
	}
	for _, tt := range []struct{ byLID, byGID []string }{
		{[]string{"ni", "2"}, []string{"ni", switchGID + "%mlx5_0/1"}},
		{[]string{"nd", "2"}, []string{"nd", switchGID + "%mlx5_0"}},
		{[]string{"pi", "2", "3"}, []string{"pi", switchGID + "%0x0002c90300a1b2c4", "3"}},
		{[]string{"ni", "2"}, []string{"ni", "IBPath(DGID=" + switchGID + ", end_port=mlx5_0/1)"}},
	} {
		t.Run(strings.Join(tt.byGID, " "), func(t *testing.T) {
			want, _, err := run(t, tt.byLID...)
			if err != nil {
				t.Fatal(err)
			}
			got, asked, err := run(t, tt.byGID...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unexpected output by GID (-want +got):\n%s", diff)
			}
			if len(asked) != 1 {
				t.Errorf("%d SA queries, want one PathRecord", len(asked))
			}
		})
	}
	t.Run("GID the SA does not know", func(t *testing.T) {
		_, _, err := run(t, "ni", "fe80::99:1%mlx5_0/1")
		const want = "resolving GID fe80::99:1 through the SA"
		if cmdutil.ExitCode(err) != cmdutil.ExitFailure || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v (exit %d), want exit %d and %q", err, cmdutil.ExitCode(err), cmdutil.ExitFailure, want)
		}
	})
}
