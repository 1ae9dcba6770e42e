package e2e

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestPythonRdmaForms checks python-rdma's address forms (docs/addresses.md)
// against infiniband-diags' own for the same port: a DR path with a
// trailing comma, -P as DEVICE/PORT, port GUID, GID or number alone, -C as
// a node GUID, --discovery in upper case.
func TestPythonRdmaForms(t *testing.T) {
	f := smallFabric(t)
	nodeGUID, portGUID := simGUIDs(t, f, "Hca1")
	g := strings.TrimPrefix(portGUID, "0x")
	gid := "fe80:0:0:0:" + g[0:4] + ":" + g[4:8] + ":" + g[8:12] + ":" + g[12:16]
	// NodeInfo of the local node by DR path 0 shows the port sent from
	// (LocalPortNum).
	local := []string{"smpquery", "-C", "ibsim0", "-P", "1", "-D", "nodeinfo", "0"}
	tests := []struct {
		name      string
		ref, ours []string
	}{
		{"DR path trailing comma", []string{"smpquery", "-D", "nodeinfo", "0,1"}, []string{"smpquery", "nodeinfo", "0,1,"}},
		{"-D DR path trailing comma", []string{"smpquery", "-D", "nodeinfo", "0,1,3"}, []string{"smpquery", "-D", "nodeinfo", "0,1,3,"}},
		{"DR path 0,", []string{"smpquery", "-D", "nodedesc", "0"}, []string{"smpquery", "nodedesc", "0,"}},
		{"iblinkinfo -D trailing comma", []string{"iblinkinfo", "-D", "0,1"}, []string{"iblinkinfo", "-D", "0,1,"}},
		{"-P DEVICE/PORT", local, []string{"smpquery", "-P", "ibsim0/1", "-D", "nodeinfo", "0"}},
		{"-P port GUID colons", local, []string{"smpquery", "-P", g[0:4] + ":" + g[4:8] + ":" + g[8:12] + ":" + g[12:16], "nodeinfo", "0"}},
		{"-P port GUID", local, []string{"smpquery", "-P", portGUID, "-D", "nodeinfo", "0"}},
		{"-P port GID", local, []string{"smpquery", "-P", gid, "-D", "nodeinfo", "0"}},
		{"-P number", local, []string{"smpquery", "-P", "1", "-D", "nodeinfo", "0"}},
		{"-C ibsim0 -P 1", local, local},
		{"-C node GUID", local, []string{"smpquery", "-C", nodeGUID, "-P", "1", "-D", "nodeinfo", "0"}},
		{"-C node GUID alone", local, []string{"smpquery", "-C", nodeGUID, "nodeinfo", "0"}},
		{"-P node GUID/port", local, []string{"smpquery", "-P", nodeGUID + "/1", "nodeinfo", "0"}},
		{"--discovery SA", []string{"ibhosts"}, []string{"ibhosts", "--discovery", "SA"}},
		{"--discovery LID", []string{"ibswitches"}, []string{"ibswitches", "--discovery", "Lid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sameOutput(t, f, "Hca1", func(b []byte) []byte { return b }, tt.ref, tt.ours)
		})
	}
	t.Run("errors", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, "no RDMA device has node GUID 0x0000000000999999", "smpquery", "-C", "0x999999", "nodeinfo", "0")
		ibtoolFails(t, f, "Hca1", 2, "-C names the device, so -P takes a port number", "smpquery", "-C", "ibsim0", "-P", "ibsim0/1", "nodeinfo", "0")
		ibtoolFails(t, f, "Hca1", 2, `invalid DR path "0,1,,": empty entry 2`, "smpquery", "nodeinfo", "0,1,,")
		// The attach point has port 1 only: a -P that names another port
		// is looked for, not ignored.
		ibtoolFails(t, f, "Hca1", 2, "ibsim0 has no port 2", "smpquery", "-P", "ibsim0/2", "nodeinfo", "0")
		ibtoolFails(t, f, "Hca1", 2, "no local port has GUID 0x0000000000999999", "smpquery", "-P", "0x0000000000999999", "nodeinfo", "0")
	})
}

var (
	ibstatNodeGUID = regexp.MustCompile(`Node GUID: (0x[0-9a-f]{16})`)
	ibstatPortGUID = regexp.MustCompile(`Port GUID: (0x[0-9a-f]{16})`)
)

// simGUIDs returns the node GUID and port GUID of the simulator's attach
// point at host, as ibstat reads them.
func simGUIDs(t *testing.T, f *simfabric.Fabric, host string) (node, port string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, host, "ibstat", "ibsim0")
	if err != nil || exit != 0 {
		t.Fatalf("ibstat ibsim0: exit %d, %v, stderr %q", exit, err, errOut)
	}
	n, p := ibstatNodeGUID.FindSubmatch(out), ibstatPortGUID.FindSubmatch(out)
	if n == nil || p == nil {
		t.Fatalf("ibstat ibsim0 shows no node and port GUID:\n%s", out)
	}
	return string(n[1]), string(p[1])
}

