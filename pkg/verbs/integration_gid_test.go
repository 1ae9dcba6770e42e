//go:build cgo && !noverbs

package verbs

import (
	"errors"
	"syscall"
	"testing"
)

// skipNoGIDQuery skips where pyverbs does: a library or provider without
// the extended GID queries answers EOPNOTSUPP or EPROTONOSUPPORT.
func skipNoGIDQuery(t *testing.T, err error, what string) {
	t.Helper()
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EPROTONOSUPPORT) {
		t.Skipf("%s is not supported on this device: %v", what, err)
	}
}

// gidTableSize is what pyverbs sizes a GID table with: the sum of the
// ports' GIDTblLen.
func gidTableSize(t *testing.T, ctx *Context) int {
	t.Helper()
	n := 0
	for p := 1; p <= integrationDevice(t, ctx).PhysPortCnt; p++ {
		pa, err := ctx.QueryPort(p)
		ok(t, err)
		n += pa.GIDTblLen
	}
	return n
}

// TestIntegrationQueryGIDEx is DeviceTest.test_query_gid_ex: GID index 0
// of port 1 reads with its type and, for a RoCE GID, its network device
// (siw's GID is of type IB and names none, though its link layer is
// Ethernet); it is the GID ibv_query_gid reads.
func TestIntegrationQueryGIDEx(t *testing.T) {
	ctx := integrationContext(t)
	p, err := ctx.QueryPort(1)
	ok(t, err)
	if p.GIDTblLen == 0 {
		t.Skipf("%s port 1 has no GID table", ctx.Name())
	}
	e, err := ctx.QueryGIDEx(1, 0)
	skipNoGIDQuery(t, err, "ibv_query_gid_ex")
	ok(t, err)
	gid, err := ctx.QueryGID(1, 0)
	ok(t, err)
	if e.GID != gid || e.Index != 0 || e.Port != 1 || e.Type > GIDEntryRoCEv2 {
		t.Errorf("%s port 1 GID 0: entry %+v, want GID %x at index 0 of port 1 with a known type", ctx.Name(), e, gid)
	}
	if (e.Type == GIDEntryRoCEv1 || e.Type == GIDEntryRoCEv2) && e.NetdevIndex == 0 {
		t.Errorf("%s port 1 GID 0 is %s, but names no network device: %+v", ctx.Name(), e.Type, e)
	}
	t.Logf("%s port 1 GID 0: %s, network device %d", ctx.Name(), e.Type, e.NetdevIndex)
}

// TestIntegrationQueryGIDExBadFlow is DeviceTest.test_query_gid_ex_bad_flow:
// an index of port 1's table that the GID table query does not list is
// ENODATA; a port with every index filled (or one index) skips.
func TestIntegrationQueryGIDExBadFlow(t *testing.T) {
	ctx := integrationContext(t)
	p, err := ctx.QueryPort(1)
	ok(t, err)
	used := map[int]bool{}
	if n := gidTableSize(t, ctx); n > 0 {
		table, err := ctx.QueryGIDTable(n)
		skipNoGIDQuery(t, err, "ibv_query_gid_table")
		ok(t, err)
		for _, e := range table {
			if e.Port == 1 {
				used[e.Index] = true
			}
		}
	}
	empty := -1
	for i := 0; p.GIDTblLen > 1 && i < p.GIDTblLen; i++ {
		if !used[i] {
			empty = i
			break
		}
	}
	if empty < 0 {
		t.Skipf("%s port 1: all %d GID indexes populated, cannot check the bad flow", ctx.Name(), p.GIDTblLen)
	}
	e, err := ctx.QueryGIDEx(1, empty)
	skipNoGIDQuery(t, err, "ibv_query_gid_ex")
	var ve *VerbError
	if !errors.As(err, &ve) || !errors.Is(err, syscall.ENODATA) {
		t.Errorf("QueryGIDEx(1, %d) of an empty index: %+v, error %v; want a VerbError wrapping ENODATA", empty, e, err)
	}
}

// TestIntegrationQueryGIDTable is DeviceTest.test_query_gid_table: a
// table the size of all ports' GID tables reads, and each entry is the
// GID ibv_query_gid reads at its port and index.
func TestIntegrationQueryGIDTable(t *testing.T) {
	ctx := integrationContext(t)
	n := gidTableSize(t, ctx)
	if n == 0 {
		t.Skipf("%s has no GID tables", ctx.Name())
	}
	table, err := ctx.QueryGIDTable(n)
	skipNoGIDQuery(t, err, "ibv_query_gid_table")
	ok(t, err)
	if len(table) == 0 || len(table) > n {
		t.Fatalf("%s: GID table of %d entries for room of %d", ctx.Name(), len(table), n)
	}
	for _, e := range table {
		gid, err := ctx.QueryGID(e.Port, e.Index)
		ok(t, err)
		if gid != e.GID {
			t.Errorf("%s port %d GID %d: the table has %x, ibv_query_gid %x", ctx.Name(), e.Port, e.Index, e.GID, gid)
		}
	}
	t.Logf("%s: %d valid GIDs in tables of %d entries", ctx.Name(), len(table), n)
}

// TestIntegrationQueryGIDTableBadFlow is DeviceTest.
// test_query_gid_table_bad_flow: a table of no entries is EINVAL.
func TestIntegrationQueryGIDTableBadFlow(t *testing.T) {
	ctx := integrationContext(t)
	table, err := ctx.QueryGIDTable(0)
	skipNoGIDQuery(t, err, "ibv_query_gid_table")
	var ve *VerbError
	if !errors.As(err, &ve) || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("QueryGIDTable(0): %v, error %v; want a VerbError wrapping EINVAL", table, err)
	}
}
