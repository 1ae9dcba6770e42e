package ibsim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// GUIDs ibsim gives the nodes of net.2sw2path4hca.
const (
	guidSwitch1 rdma.GUID = 0x0000000000200000
	guidSwitch2 rdma.GUID = 0x0000000000200001
	guidHca1    rdma.GUID = 0x0000000000100000
)

func TestIntegrationIBSimAttachHca1(t *testing.T) {
	c := unixFabric(t).dial(t, "Hca1")
	info := c.Info()
	if info.NodeID != "Hca1" || info.Requested != "Hca1" || info.MatchedByDescription() {
		t.Errorf("attached to %q (asked %q), want Hca1", info.NodeID, info.Requested)
	}
	if info.ClientID < 0 || info.ClientID > 9 {
		t.Errorf("client number %d, want 0-9", info.ClientID)
	}
	gotNI := info.NodeInfo
	gotNI.Raw = [64]byte{}
	wantNI := NodeInfo{NodeType: mad.NodeTypeCA, NumPorts: 2, SystemImageGUID: guidHca1,
		NodeGUID: guidHca1, PortGUID: guidHca1, LocalPort: 1}
	if diff := cmp.Diff(wantNI, gotNI); diff != "" {
		t.Errorf("unexpected NodeInfo (-want +got):\n%s", diff)
	}
	gotPI := info.PortInfo
	gotPI.Raw = [64]byte{}
	// No SM runs, so the LIDs are 0 and the port is in INIT.
	wantPI := PortInfo{CapMask: 0x0050c048, LocalPort: 1, LinkWidthActive: 2,
		State: PortStateInit, PhysState: 5, LinkSpeedActive: 1}
	if diff := cmp.Diff(wantPI, gotPI); diff != "" {
		t.Errorf("unexpected PortInfo (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Vendor{HWVersion: 0xa1, FWVersion: 1}, info.Vendor); diff != "" {
		t.Errorf("unexpected vendor (-want +got):\n%s", diff)
	}
	if info.PKeys != [NumPKeys]uint16{0xffff} {
		t.Errorf("P_Keys %#04x, want 0xffff and zeros", info.PKeys)
	}
	if diff := cmp.Diff(mad.LocalPort{Device: "ibsim0", Port: 1}, c.LocalPort()); diff != "" {
		t.Errorf("unexpected LocalPort (-want +got):\n%s", diff)
	}
}

func TestIntegrationIBSimUnknownHost(t *testing.T) {
	cfg := unixFabric(t).cfg
	cfg.Host = "NoSuchNode"
	c, err := Dial(context.Background(), cfg)
	if err == nil {
		c.Close()
		t.Fatal("Dial(NoSuchNode) succeeded")
	}
	if !errors.Is(err, ErrRefused) {
		t.Errorf("Dial(NoSuchNode) = %v, want ErrRefused", err)
	}
}

func TestIntegrationIBSimNoServer(t *testing.T) {
	requireBench(t, "ibsim")
	_, err := Dial(context.Background(), Config{SockName: fmt.Sprintf("ibtool-nobody-%d", os.Getpid())})
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Dial with no ibsim = %v, want ECONNREFUSED", err)
	}
}

// Twelve clients in a row fit in ibsim's ten slots only if Close frees them.
func TestIntegrationIBSimCloseFreesSlot(t *testing.T) {
	cfg := unixFabric(t).cfg
	cfg.Host = "Switch1"
	for i := range 12 {
		c, err := Dial(context.Background(), cfg)
		if err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close %d: %v", i+1, err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("second Close %d: %v", i+1, err)
		}
	}
}

func TestIntegrationIBSimCloseUnblocksRecv(t *testing.T) {
	cfg := unixFabric(t).cfg
	cfg.Host = "Hca2"
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		var p mad.Packet
		got <- c.Recv(context.Background(), &p)
	}()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case err := <-got:
		if !errors.Is(err, mad.ErrClosed) {
			t.Errorf("Recv after Close = %v, want ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Recv still blocked 2s after Close")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
	if err := c.Send(context.Background(), drNodeInfo(1, 0)); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
}

func TestIntegrationIBSimInet(t *testing.T) {
	c := inetFabric(t).dial(t, "Hca4")
	if got := c.Info().NodeID; got != "Hca4" {
		t.Errorf("attached to %q, want Hca4", got)
	}
	r := query(t, c, drNodeInfo(0x55, 0, 1))
	var ni NodeInfo
	ni.UnmarshalBinary(r.MAD[mad.SMPDataOffset:])
	if r.Status != 0 || ni.NodeType != mad.NodeTypeSwitch {
		t.Errorf("status %v, node type %d; want a switch's NodeInfo", r.Status, ni.NodeType)
	}
}
