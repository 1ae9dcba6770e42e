package ibsim

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// drNodeInfo builds a directed-route SubnGet(NodeInfo) along path.
func drNodeInfo(tid uint64, path ...byte) *mad.Packet {
	b := make([]byte, mad.Size)
	h := mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSMIDirect, ClassVersion: 1,
		Method: mad.MethodGet, TID: tid, AttrID: 0x0011}
	h.MarshalTo(b)
	dr := mad.DRSMPHeader{HopCount: uint8(len(path) - 1), DrSLID: rdma.PermissiveLID, DrDLID: rdma.PermissiveLID}
	copy(dr.InitialPath[:], path)
	dr.MarshalTo(b)
	return &mad.Packet{MAD: b, Addr: mad.Address{LID: rdma.PermissiveLID, QPN: 0}}
}

// query sends p and returns the next packet c receives.
func query(t *testing.T, c *Client, p *mad.Packet) *mad.Packet {
	t.Helper()
	if err := c.Send(context.Background(), p); err != nil {
		t.Fatalf("Send: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var r mad.Packet
	if err := c.Recv(ctx, &r); err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return &r
}

// mustHeader decodes the common header of b.
func mustHeader(t *testing.T, b []byte) mad.Header {
	t.Helper()
	var h mad.Header
	if err := h.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return h
}

// readTree maps every path in fsys to its contents, and every directory to
// "<dir>", so two trees compare with cmp.Diff.
func readTree(fsys fs.FS) (map[string]string, error) {
	tree := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			tree[path] = "<dir>"
			return nil
		}
		b, err := fs.ReadFile(fsys, path)
		tree[path] = string(b)
		return err
	})
	return tree, err
}
