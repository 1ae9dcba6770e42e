package e2e

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMKeyOnTheWire checks that the SMPs ibtool sends carry the M_Key
// infiniband-diags' do for the same command, and are otherwise the same
// bytes but for the transaction ID. ibsim's SMA ignores M_Keys, so the
// test reads what each side sent rather than what the fabric did: libibmad
// hex-dumps every MAD it sends at -d -d ("send buf", after the 64-byte
// umad header), ibtool at -vv ("sending to ...", a hex.Dump of the MAD).
// Both are SMPs to the same nodes, so the multisets must match.
func TestMKeyOnTheWire(t *testing.T) {
	f := smallFabric(t)
	conf := filepath.Join(t.TempDir(), "ibdiag.conf")
	if err := os.WriteFile(conf, []byte("m_key=0x99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool string
		args []string
		key  string // the M_Key bytes every SMP must carry, in hex
		// staleGetData: the C tool's Gets carry what its buffer held
		// (ibportstate reads PortInfo, perfquery SwitchInfo, into the
		// buffer NodeInfo came in), which no SMA reads; the data of Gets
		// is left out.
		staleGetData bool
	}{
		{"smpquery", []string{"-y", "0x1234", "portinfo", "1"}, "0000000000001234", false},
		{"smpquery", []string{"-y", "0xfedcba9876543210", "-D", "portinfo", "0,1"}, "fedcba9876543210", false},
		{"smpquery", []string{"--m_key", "4660", "-D", "nodeinfo", "0,1,3"}, "0000000000001234", false},
		{"smpquery", []string{"-z", conf, "nodedesc", "2"}, "0000000000000099", false},
		{"smpquery", []string{"-z", conf, "-y", "7", "nodedesc", "2"}, "0000000000000007", false},
		{"sminfo", []string{"-y", "0x1234"}, "0000000000001234", false},
		{"ibroute", []string{"-y", "0x1234", "1"}, "0000000000001234", false},
		{"ibportstate", []string{"-y", "0x1234", "2", "1"}, "0000000000001234", true},
		{"ibtracert", []string{"-y", "0x1234", "2", "3"}, "0000000000001234", false},
		{"perfquery", []string{"-y", "0x1234", "-a", "-l", "1"}, "0000000000001234", true},
	}
	for _, tt := range tests {
		name := strings.ReplaceAll(tt.tool+" "+strings.Join(tt.args, " "), conf, "ibdiag.conf")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ref := run(t, tt.tool, func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunReference(ctx, "Hca1", tt.tool, append([]string{"-d", "-d"}, tt.args...)...)
			})
			ours := run(t, "ibtool "+tt.tool, func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunIbtool(ctx, ibtoolBin, "Hca1", tt.tool, append([]string{"-vv"}, tt.args...)...)
			})
			if ref.exit != 0 || ours.exit != 0 {
				t.Fatalf("exit %d (infiniband-diags), %d (ibtool); stderr:\n%s\n%s", ref.exit, ours.exit, ref.stderr, ours.stderr)
			}
			want, err := libibmadSentSMPs(ref.stderr, tt.staleGetData)
			if err != nil {
				t.Fatalf("infiniband-diags' dump: %v", err)
			}
			got, err := ibtoolSentSMPs(ours.stderr, tt.staleGetData)
			if err != nil {
				t.Fatalf("ibtool's dump: %v", err)
			}
			if len(want) == 0 {
				t.Fatalf("infiniband-diags sent no SMP; stderr:\n%s", ref.stderr)
			}
			for _, m := range got {
				if k := m[48:64]; k != tt.key {
					t.Errorf("ibtool sent an SMP with M_Key %s, want %s:\n%s", k, tt.key, m)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the SMPs sent differ from infiniband-diags' (-want +got), as hex without the TID:\n%s", diff)
			}
		})
	}
}

// smpHex returns an SMP (LID-routed or directed-route) as hex with its
// transaction ID (bytes 8-15) zeroed, and a Get's data (bytes 64-127)
// too when noGetData, or "" for another class.
func smpHex(m []byte, noGetData bool) string {
	if len(m) < 256 || (m[1] != 0x01 && m[1] != 0x81) {
		return ""
	}
	m = slices.Clone(m[:256])
	clear(m[8:16])
	if noGetData && m[3] == 0x01 {
		clear(m[64:128])
	}
	return hex.EncodeToString(m)
}

// libibmadHexLine is a line of libibmad's xdump: groups of four hex digits.
var libibmadHexLine = regexp.MustCompile(`^[0-9a-f]{2,4}( [0-9a-f]{2,4})*$`)

// libibmadSentSMPs returns the SMPs a -d -d run of an infiniband-diags tool
// dumped as sent, sorted.
func libibmadSentSMPs(stderr []byte, noGetData bool) ([]string, error) {
	lines := strings.Split(string(stderr), "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if lines[i] != "send buf" {
			continue
		}
		var buf []byte
		for i+1 < len(lines) && libibmadHexLine.MatchString(lines[i+1]) {
			i++
			b, err := hex.DecodeString(strings.ReplaceAll(lines[i], " ", ""))
			if err != nil {
				return nil, err
			}
			buf = append(buf, b...)
		}
		if len(buf) < 256 {
			return nil, fmt.Errorf("a send buf of %d bytes", len(buf))
		}
		if s := smpHex(buf[len(buf)-256:], noGetData); s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out, nil
}

// ibtoolDumpLine is a line of hex.Dump: an offset, then the bytes.
var ibtoolDumpLine = regexp.MustCompile(`^[0-9a-f]{8}  `)

// ibtoolSentSMPs returns the SMPs a -vv run of ibtool dumped as sent,
// sorted.
func ibtoolSentSMPs(stderr []byte, noGetData bool) ([]string, error) {
	lines := strings.Split(string(stderr), "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "sending to ") {
			continue
		}
		var buf []byte
		for i+1 < len(lines) && ibtoolDumpLine.MatchString(lines[i+1]) {
			i++
			for _, field := range strings.Fields(lines[i][10:]) {
				if strings.HasPrefix(field, "|") {
					break
				}
				b, err := hex.DecodeString(field)
				if err != nil {
					return nil, err
				}
				buf = append(buf, b...)
			}
		}
		if s := smpHex(buf, noGetData); s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out, nil
}

// TestMKeyEverySMP checks that the fabric-wide tools, whose SMPs
// libibnetdisc sends without dumping them, put -y's M_Key in every SMP
// they send, the discovery's and the queries' after it.
func TestMKeyEverySMP(t *testing.T) {
	f := smallFabric(t)
	for _, args := range [][]string{
		{"ibnetdiscover"}, {"iblinkinfo"}, {"ibqueryerrors"}, {"dump_lfts"}, {"ibswitches"},
		{"ibnetdiscover", "--discovery", "lid"}, {"perfquery", "-a", "-l", "1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			ours := run(t, "ibtool "+args[0], func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunIbtool(ctx, ibtoolBin, "Hca1", args[0], append([]string{"-vv", "-y", "0xfedcba9876543210"}, args[1:]...)...)
			})
			// ibqueryerrors exits 1 on counters other tests moved.
			if ours.exit != 0 && ours.exit != 1 {
				t.Fatalf("exit %d; stderr:\n%s", ours.exit, ours.stderr)
			}
			smps, err := ibtoolSentSMPs(ours.stderr, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(smps) == 0 {
				t.Fatal("no SMP sent")
			}
			for _, m := range smps {
				if k := m[48:64]; k != "fedcba9876543210" {
					t.Errorf("an SMP with M_Key %s:\n%s", k, m)
				}
			}
		})
	}
}
