package ibsim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestIntegrationIBSimDRNodeInfo(t *testing.T) {
	c := unixFabric(t).dial(t, "Hca1")
	tests := []struct {
		name     string
		path     []byte
		wantGUID rdma.GUID
		wantType mad.NodeType
		wantPort uint8 // NodeInfo's LocalPort: the port the SMP entered by
		wantRet  []byte
	}{
		{"local port", []byte{0}, guidHca1, mad.NodeTypeCA, 1, []byte{1}},
		{"one hop", []byte{0, 1}, guidSwitch1, mad.NodeTypeSwitch, 1, []byte{1, 1}},
		{"two hops", []byte{0, 1, 3}, guidSwitch2, mad.NodeTypeSwitch, 3, []byte{1, 1, 3}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tid := uint64(0x1234_0000 + i)
			r := query(t, c, drNodeInfo(tid, tt.path...))
			if r.Status != 0 {
				t.Fatalf("reply status %v", r.Status)
			}
			if diff := cmp.Diff(mad.Address{LID: rdma.PermissiveLID, QPN: 0}, r.Addr); diff != "" {
				t.Errorf("unexpected reply address (-want +got):\n%s", diff)
			}
			h := mustHeader(t, r.MAD)
			if h.Method != mad.MethodGetResp || h.Status != mad.DirectionBit || h.AttrID != 0x11 {
				t.Errorf("reply header %+v, want GetResp with only the D bit in status", h)
			}
			// ibsim writes its client number into TID bits 48-63; the low 32
			// bits are ours.
			if uint32(h.TID) != uint32(tid) || h.TID>>48 != uint64(c.Info().ClientID) {
				t.Errorf("reply TID %#016x, want low bits %#x and client %d in bits 48-63", h.TID, tid, c.Info().ClientID)
			}
			var dr mad.DRSMPHeader
			dr.UnmarshalBinary(r.MAD)
			if got := dr.ReturnPath[:len(tt.wantRet)]; !cmp.Equal(tt.wantRet, got) {
				t.Errorf("return path %v, want %v", got, tt.wantRet)
			}
			var ni NodeInfo
			ni.UnmarshalBinary(r.MAD[mad.SMPDataOffset:])
			if ni.NodeGUID != tt.wantGUID || ni.NodeType != tt.wantType || ni.LocalPort != tt.wantPort {
				t.Errorf("NodeInfo GUID %v type %d port %d, want %v %d %d",
					ni.NodeGUID, ni.NodeType, ni.LocalPort, tt.wantGUID, tt.wantType, tt.wantPort)
			}
		})
	}
}

// A DR SMP out of an unconnected switch port is dropped; ibsim says so at
// once by returning the request with status ETIMEDOUT.
func TestIntegrationIBSimDroppedReportsTimeout(t *testing.T) {
	c := unixFabric(t).dial(t, "Hca1")
	start := time.Now()
	r := query(t, c, drNodeInfo(0x77, 0, 1, 7))
	if r.Status != syscall.ETIMEDOUT {
		t.Errorf("status %v, want ETIMEDOUT", r.Status)
	}
	if h := mustHeader(t, r.MAD); h.Method != mad.MethodGet || uint32(h.TID) != 0x77 {
		t.Errorf("dropped packet header %+v, want our Get with TID 0x77", h)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("drop reported after %v", d)
	}
}

func TestIntegrationIBSimSendRejectsWhatIBSimDrops(t *testing.T) {
	c := unixFabric(t).dial(t, "Hca1")
	p := drNodeInfo(1, 0, 1)
	p.MAD[6] = 1 // hop pointer
	if err := c.Send(context.Background(), p); err == nil {
		t.Error("Send with hop pointer 1 succeeded")
	}
	if err := c.Send(context.Background(), &mad.Packet{MAD: make([]byte, 300)}); err == nil {
		t.Error("Send of 300 bytes succeeded")
	}
}

func TestIntegrationIBSimConcurrentClients(t *testing.T) {
	f := unixFabric(t)
	hosts := []string{"Hca1", "Hca2", "Hca3", "Hca4", "Switch1", "Switch2"}
	clients := map[string]*Client{}
	for _, h := range hosts {
		clients[h] = f.dial(t, h)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(hosts))
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := pingSelf(clients[h], 50); err != nil {
				errs <- fmt.Errorf("%s: %v", h, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// pingSelf sends n DR NodeInfo Gets to c's own node, one at a time, and
// checks each answer's TID and node GUID.
func pingSelf(c *Client, n int) error {
	want := c.Info().NodeInfo.NodeGUID
	for i := range n {
		tid := uint64(i)<<8 | uint64(c.Info().ClientID)
		if err := c.Send(context.Background(), drNodeInfo(tid, 0)); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var r mad.Packet
		err := c.Recv(ctx, &r)
		cancel()
		if err != nil {
			return err
		}
		var h mad.Header
		h.UnmarshalBinary(r.MAD)
		var ni NodeInfo
		ni.UnmarshalBinary(r.MAD[mad.SMPDataOffset:])
		if uint32(h.TID) != uint32(tid) || ni.NodeGUID != want {
			return fmt.Errorf("reply TID %#x GUID %v, want %#x %v", h.TID, ni.NodeGUID, tid, want)
		}
	}
	return nil
}

func TestIntegrationIBSimRecvContext(t *testing.T) {
	c := unixFabric(t).dial(t, "Hca3")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var p mad.Packet
	if err := c.Recv(ctx, &p); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Recv with nothing to read = %v, want DeadlineExceeded", err)
	}
	// The expired deadline must not leak into the next Recv.
	if r := query(t, c, drNodeInfo(0x99, 0)); r.Status != 0 {
		t.Errorf("status %v after a timed-out Recv", r.Status)
	}
}