// TestViaSATools checks python-rdma's --sa on the tools that had none:
// SMP Gets answered by the SA's records, a DR target found as a LID
// through the SA's LinkRecords. Each prints what infiniband-diags' SMPs
// read; the check scripts, whose reference is checked elsewhere, print
// what ibtool prints without --sa.
func TestViaSATools(t *testing.T) {
	f := smallFabric(t)
	for _, c := range []struct{ ref, ours []string }{
		{[]string{"smpdump", "-D", "0,1,3", "0x15"}, []string{"smpdump", "--sa", "-D", "0,1,3", "0x15"}},
		// By LID, a CA: a switch's LocalPortNum is the SA's, the port the
		// SM's SMPs entered by, which on this fabric's parallel links is
		// whichever link the SM's discovery heard from first.
		{[]string{"smpdump", "4", "0x11"}, []string{"smpdump", "--sa", "4", "0x11"}},
		{[]string{"ibtracert", "1", "4"}, []string{"ibtracert", "--sa", "1", "4"}},
		{[]string{"ibtracert", "4", "6"}, []string{"ibtracert", "--sa", "4", "6"}},
		{[]string{"ibportstate", "-D", "0,1,3", "1", "query"}, []string{"ibportstate", "--sa", "-D", "0,1,3", "1", "query"}},
		{[]string{"ibportstate", "-D", "0,1", "3", "query"}, []string{"ibportstate", "--sa", "-D", "0,1", "3", "query"}},
		{[]string{"perfquery", "3", "1"}, []string{"perfquery", "--sa", "0,1,3", "1"}},
		{[]string{"perfquery", "-x", "1", "3"}, []string{"perfquery", "--sa", "-x", "0,1", "3"}},
	} {
		t.Run(strings.Join(c.ours, " "), func(t *testing.T) {
			sameOutput(t, f, "Hca1", func(b []byte) []byte { return b }, c.ref, c.ours)
		})
	}
	for _, c := range [][]string{
		{"ibchecknode", "3"}, {"ibcheckport", "3", "1"}, {"ibcheckportstate", "3", "1"},
		{"ibcheckportwidth", "3", "1"}, {"ibcheckerrs", "3", "1"}, {"ibdatacounts", "3", "1"},
		{"ibswportwatch", "-n", "1", "3", "1"},
	} {
		t.Run(strings.Join(c, " ")+" --sa", func(t *testing.T) {
			want := run(t, "ibtool "+c[0], func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunIbtool(ctx, ibtoolBin, "Hca1", c[0], c[1:]...)
			})
			got := run(t, "ibtool "+c[0]+" --sa", func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunIbtool(ctx, ibtoolBin, "Hca1", c[0], append([]string{"--sa"}, c[1:]...)...)
			})
			// The data counters move with other tests' MADs.
			counts := regexp.MustCompile(`(Data|Pkts):\.*\d+`)
			w, g := counts.ReplaceAll(want.stdout, []byte("$1")), counts.ReplaceAll(got.stdout, []byte("$1"))
			if want.exit != got.exit || !bytes.Equal(w, g) {
				t.Errorf("with --sa exit %d, without %d (-without +with):\n%s", got.exit, want.exit, simfabric.Diff(w, g))
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 3, "no LinkRecord from Lid 1 port 7", "smpquery", "--sa", "nodeinfo", "-D", "0,1,7")
		ibtoolFails(t, f, "Hca1", 2, "performance MADs are LID routed", "perfquery", "0,1")
	})
}

// TestSAPath checks python-rdma's --sa-path: the SA is asked at the path
// given instead of the local port's SM (opensm runs on Switch1, LID 1 and
// port GUID 0x200000), and it implies --sa.
func TestSAPath(t *testing.T) {
	f := smallFabric(t)
	ref := []string{"smpquery", "nodeinfo", "4"}
	for _, sa := range []string{"1", "0x200000", "IBPath(DLID=1, SL=0)"} {
		t.Run(sa, func(t *testing.T) {
			sameOutput(t, f, "Hca1", func(b []byte) []byte { return b }, ref, []string{"smpquery", "--sa-path", sa, "nodeinfo", "4"})
		})
	}
	t.Run("errors", func(t *testing.T) {
		// Hca2 (LID 4) runs no SA.
		ibtoolFails(t, f, "Hca1", 3, "SubnAdmGetTable(NodeRecord) to Lid 4: no response", "smpquery", "--sa-path", "4", "-t", "100", "nodeinfo", "4")
		ibtoolFails(t, f, "Hca1", 2, "SA queries are LID routed", "smpquery", "--sa-path", "0,1", "nodeinfo", "4")
	})
}

