package endport

import "strconv"

// Kind is the form of a target address.
type Kind uint8

// Target kinds. Any is not the kind of a parsed target: passed to
// ParseTarget it lets the format decide.
const (
	Any         Kind = iota // no assertion: the format decides
	LID                     // a unicast LID: 12, 0x1a
	GUID                    // a port GUID: 0x0002c90300a1b2c4, 0002:c903:00a1:b2c4
	GID                     // a port GID: fe80::2:c903:a1:b2c4
	ScopedGID               // a GID and the local end port to reach it from: fe80::1%mlx5_0/1
	DirectRoute             // a directed-route path: 0,1,3
	FullPath                // a python-rdma path spec: IBDRPath(DLID=6, drPath=0:12:)
)

var kindNames = [...]string{
	Any:         "any",
	LID:         "LID",
	GUID:        "GUID",
	GID:         "GID",
	ScopedGID:   "scoped GID",
	DirectRoute: "DR path",
	FullPath:    "path spec",
}

// String names the kind as error messages do: "LID", "DR path", ...
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText renders the kind by its String name, so JSON carries a string.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// flag is the legacy infiniband-diags option that asserts k, or "".
func (k Kind) flag() string {
	switch k {
	case LID:
		return "-L"
	case GUID:
		return "-G"
	case DirectRoute:
		return "-D"
	}
	return ""
}
