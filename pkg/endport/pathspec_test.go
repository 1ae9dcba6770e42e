package endport

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestParsePathSpec(t *testing.T) {
	fe801 := mustGID(t, "fe80::1")
	tests := []struct {
		in   string
		want *PathSpec
		str  string
	}{
		{"IBPath(DLID=12)", &PathSpec{DLID: ptr[rdma.LID](12)}, "IBPath(DLID=12)"},
		{"IBPath(\n DLID = 0x0c ,\tSL=2\r\n)", &PathSpec{DLID: ptr[rdma.LID](12), SL: ptr[uint8](2)}, "IBPath(DLID=12, SL=2)"},
		{"IBPath(DLID=010)", &PathSpec{DLID: ptr[rdma.LID](10)}, "IBPath(DLID=10)"}, // never octal
		// python-rdma's own repr output (tests/path.py builds these).
		{"IBPath(end_port=None, DGID=GID('fe80::1'))", &PathSpec{DGID: &fe801}, "IBPath(DGID=fe80::1)"},
		{"IBPath(end_port=None, DGID=GID('fe80::1'), SL=10, pkey=0xff)", &PathSpec{DGID: &fe801, SL: ptr[uint8](10), PKey: ptr[uint16](0xff)}, "IBPath(DGID=fe80::1, SL=10, pkey=0xff)"},
		{"IBPath(end_port=None, DGID=GID('fe80::1'), DLID=15, SLID=18)", &PathSpec{DGID: &fe801, DLID: ptr[rdma.LID](15), SLID: ptr[rdma.LID](18)}, "IBPath(DGID=fe80::1, DLID=15, SLID=18)"},
		{"IBDRPath(end_port='mlx4_0/1', DLID=0xffff, SLID=0xffff, dqpn=0, drPath=0:1:, qkey=0x0, sqpn=0)",
			&PathSpec{DR: true, EndPort: &Local{CA: "mlx4_0", Port: 1}, DLID: ptr[rdma.LID](0xffff), SLID: ptr[rdma.LID](0xffff), DQPN: ptr[uint32](0), DRPath: DRPath{0, 1}, QKey: ptr[uint32](0), SQPN: ptr[uint32](0)},
			"IBDRPath(end_port=mlx4_0/1, DLID=65535, SLID=65535, dqpn=0, drPath=0:1:, qkey=0x0, sqpn=0)"},
		{`IBPath(end_port="mlx5_0", DGID=GID("fe80::1"), has_grh=True)`, &PathSpec{EndPort: &Local{CA: "mlx5_0"}, DGID: &fe801, HasGRH: ptr(true)}, "IBPath(end_port=mlx5_0, DGID=fe80::1, has_grh=1)"},
		{"IBPath(DGID=GID(fe80::1), has_grh=0)", &PathSpec{DGID: &fe801, HasGRH: ptr(false)}, "IBPath(DGID=fe80::1, has_grh=0)"},
		{"IBPath(DGID=fe80::1, has_grh=False)", &PathSpec{DGID: &fe801, HasGRH: ptr(false)}, "IBPath(DGID=fe80::1, has_grh=0)"},
		{"IBPath(end_port=0002:c903:00a1:b2c4, DLID=1)", &PathSpec{EndPort: &Local{Kind: ByGUID, GUID: 0x0002c90300a1b2c4}, DLID: ptr[rdma.LID](1)}, "IBPath(end_port=0x0002c90300a1b2c4, DLID=1)"},
		{"IBPath(end_port=fe80::2, DLID=1)", &PathSpec{EndPort: &Local{Kind: ByGID, GID: mustGID(t, "fe80::2")}, DLID: ptr[rdma.LID](1)}, "IBPath(end_port=fe80::2, DLID=1)"},
		{"IBPath(DLID=1, SGID=fe80::2, hop_limit=255, traffic_class=0x10, flow_label=0xfffff, pkey_index=3, dqpn=1, sqpn=1, qkey=0x80010000, retries=3, resp_time=20, packet_life_time=18)",
			&PathSpec{DLID: ptr[rdma.LID](1), SGID: ptr(mustGID(t, "fe80::2")), HopLimit: ptr[uint8](255), TrafficClass: ptr[uint8](16), FlowLabel: ptr[uint32](0xfffff),
				PKeyIndex: ptr[uint16](3), DQPN: ptr[uint32](1), SQPN: ptr[uint32](1), QKey: ptr[uint32](0x80010000), Retries: ptr[uint8](3), RespTime: ptr[uint8](20), PacketLifeTime: ptr[uint8](18)},
			"IBPath(DLID=1, SGID=fe80::2, dqpn=1, flow_label=1048575, hop_limit=255, packet_life_time=18, pkey_index=3, qkey=0x80010000, resp_time=20, retries=3, sqpn=1, traffic_class=16)"},
		// A DR path with a LID at either end.
		{"IBDRPath(DLID=6, SLID=3, drSLID=3, drPath=0:12:)", &PathSpec{DR: true, DLID: ptr[rdma.LID](6), SLID: ptr[rdma.LID](3), DRSLID: ptr[rdma.LID](3), DRPath: DRPath{0, 12}}, "IBDRPath(DLID=6, SLID=3, drPath=0:12:, drSLID=3)"},
		{"IBDRPath(drPath=0:1:3, drDLID=9)", &PathSpec{DR: true, DRPath: DRPath{0, 1, 3}, DRDLID: ptr[rdma.LID](9)}, "IBDRPath(drDLID=9, drPath=0:1:3:)"},
		{"IBDRPath(drPath=0:)", &PathSpec{DR: true, DRPath: DRPath{0}}, "IBDRPath(drPath=0:)"},
		{"IBDRPath(SL=0)", &PathSpec{DR: true, SL: ptr[uint8](0)}, "IBDRPath(SL=0)"},
		{"IBDRPath(end_port=None)", &PathSpec{DR: true}, "IBDRPath(end_port=None)"}, // python-rdma's default IBDRPath: the local port
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePathSpec(tt.in)
			if err != nil {
				t.Fatalf("ParsePathSpec(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.str, got.String()); diff != "" {
				t.Errorf("unexpected String (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePathSpecErrors(t *testing.T) {
	const form = "want IBPath(key=value, ...) or IBDRPath(key=value, ...), such as IBPath(DLID=12, SL=1)"
	tests := []struct{ in, reason string }{
		// python-rdma's tests/path.py test_str_bad, where they have "(".
		{"Moo()", `unknown path class "Moo"; want IBPath or IBDRPath`},
		{"IBPath()", "no key=value items; " + form},
		{"IBPath(end_port=Moo)", "an IBPath needs DLID or DGID to address a port"},
		{"IBPath(XX=1)", "XX: unknown key"},
		{"IBPath(DLID=1x)", "DLID: want a decimal number or 0x and hex digits"},
		{"IBPath(DLID=1 , x)", "key x has no value"},
		{"IBPath(DLID=1 , SLID=)", "key SLID has no value"},
		// Shape.
		{"IBPath", form},
		{"IBPath(DLID=1", form},
		{"IBPath(DLID=1) ", "surrounding whitespace; " + form},
		{"IBPath (DLID=1)", `unknown path class "IBPath "; want IBPath or IBDRPath`},
		{"ibpath(DLID=1)", `unknown path class "ibpath"; want IBPath or IBDRPath`},
		{"(DLID=1)", `unknown path class ""; want IBPath or IBDRPath`},
		{"Path(retries=1)", "python-rdma's Path is not supported; want IBPath or IBDRPath"},
		{"LazyIBPath(DLID=1)", "python-rdma's LazyIBPath is not supported; want IBPath or IBDRPath"},
		{"IBPath(  )", "no key=value items; " + form},
		{"IBPath(DLID=1,)", "empty key or item; " + form},
		{"IBPath(,DLID=1)", "empty key or item; " + form},
		{"IBPath(=1)", "empty key or item; " + form},
		{"IBPath(DLID)", "key DLID has no value"},
		{"IBPath(DLID=1,DLID=1)", "key DLID given twice"},
		{"IBPath(DLID=1=2)", "DLID: want a decimal number or 0x and hex digits"},
		// Values.
		{"IBPath(DLID=65536)", "DLID: out of range 0 to 65535"},
		{"IBPath(DLID=-1)", "DLID: want a decimal number or 0x and hex digits"},
		{"IBPath(DLID=0o17)", "DLID: want a decimal number or 0x and hex digits"},
		{"IBPath(DLID=1 2)", "DLID: want a decimal number or 0x and hex digits"},
		{"IBPath(DLID=1, SL=16)", "SL: out of range 0 to 15"},
		{"IBPath(DLID=1, dqpn=0x1000000)", "dqpn: out of range 0 to 16777215"},
		{"IBPath(DLID=1, flow_label=0x100000)", "flow_label: out of range 0 to 1048575"},
		{"IBPath(DLID=1, qkey=0x100000000)", "qkey: out of range 0 to 4294967295"},
		{"IBPath(DLID=1, resp_time=32)", "resp_time: out of range 0 to 31"},
		{"IBPath(DLID=1, packet_life_time=64)", "packet_life_time: out of range 0 to 63"},
		{"IBPath(DLID=1, has_grh=2)", "has_grh: want 0, 1, False or True"},
		{"IBPath(DLID=1, has_grh=true)", "has_grh: want 0, 1, False or True"},
		{"IBPath(DGID=fe80::1x)", "DGID: want a GID such as fe80::2:c903:a1:b2c4"},
		{"IBPath(DGID='fe80::1')", "DGID: want a GID such as fe80::2:c903:a1:b2c4"},
		{"IBPath(DGID=GID('fe80::1')", "DGID: GID( without )"},
		{"IBPath(DGID=GID('fe80::1\"))", "DGID: unbalanced quotes"},
		{"IBPath(DGID=fe80::1%mlx5_0)", "DGID: want a GID such as fe80::2:c903:a1:b2c4"},
		{"IBPath(DLID=1, end_port='mlx5_0)", "end_port: unbalanced quotes"},
		{"IBPath(DLID=1, end_port=')", "end_port: unbalanced quotes"},
		{"IBPath(DLID=1, end_port=mlx5'0)", "end_port: unbalanced quotes"},
		{"IBPath(DLID=1, end_port=1)", "end_port: a port number alone names no device; want a device (mlx5_0), device/port (mlx5_0/1), port GUID (0x0002c90300a1b2c4, 0002:c903:00a1:b2c4) or port GID (fe80::2:c903:a1:b2c4)"},
		{"IBPath(DLID=1, end_port=mlx5_0/x)", "end_port: want a decimal port number after /"},
		{"IBPath(DLID=1, end_port='')", "end_port: empty; want a device (mlx5_0), device/port (mlx5_0/1), port GUID (0x0002c90300a1b2c4, 0002:c903:00a1:b2c4) or port GID (fe80::2:c903:a1:b2c4)"},
		// Keys and classes.
		{"IBPath(MTU=4, DLID=1)", "MTU: python-rdma's MTU sets up queue pairs or path queries, not MADs; not supported"},
		{"IBPath(SGID_index=0, DLID=1)", "SGID_index: python-rdma's SGID_index sets up queue pairs or path queries, not MADs; not supported"},
		{"IBPath(dlid=1)", "dlid: unknown key"},
		{"IBPath(DL ID=1)", `"DL ID": unknown key`},
		{"IBPath(\n)", "no key=value items; " + form},
		{"IBPath(DLID=1,\nDLID=1)", "key DLID given twice"},
		{"IBPath(D\nLID=1)", `"D\nLID": unknown key`},
		{"IBPath(drPath=0:1:)", "drPath: an IBPath has no drPath; use IBDRPath for directed routes"},
		{"IBPath(DLID=1, drSLID=1)", "drSLID: an IBPath has no drSLID; use IBDRPath for directed routes"},
		{"IBDRPath(DGID=fe80::1)", "DGID: an IBDRPath has no DGID (a directed-route SMP has no GRH)"},
		{"IBDRPath(has_grh=1)", "has_grh: an IBDRPath has no has_grh (a directed-route SMP has no GRH)"},
		{"IBPath(SL=1)", "an IBPath needs DLID or DGID to address a port"},
		// drPath.
		{"IBDRPath(drPath=0)", "drPath: want port numbers separated by colons, such as 0:1:3: (python-rdma's form; 0: is the local port)"},
		{"IBDRPath(drPath=0,1)", "drPath: want port numbers separated by colons, such as 0:1:3: (python-rdma's form; 0: is the local port)"},
		{"IBDRPath(drPath=:)", "drPath: no port numbers; want port numbers 0 to 255 separated by colons, starting with 0, such as 0:1:3"},
		{"IBDRPath(drPath=0::)", "drPath: empty entry 1; want port numbers 0 to 255 separated by colons, starting with 0, such as 0:1:3"},
		{"IBDRPath(drPath=0::1)", "drPath: empty entry 1; want port numbers 0 to 255 separated by colons, starting with 0, such as 0:1:3"},
		{"IBDRPath(drPath=1:2:)", "drPath: must start with 0, the local port (did you mean 0:1:2?)"},
		{"IBDRPath(drPath=0:256:)", "drPath: entry 1 is 256; a port number is 0 to 255"},
		{"IBDRPath(drPath=0" + strings.Repeat(":1", 64) + ":)", "drPath: 64 hops; at most 63 fit in an SMP"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePathSpec(tt.in)
			want := "invalid path spec " + strconv.Quote(tt.in) + ": " + tt.reason
			if diff := cmp.Diff(want, errText(err)); diff != "" {
				t.Errorf("ParsePathSpec(%q) = %v: unexpected error (-want +got):\n%s", tt.in, got, diff)
			}
		})
	}
}

// TestSpecKeysSorted keeps String's key order python-rdma's: ASCII.
func TestSpecKeysSorted(t *testing.T) {
	var names []string
	for _, k := range specKeys() {
		names = append(names, k.name)
		if !k.ib && !k.dr {
			t.Errorf("key %s belongs to no class", k.name)
		}
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("specKeys not in ASCII order: %v", names)
	}
}

// TestPathSpecAllKeys sets every key and checks the spec reads back.
func TestPathSpecAllKeys(t *testing.T) {
	for _, dr := range []bool{false, true} {
		class, items := "IBPath", []string{"end_port=mlx5_0/1"}
		if dr {
			class = "IBDRPath"
		}
		for _, k := range specKeys() {
			if (dr && !k.dr) || (!dr && !k.ib) {
				continue
			}
			v := "1"
			switch k.name {
			case "SGID", "DGID":
				v = "fe80::1"
			case "drPath":
				v = "0:1:"
			}
			items = append(items, k.name+"="+v)
		}
		in := class + "(" + strings.Join(items, ", ") + ")"
		p, err := ParsePathSpec(in)
		if err != nil {
			t.Fatalf("ParsePathSpec(%q): %v", in, err)
		}
		want := strings.ReplaceAll(strings.ReplaceAll(in, "pkey=1", "pkey=0x1"), "qkey=1", "qkey=0x1")
		if diff := cmp.Diff(want, p.String()); diff != "" {
			t.Errorf("unexpected String (-want +got):\n%s", diff)
		}
	}
}
