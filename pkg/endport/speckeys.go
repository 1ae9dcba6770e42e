package endport

import (
	"strconv"
	"strings"
	"sync"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// specKey is one key of a path spec: how to parse its value into a
// PathSpec and format it back.
type specKey struct {
	name   string
	ib, dr bool // whether IBPath, IBDRPath have the key
	parse  func(p *PathSpec, v string) string
	format func(p *PathSpec) (string, bool)
}

// specKeys returns every key but end_port, in ASCII order: the order
// python-rdma's repr sorts them in, and String's. The keys are closures
// built by calls, so the table is built on first use, not by the
// package's init at every start of every tool.
func specKeys() []specKey {
	specKeysOnce.Do(func() { specKeyTable = buildSpecKeys() })
	return specKeyTable
}

var (
	specKeysOnce sync.Once
	specKeyTable []specKey
)

func buildSpecKeys() []specKey {
	return []specKey{
		gidKey("DGID", func(p *PathSpec) **rdma.GID { return &p.DGID }),
		both(uintKey("DLID", 0xffff, false, func(p *PathSpec) **rdma.LID { return &p.DLID })),
		gidKey("SGID", func(p *PathSpec) **rdma.GID { return &p.SGID }),
		both(uintKey("SL", 15, false, func(p *PathSpec) **uint8 { return &p.SL })),
		both(uintKey("SLID", 0xffff, false, func(p *PathSpec) **rdma.LID { return &p.SLID })),
		both(uintKey("dqpn", 0xffffff, false, func(p *PathSpec) **uint32 { return &p.DQPN })),
		drOnly(uintKey("drDLID", 0xffff, false, func(p *PathSpec) **rdma.LID { return &p.DRDLID })),
		drPathKey,
		drOnly(uintKey("drSLID", 0xffff, false, func(p *PathSpec) **rdma.LID { return &p.DRSLID })),
		ibOnly(uintKey("flow_label", 0xfffff, false, func(p *PathSpec) **uint32 { return &p.FlowLabel })),
		hasGRHKey,
		ibOnly(uintKey("hop_limit", 0xff, false, func(p *PathSpec) **uint8 { return &p.HopLimit })),
		both(uintKey("packet_life_time", 63, false, func(p *PathSpec) **uint8 { return &p.PacketLifeTime })),
		both(uintKey("pkey", 0xffff, true, func(p *PathSpec) **uint16 { return &p.PKey })),
		both(uintKey("pkey_index", 0xffff, false, func(p *PathSpec) **uint16 { return &p.PKeyIndex })),
		both(uintKey("qkey", 0xffffffff, true, func(p *PathSpec) **uint32 { return &p.QKey })),
		both(uintKey("resp_time", 31, false, func(p *PathSpec) **uint8 { return &p.RespTime })),
		both(uintKey("retries", 0xff, false, func(p *PathSpec) **uint8 { return &p.Retries })),
		both(uintKey("sqpn", 0xffffff, false, func(p *PathSpec) **uint32 { return &p.SQPN })),
		ibOnly(uintKey("traffic_class", 0xff, false, func(p *PathSpec) **uint8 { return &p.TrafficClass })),
	}
}

// unusedKeys are python-rdma path attributes that configure queue pairs,
// SA path record queries or need a bound end port; MADs have no use for
// them. (python-rdma cannot parse SGID_index at all: any key containing
// "GID" is read as a GID.)
var unusedKeys = []string{
	"DLID_bits", "MTU", "SGID_index", "SLID_bits", "dack_resp_time",
	"dqpsn", "drdatomic", "min_rnr_timer", "rate", "sack_resp_time",
	"sqpsn", "srdatomic", "umad_agent_id",
}

var endPortKey = specKey{
	name: "end_port", ib: true, dr: true,
	parse: func(p *PathSpec, v string) string {
		v, ok := unquote(v)
		if !ok {
			return "unbalanced quotes"
		}
		if v == "None" {
			return ""
		}
		l, err := parseLocal(v, false)
		if err != nil {
			return reasonOf(err)
		}
		p.EndPort = &l
		return ""
	},
}

// lookupKey finds key for an IBDRPath (dr) or an IBPath, or says why not.
func lookupKey(key string, dr bool) (specKey, string) {
	if key == endPortKey.name {
		return endPortKey, ""
	}
	for _, k := range specKeys() {
		if k.name != key {
			continue
		}
		switch {
		case dr && !k.dr:
			return k, "an IBDRPath has no " + key + " (a directed-route SMP has no GRH)"
		case !dr && !k.ib:
			return k, "an IBPath has no " + key + "; use IBDRPath for directed routes"
		}
		return k, ""
	}
	for _, u := range unusedKeys {
		if u == key {
			return specKey{}, "python-rdma's " + key + " sets up queue pairs or path queries, not MADs; not supported"
		}
	}
	return specKey{}, "unknown key"
}

func both(k specKey) specKey   { k.ib, k.dr = true, true; return k }
func ibOnly(k specKey) specKey { k.ib = true; return k }
func drOnly(k specKey) specKey { k.dr = true; return k }

// uintKey is a key with an unsigned value no larger than max, written in
// hex (0x...) when hex is set and in decimal otherwise.
func uintKey[T ~uint8 | ~uint16 | ~uint32](name string, max uint64, hex bool, field func(*PathSpec) **T) specKey {
	return specKey{
		name: name,
		parse: func(p *PathSpec, v string) string {
			n, reason := parseNumber(v, max)
			if reason != "" {
				return reason
			}
			x := T(n)
			*field(p) = &x
			return ""
		},
		format: func(p *PathSpec) (string, bool) {
			f := *field(p)
			switch {
			case f == nil:
				return "", false
			case hex:
				return "0x" + strconv.FormatUint(uint64(*f), 16), true
			}
			return strconv.FormatUint(uint64(*f), 10), true
		},
	}
}

// gidKey is an IBPath key with a GID value, bare or as GID('...').
func gidKey(name string, field func(*PathSpec) **rdma.GID) specKey {
	return specKey{
		name: name, ib: true,
		parse: func(p *PathSpec, v string) string {
			if inner, ok := strings.CutPrefix(v, "GID("); ok {
				inner, ok = strings.CutSuffix(inner, ")")
				if !ok {
					return "GID( without )"
				}
				if v, ok = unquote(inner); !ok {
					return "unbalanced quotes"
				}
			}
			g, err := rdma.ParseGID(v)
			if err != nil {
				return "want a GID such as fe80::2:c903:a1:b2c4"
			}
			*field(p) = &g
			return ""
		},
		format: func(p *PathSpec) (string, bool) {
			if g := *field(p); g != nil {
				return g.String(), true
			}
			return "", false
		},
	}
}

var hasGRHKey = specKey{
	name: "has_grh", ib: true,
	parse: func(p *PathSpec, v string) string {
		var b bool
		switch v {
		case "True":
			b = true
		case "False":
		default:
			n, reason := parseNumber(v, 1)
			if reason != "" {
				return "want 0, 1, False or True"
			}
			b = n == 1
		}
		p.HasGRH = &b
		return ""
	},
	format: func(p *PathSpec) (string, bool) {
		switch {
		case p.HasGRH == nil:
			return "", false
		case *p.HasGRH:
			return "1", true
		}
		return "0", true
	},
}

var drPathKey = specKey{
	name: "drPath", dr: true,
	parse: func(p *PathSpec, v string) string {
		if !strings.ContainsRune(v, ':') {
			return "want port numbers separated by colons, such as 0:1:3: (python-rdma's form; 0: is the local port)"
		}
		dr, reason := parseHops(v, ':')
		if reason != "" {
			return reason
		}
		p.DRPath = dr
		return ""
	},
	format: func(p *PathSpec) (string, bool) {
		if p.DRPath == nil {
			return "", false
		}
		return p.DRPath.join(':') + ":", true
	},
}

// unquote strips one pair of matching quotes, ' or ", as python-rdma
// does for end_port and GID('...'). It reports false for a lone quote.
func unquote(v string) (string, bool) {
	if v == "" || (v[0] != '\'' && v[0] != '"') {
		return v, !strings.ContainsAny(v, `'"`)
	}
	if len(v) < 2 || v[len(v)-1] != v[0] {
		return "", false
	}
	v = v[1 : len(v)-1]
	return v, !strings.ContainsAny(v, `'"`)
}
