package verbs

import "fmt"

// GIDEntryType is a GID's type as ibv_query_gid_ex and
// ibv_query_gid_table report it (enum ibv_gid_type). It is not the sysfs
// numbering GID.Type uses (GIDTypeIBRoCEv1, GIDTypeRoCEv2).
type GIDEntryType uint32

// GID entry types.
const (
	GIDEntryIB     GIDEntryType = 0
	GIDEntryRoCEv1 GIDEntryType = 1
	GIDEntryRoCEv2 GIDEntryType = 2
)

// String names the type as rdma-core's GID sysfs files word it ("IB",
// "RoCE v1", "RoCE v2").
func (t GIDEntryType) String() string {
	switch t {
	case GIDEntryIB:
		return "IB"
	case GIDEntryRoCEv1:
		return "RoCE v1"
	case GIDEntryRoCEv2:
		return "RoCE v2"
	}
	return fmt.Sprintf("GID type %d", uint32(t))
}

// GIDEntry is one valid entry of a port's GID table (struct
// ibv_gid_entry): the GID, where it sits, its type, and the network
// device it belongs to (0 on InfiniBand).
type GIDEntry struct {
	GID         [16]byte     `json:"-"`
	Index       int          `json:"index"`
	Port        int          `json:"port"`
	Type        GIDEntryType `json:"type"`
	NetdevIndex int          `json:"ndevIfindex"`
}

// QueryGIDEx reads entry index of port's GID table with its type and
// network device (ibv_query_gid_ex). An index with no GID in it is an
// error wrapping ENODATA; a library or provider without the query, one
// wrapping EOPNOTSUPP or EPROTONOSUPPORT.
func (c *Context) QueryGIDEx(port, index int) (GIDEntry, error) {
	c.use("QueryGIDEx")
	if port < 1 || index < 0 {
		panic(fmt.Sprintf("verbs: QueryGIDEx(%d, %d) on %s: ports count from 1, indexes from 0", port, index, c.name))
	}
	e, err := drv.queryGIDEx(c.h, port, index)
	if err != nil {
		return GIDEntry{}, verbError("ibv_query_gid_ex", fmt.Sprintf("%s port %d GID index %d", c.name, port, index), err)
	}
	return e, nil
}

// QueryGIDTable reads the valid GIDs of every port of the device
// (ibv_query_gid_table) into a table of at most size entries; the sum of
// the ports' GIDTblLen always fits. A size smaller than the number of
// valid GIDs is an error wrapping EINVAL.
func (c *Context) QueryGIDTable(size int) ([]GIDEntry, error) {
	c.use("QueryGIDTable")
	if size < 0 {
		panic(fmt.Sprintf("verbs: QueryGIDTable(%d) on %s: want a size of at least 0", size, c.name))
	}
	t, err := drv.queryGIDTable(c.h, size)
	if err != nil {
		return nil, verbError("ibv_query_gid_table", fmt.Sprintf("%s (%d entries)", c.name, size), err)
	}
	return t, nil
}
