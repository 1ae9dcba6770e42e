package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rpingConn is what TestRealRpingCaptures pins of a connection.
type rpingConn struct {
	Service, Active, Passive string
	QPs                      [2]uint32
	State                    ConnState
	Frames                   []int
}

// messageKind names a message for TestRealRpingCaptures: a CM message by
// its type, an MPA frame by its kind and revision, data by its operation.
func messageKind(m *Message) string {
	switch {
	case m.CM != nil:
		return "CM " + m.CM.Type.String()
	case m.MPA != nil && m.MPA.Request:
		return fmt.Sprintf("MPA Request rev %d", m.MPA.Rev)
	case m.MPA != nil:
		return fmt.Sprintf("MPA Reply rev %d", m.MPA.Rev)
	}
	return string(m.Op)
}

// TestRealRpingCaptures pins what the captures of rdmacm-utils' rping
// against itself decode to (scripts/vm/checks/70-rdmacm.sh took them in
// the test guest, each end with its own device on one end of a veth
// pair, `rping -c -C 5 -v -V`): over Soft-RoCE, the CM's REQ, REP and
// RTU set the connection up and its DREQ and DREP end it, and every RC
// message names it; over Soft-iWARP, the MPA Request and Reply of
// revision 2 set it up and the TCP FIN ends it. Each of the 5 pings is
// the client's two SENDs (where its source and sink buffers are), the
// server's RDMA READ of the source and RDMA WRITE of the sink, and the
// server's two SENDs that say go ahead.
func TestRealRpingCaptures(t *testing.T) {
	tests := []struct {
		file  string
		conns []rpingConn
		kinds map[string]int
		// open is the frames up to the last data message: the teardown
		// (DREQ and DREP, or the FIN) is not among them.
		open int
	}{
		{"rping-rxe.pcap",
			[]rpingConn{{"rdma_cm TCP port 7174", "198.51.100.1", "198.51.100.2", [2]uint32{0x11, 0x11}, ConnDisconnected,
				[]int{1, 2, 3, 64, 65}}},
			map[string]int{"CM REQ": 1, "CM REP": 1, "CM RTU": 1, "CM DREQ": 1, "CM DREP": 1,
				"SEND": 20, "RDMA READ": 5, "RDMA WRITE": 5}, 63},
		{"rping-siw.pcap",
			[]rpingConn{{"TCP port 7174", "198.51.100.1:59772", "198.51.100.2:7174", [2]uint32{}, ConnDisconnected, []int{4, 6}}},
			map[string]int{"MPA Request rev 2": 1, "MPA Reply rev 2": 1, "SEND": 20, "RDMA READ": 5, "RDMA WRITE": 5}, 47},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res := readCaptureResult(t, "testdata/"+tt.file)
			var conns []rpingConn
			for _, c := range res.Connections {
				s := rpingConn{Service: c.Service, Active: c.Active, Passive: c.Passive, State: c.State, Frames: c.Frames}
				if c.ActiveQP != nil && c.PassiveQP != nil {
					s.QPs = [2]uint32{*c.ActiveQP, *c.PassiveQP}
				}
				conns = append(conns, s)
			}
			if diff := cmp.Diff(tt.conns, conns); diff != "" {
				t.Errorf("unexpected connections (-want +got):\n%s", diff)
			}
			kinds := map[string]int{}
			for _, m := range res.Messages {
				kinds[messageKind(m)]++
				if m.Connection != 1 {
					t.Errorf("message #%d (frame %d %s) names connection %d, want 1", m.Index, m.Frame, messageKind(m), m.Connection)
				}
				if !m.Complete || len(m.Problems) > 0 {
					t.Errorf("message #%d (frame %d %s): complete %v, problems %q", m.Index, m.Frame, messageKind(m), m.Complete, m.Problems)
				}
			}
			if diff := cmp.Diff(tt.kinds, kinds); diff != "" {
				t.Errorf("unexpected messages (-want +got):\n%s", diff)
			}
			if len(res.Events) != 0 {
				t.Errorf("events %+v, want none", res.Events)
			}
			// Without the teardown the connection is still established.
			res = readCaptureFrames(t, "testdata/"+tt.file, tt.open)
			if len(res.Connections) != 1 || res.Connections[0].State != ConnEstablished {
				t.Errorf("the first %d frames: connections %+v, want one established", tt.open, res.Connections)
			}
		})
	}
}

// readCaptureFrames reassembles the first n frames of a capture as
// readCaptureResult does the whole of it.
func readCaptureFrames(t *testing.T, path string, n int) *Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ReadCapture(f)
	if err != nil {
		t.Fatal(err)
	}
	r, iw := NewReassembler(), NewIWARPReassembler()
	for i := 0; i < n; i++ {
		fr, err := c.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s has %d frames, want at least %d", path, i, n)
		}
		if err != nil {
			t.Fatal(err)
		}
		r.Add(Decode(fr, DecodeOptions{}))
		iw.Add(fr)
	}
	return MergeResults(r.Finish(), iw.Finish())
}