// TestDiscoverySA checks python-rdma's --sa and --sa-path on the
// discovery tools: they discover through the SA, as --discovery sa does,
// and cannot go with another --discovery.
func TestDiscoverySA(t *testing.T) {
	f := smallFabric(t)
	for _, c := range []struct{ ref, ours []string }{
		{[]string{"ibnetdiscover"}, []string{"ibnetdiscover", "--sa"}},
		{[]string{"iblinkinfo"}, []string{"iblinkinfo", "--sa-path", "1"}},
		{[]string{"ibswitches"}, []string{"ibswitches", "--sa", "--discovery", "SA"}},
	} {
		t.Run(strings.Join(c.ours, " "), func(t *testing.T) {
			sameOutput(t, f, "Hca1", maskTopology, c.ref, c.ours)
		})
	}
	t.Run("errors", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, "--sa discovers through the SA; it cannot go with --discovery dr", "ibnetdiscover", "--sa", "--discovery", "DR")
		// Hca2 (LID 4) runs no SA: the walk asks it and says so.
		ibtoolFails(t, f, "Hca1", 3, "to Lid 4: no response", "ibswitches", "--sa-path", "4", "-t", "100")
	})
}

// TestIbtracertPythonRdma checks python-rdma's ibtracert forms against
// infiniband-diags' two-address trace: one address traces from this port
// (Hca1, LID 2), -r swaps source and destination.
func TestIbtracertPythonRdma(t *testing.T) {
	f := smallFabric(t)
	for _, c := range []struct{ ref, ours []string }{
		{[]string{"ibtracert", "4", "2"}, []string{"ibtracert", "-r", "2", "4"}},
		{[]string{"ibtracert", "2", "4"}, []string{"ibtracert", "4"}},
		{[]string{"ibtracert", "4", "2"}, []string{"ibtracert", "--reverse", "4"}},
		{[]string{"ibtracert", "-n", "6", "1"}, []string{"ibtracert", "-n", "-r", "1", "6"}},
	} {
		t.Run(strings.Join(c.ours, " "), func(t *testing.T) {
			sameOutput(t, f, "Hca1", func(b []byte) []byte { return b }, c.ref, c.ours)
		})
	}
}

// TestIblinkinfoPythonRdma checks python-rdma's iblinkinfo flags against
// infiniband-diags' iblinkinfo: --up prints its lines less the Polling
// ports, -g (port GUIDs, which infiniband-diags prints anyway) the same.
func TestIblinkinfoPythonRdma(t *testing.T) {
	f := smallFabric(t)
	dropPolling := func(b []byte) []byte {
		var out []byte
		for _, line := range bytes.SplitAfter(b, []byte("\n")) {
			if !bytes.Contains(line, []byte("Polling)")) {
				out = append(out, line...)
			}
		}
		return out
	}
	t.Run("--up", func(t *testing.T) {
		sameOutput(t, f, "Hca1", dropPolling, []string{"iblinkinfo"}, []string{"iblinkinfo", "--up"})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, _, _, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "iblinkinfo", "--up")
		if err != nil || bytes.Contains(out, []byte("Polling")) {
			t.Errorf("iblinkinfo --up shows Polling ports (%v):\n%s", err, out)
		}
	})
	for _, c := range [][]string{{"-g"}, {"--portguids", "-l"}} {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			sameOutput(t, f, "Hca1", func(b []byte) []byte { return b }, append([]string{"iblinkinfo"}, c[1:]...), append([]string{"iblinkinfo"}, c...))
		})
	}
}

