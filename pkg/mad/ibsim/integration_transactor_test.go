package ibsim_test

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/ibsim"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// switch2GUID is Switch2's node GUID in the two-switch fabric.
const switch2GUID rdma.GUID = 0x0000000000200001

// TestIntegrationTransactor runs the transactor over ibsim on a fabric
// opensm brought up: DR and LID-routed SMPs, a PMA query, MADs dropped by
// ibsim's error injection being retried, and a LID nobody answers.
func TestIntegrationTransactor(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	ctx := context.Background()
	cfg, err := ibsim.FromEnv(envOf(f.Env("Hca1")))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ibsim.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	x := madrpc.NewTransactor(c, madrpc.TransactorOptions{Timeout: 200 * time.Millisecond, Retries: 2})
	defer x.Close()

	get := func(p mad.Path, class mad.Class, attr mad.AttrID, mod uint32) (*madrpc.Response, error) {
		return x.Do(ctx, &madrpc.Request{Path: p, Class: class, Method: mad.MethodGet, AttrID: attr, AttrMod: mod, Name: attrNames[attr]})
	}
	nodeGUID := func(r *madrpc.Response) rdma.GUID { return rdma.GUID(binary.BigEndian.Uint64(r.Data()[12:])) }

	r, err := get(mad.DRPath(0, 1, 3), mad.ClassSMI, 0x11, 0)
	if err != nil {
		t.Fatal(err)
	}
	if g := nodeGUID(r); g != switch2GUID {
		t.Errorf("DR NodeInfo of 0,1,3: GUID %v, want %v", g, switch2GUID)
	}
	r, err = get(mad.DRPath(0, 1, 3), mad.ClassSMI, 0x15, 0)
	if err != nil {
		t.Fatal(err)
	}
	lid := rdma.LID(binary.BigEndian.Uint16(r.Data()[16:]))
	r, err = get(mad.LIDPath(lid), mad.ClassSMI, 0x11, 0)
	if err != nil {
		t.Fatalf("LID-routed NodeInfo to Switch2's LID %d: %v", lid, err)
	}
	if g := nodeGUID(r); g != switch2GUID {
		t.Errorf("NodeInfo of LID %d: GUID %v, want %v", lid, g, switch2GUID)
	}
	pc := make([]byte, 2)
	pc[1] = 1 // PortSelect 1
	if _, err := x.Do(ctx, &madrpc.Request{Path: mad.LIDPath(lid), Class: mad.ClassPerf, Method: mad.MethodGet, AttrID: 0x12, Data: pc}); err != nil {
		t.Errorf("PortCounters of LID %d: %v", lid, err)
	}

	// Every MAD through Hca1's port dropped: three tries, then a timeout
	// that says so.
	hca := simfabric.PortRef{Node: "Hca1", Port: 1}
	if err := f.SetErrorRate(ctx, hca, 100, 0); err != nil {
		t.Fatal(err)
	}
	_, err = get(mad.LIDPath(lid), mad.ClassSMI, 0x11, 0)
	var te *madrpc.TimeoutError
	if !errors.As(err, &te) || te.Tries != 3 {
		t.Errorf("with every MAD dropped: %v, want a timeout after 3 tries", err)
	}
	// A third of them dropped: sending again gets the answers through
	// (ibsim returns a dropped MAD at once, which goes again within its
	// try).
	if err := f.SetErrorRate(ctx, hca, 33, 0); err != nil {
		t.Fatal(err)
	}
	c2, err := ibsim.Dial(ctx, cfg) // a second client: a transport has one reader
	if err != nil {
		t.Fatal(err)
	}
	x2 := madrpc.NewTransactor(c2, madrpc.TransactorOptions{Timeout: 100 * time.Millisecond, Retries: 30})
	defer x2.Close()
	retried := 0
	for i := 0; i < 12; i++ {
		r, err := x2.Do(ctx, &madrpc.Request{Path: mad.LIDPath(lid), Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: 0x11})
		if err != nil {
			t.Fatalf("query %d with a third of the MADs dropped: %v", i, err)
		}
		if r.Sent > 1 {
			retried++
		}
	}
	if retried == 0 {
		t.Error("no query was sent again with a third of the MADs dropped")
	}
	if err := f.SetErrorRate(ctx, hca, 0, 0); err != nil {
		t.Fatal(err)
	}

	// A LID nobody has: the timeout comes in the time -t and --retries
	// promise.
	start := time.Now()
	_, err = get(mad.LIDPath(200), mad.ClassSMI, 0x11, 0)
	took := time.Since(start)
	if !errors.As(err, &te) || te.Tries != 3 {
		t.Errorf("LID 200: %v, want a timeout after 3 tries", err)
	}
	if took > 3*200*time.Millisecond+500*time.Millisecond {
		t.Errorf("LID 200: gave up after %v, want about 600ms", took)
	}
	t.Logf("LID 200: %v", err)
}

var attrNames = map[mad.AttrID]string{0x11: "NodeInfo", 0x15: "PortInfo"}

// envOf turns KEY=VALUE pairs into a getenv function.
func envOf(kv []string) func(string) string {
	m := map[string]string{}
	for _, s := range kv {
		for i := 0; i < len(s); i++ {
			if s[i] == '=' {
				m[s[:i]] = s[i+1:]
				break
			}
		}
	}
	return func(k string) string { return m[k] }
}
