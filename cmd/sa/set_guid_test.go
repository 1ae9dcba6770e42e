package sa

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
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

func TestSetGUIDArgs(t *testing.T) {
	for _, args := range [][]string{
		{"4", "1"}, {"4", "x", "0x12"}, {"4", "256", "0x12"}, {"4", "-1", "0x12"}, {"4", "1", "nope"}, {"zz", "1", "0x12"},
	} {
		err := cmdtest.ParseToolArgs(t, "set_guid", func(f *cmdutil.Factory) *cobra.Command {
			return newSetGUIDCmd(f, func(*setGUIDOptions) error { return nil })
		}, args)
		var u *cmdutil.UsageError
		if !errors.As(err, &u) {
			t.Errorf("set_guid %q: %v, want a usage error", args, err)
		}
	}
}

// TestSetGUIDRun: the SubnAdmSet carries LID, the slot's block and its one
// GUID, with their component mask and the SM_Key; the answer is printed
// as saquery prints a GUIDInfoRecord.
func TestSetGUIDRun(t *testing.T) {
	var req []byte
	sa := &madtest.RMPPResponder{HdrLen: 56, Respond: func(p *mad.Packet) []byte {
		req = append([]byte(nil), p.MAD...)
		return madtest.SAResponse(p, 0, 72, p.MAD[56:56+72])
	}}
	o := cmdtest.ParsedOptions(t, "set_guid", newSetGUIDCmd, []string{"--smkey", "7", "5", "10", "0x0002c90300001234"})
	var out bytes.Buffer
	o.IO.Out = &out
	o.Common.Open = cmdtest.NoPort(func() (*madrpc.Transactor, error) {
		return madrpc.NewTransactor(madtest.New(sa.Handle), madrpc.TransactorOptions{Timeout: time.Second, SA: &madrpc.SAAddress{SMLID: 1}}), nil
	})
	if err := setGUIDRun(o); err != nil {
		t.Fatal(err)
	}
	var h mad.Header
	h.UnmarshalBinary(req)
	if h.Method != mad.MethodSet || h.AttrID != mad.AttrGUIDInfoRecord {
		t.Errorf("sent %v of %v, want a Set of GUIDInfoRecord", h.Method, h.AttrID)
	}
	if key, mask := binary.BigEndian.Uint64(req[36:]), binary.BigEndian.Uint64(req[48:]); key != 7 || mask != 0x1|0x2|0x10<<2 {
		t.Errorf("SM_Key %d, component mask %#x; want 7, %#x", key, mask, 0x1|0x2|0x10<<2)
	}
	want := "GUIDInfo Record dump:\n\t\tLID........................5\n\t\tBlock......................1\n"
	for i := 0; i < 8; i++ {
		g := "0x0000000000000000"
		if i == 2 {
			g = "0x0002c90300001234"
		}
		want += fmt.Sprintf("\t\tGUID %d.....................%s\n", i, g)
	}
	got := out.String()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