// TestSmpdumpDecode checks python-rdma's smpdump -p: after the reply's
// header, the attribute's fields are what infiniband-diags' smpquery
// prints for the same attribute (less its "# Node info: ..." line). The
// M_Key shows, as in smpdump's hex, where smpquery says <not displayed>.
func TestSmpdumpDecode(t *testing.T) {
	mkey := regexp.MustCompile(`(?m)^Mkey:\.*.*$`)
	f := smallFabric(t)
	for _, c := range []struct{ ref, ours []string }{
		{[]string{"smpquery", "nodeinfo", "3"}, []string{"smpdump", "-p", "3", "0x11"}},
		{[]string{"smpquery", "-D", "portinfo", "0,1", "3"}, []string{"smpdump", "--decode", "0,1", "0x15", "3"}},
		{[]string{"smpquery", "switchinfo", "1"}, []string{"smpdump", "-p", "1", "0x12"}},
	} {
		t.Run(strings.Join(c.ours, " "), func(t *testing.T) {
			ref := run(t, c.ref[0], func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunReference(ctx, "Hca1", c.ref[0], c.ref[1:]...)
			})
			got := run(t, "ibtool "+c.ours[0], func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunIbtool(ctx, ibtoolBin, "Hca1", c.ours[0], c.ours[1:]...)
			})
			_, want, _ := bytes.Cut(ref.stdout, []byte("\n"))
			_, fields, ok := bytes.Cut(got.stdout, []byte("AttributeModifier:"))
			if ok {
				_, fields, _ = bytes.Cut(fields, []byte("\n# "))
				_, fields, _ = bytes.Cut(fields, []byte("\n"))
			}
			want, fields = mkey.ReplaceAll(want, []byte("Mkey")), mkey.ReplaceAll(fields, []byte("Mkey"))
			if ref.exit != 0 || got.exit != 0 || !ok || !bytes.Equal(want, fields) {
				t.Errorf("exit %d and %d; smpdump's fields differ from smpquery's (-want +got):\n%s\n%s", ref.exit, got.exit, simfabric.Diff(want, fields), got.stdout)
			}
		})
	}
}

// TestIbswportwatchCounterSets checks python-rdma's ibswportwatch counter
// sets: a poll shows the counters infiniband-diags' perfquery shows for
// the same set, by their IBA names, without perfquery's PortSelect and
// CounterSelect.
func TestIbswportwatchCounterSets(t *testing.T) {
	f := smallFabric(t)
	label := regexp.MustCompile(`(?m)^([A-Za-z0-9]+):(\.*)`)
	for _, set := range []string{"-E", "-D"} { // ibsim has no SL counters (-X, -S)
		t.Run(set, func(t *testing.T) {
			ref := run(t, "perfquery", func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunReference(ctx, "Hca1", "perfquery", set, "3", "1")
			})
			got := run(t, "ibtool ibswportwatch", func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibswportwatch", set, "-n", "0", "3", "1")
			})
			var want []byte
			for _, line := range bytes.SplitAfter(ref.stdout, []byte("\n"))[1:] {
				if !bytes.HasPrefix(line, []byte("PortSelect:")) && !bytes.HasPrefix(line, []byte("CounterSelect:")) {
					want = append(want, line...)
				}
			}
			want = label.ReplaceAll(want, []byte("$1.$2"))
			head, fields, _ := bytes.Cut(got.stdout, []byte("\n"))
			if ref.exit != 0 || got.exit != 0 || string(head) != "# Port counters: Lid 3 port 1" || !bytes.Equal(want, fields) {
				t.Errorf("exit %d and %d, header %q (-want +got):\n%s", ref.exit, got.exit, head, simfabric.Diff(want, fields))
			}
		})
	}
}

// TestIntNames checks python-rdma's --int-names: the names are those of
// python-rdma's documented dump of MADClassPortInfo (doc/ibtool.rst, its
// query example), dotted to column 33 without a colon, and the values
// are what infiniband-diags prints beside its labels.
func TestIntNames(t *testing.T) {
	f := smallFabric(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "query", "--int-names", "PerfGet", "ClassPortInfo", "3")
	if err != nil || exit != 0 {
		t.Fatalf("query --int-names: exit %d, %v, %s", exit, err, errOut)
	}
	python := []string{"BaseVersion", "ClassVersion", "CapabilityMask", "CapabilityMask2", "RespTimeValue",
		"RedirectGID", "RedirectTC", "RedirectSL", "RedirectFL", "RedirectLID", "RedirectPKey", "RedirectQP", "RedirectQKey",
		"TrapGID", "TrapTC", "TrapSL", "TrapFL", "TrapLID", "TrapPKey", "TrapHL", "TrapQP", "TrapQKey"}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		name, _, _ := strings.Cut(line, ".")
		names = append(names, name)
		if i := strings.IndexFunc(line[len(name):], func(r rune) bool { return r != '.' }); len(name)+i != 33 {
			t.Errorf("value of %q not at column 33", line)
		}
	}
	if diff := cmp.Diff(python, names); diff != "" {
		t.Errorf("names (-python-rdma +ibtool):\n%s", diff)
	}

	// Only the names change: the values are infiniband-diags'.
	values := func(b []byte) []byte { return regexp.MustCompile(`(?m)^[A-Za-z0-9]+:?\.+`).ReplaceAll(b, nil) }
	sameOutput(t, f, "Hca1", values, []string{"smpquery", "nodeinfo", "3"}, []string{"smpquery", "--int-names", "nodeinfo", "3"})
	sameOutput(t, f, "Hca1", values, []string{"perfquery", "3", "1"}, []string{"perfquery", "--int-names", "3", "1"})
}
