package verbs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rxeGIDs is a RoCE port's GID table as rxe fills it: the link-local
// GID as RoCE v1 and v2, then an IPv4-mapped address as both, with a
// hole at index 2.
var rxeGIDs = []GIDEntry{
	{GID: [16]byte{0: 0xfe, 1: 0x80, 15: 1}, Index: 0, Port: 1, Type: GIDEntryRoCEv1, NetdevIndex: 2},
	{GID: [16]byte{0: 0xfe, 1: 0x80, 15: 1}, Index: 1, Port: 1, Type: GIDEntryRoCEv2, NetdevIndex: 2},
	{GID: [16]byte{10: 0xff, 11: 0xff, 12: 198, 13: 51, 14: 100, 15: 2}, Index: 3, Port: 1, Type: GIDEntryRoCEv2, NetdevIndex: 2},
}

// TestQueryGIDEx reads entries by index: a valid one is the entry, an
// empty one ENODATA (DeviceTest.test_query_gid_ex and its bad flow).
func TestQueryGIDEx(t *testing.T) {
	tests := []struct {
		port, index int
		want        GIDEntry
		errno       error
	}{
		{1, 0, rxeGIDs[0], nil},
		{1, 3, rxeGIDs[2], nil},
		{1, 2, GIDEntry{}, syscall.ENODATA},
		{2, 0, GIDEntry{}, syscall.ENODATA},
	}
	for _, tt := range tests {
		f := useFake(t)
		f.gids = rxeGIDs
		ctx := must(Open("rxe0"))
		got, err := ctx.QueryGIDEx(tt.port, tt.index)
		var ve *VerbError
		if tt.errno != nil && (!errors.As(err, &ve) || !errors.Is(err, tt.errno)) {
			t.Errorf("QueryGIDEx(%d, %d): error %v, want a VerbError wrapping %v", tt.port, tt.index, err, tt.errno)
		}
		if tt.errno == nil && err != nil {
			t.Errorf("QueryGIDEx(%d, %d): %v", tt.port, tt.index, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("QueryGIDEx(%d, %d): unexpected entry (-want +got):\n%s", tt.port, tt.index, diff)
		}
	}
}

// TestQueryGIDTable reads the valid entries into a table that fits them;
// one too small is EINVAL (DeviceTest.test_query_gid_table and its bad
// flow).
func TestQueryGIDTable(t *testing.T) {
	tests := []struct {
		size  int
		want  []GIDEntry
		errno error
	}{
		{1024, rxeGIDs, nil},
		{3, rxeGIDs, nil},
		{2, nil, syscall.EINVAL},
		{0, nil, syscall.EINVAL},
	}
	for _, tt := range tests {
		f := useFake(t)
		f.gids = rxeGIDs
		ctx := must(Open("rxe0"))
		got, err := ctx.QueryGIDTable(tt.size)
		if (tt.errno == nil) != (err == nil) || tt.errno != nil && !errors.Is(err, tt.errno) {
			t.Errorf("QueryGIDTable(%d): error %v, want %v", tt.size, err, tt.errno)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("QueryGIDTable(%d): unexpected table (-want +got):\n%s", tt.size, diff)
		}
	}
}

// TestGIDEntryTypeString names the types as rdma-core's sysfs does.
func TestGIDEntryTypeString(t *testing.T) {
	var got []string
	for _, ty := range []GIDEntryType{GIDEntryIB, GIDEntryRoCEv1, GIDEntryRoCEv2, 7} {
		got = append(got, ty.String())
	}
	want := []string{"IB", "RoCE v1", "RoCE v2", "GID type 7"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
}

// TestQueryPKey reads the P_Key the driver reports.
func TestQueryPKey(t *testing.T) {
	f := useFake(t)
	f.pkey = 0xffff
	ctx := must(Open("rxe0"))
	got, err := ctx.QueryPKey(1, 0)
	if err != nil || got != 0xffff {
		t.Errorf("QueryPKey(1, 0) = %#x, %v; want 0xffff", got, err)
	}
}

// TestCreateCQOnVector hands the vector to ibv_create_cq; CreateCQ uses
// vector 0.
func TestCreateCQOnVector(t *testing.T) {
	for _, vector := range []int{0, 1, 5} {
		r := newRig(t)
		cq, err := r.ctx.CreateCQOnVector(8, r.ch, vector)
		if err != nil {
			t.Fatal(err)
		}
		if r.f.vector != vector {
			t.Errorf("CreateCQOnVector(8, ch, %d) asked for vector %d", vector, r.f.vector)
		}
		check(cq.Close())
	}
	r := newRig(t)
	r.f.vector = -1
	check(must(r.ctx.CreateCQ(8, nil)).Close())
	if r.f.vector != 0 {
		t.Errorf("CreateCQ asked for vector %d, want 0", r.f.vector)
	}
}

// TestGIDMisuse: negative indexes, sizes and vectors are the caller's bug.
func TestGIDMisuse(t *testing.T) {
	wantPanic(t, "verbs: QueryGIDEx(0, 0) on rxe0: ports count from 1, indexes from 0", func(r *rig) { _, _ = r.ctx.QueryGIDEx(0, 0) })
	wantPanic(t, "verbs: QueryGIDEx(1, -1) on rxe0: ports count from 1, indexes from 0", func(r *rig) { _, _ = r.ctx.QueryGIDEx(1, -1) })
	wantPanic(t, "verbs: QueryGIDTable(-1) on rxe0: want a size of at least 0", func(r *rig) { _, _ = r.ctx.QueryGIDTable(-1) })
	wantPanic(t, "verbs: CreateCQOnVector(8, vector -1) on rxe0: vectors count from 0", func(r *rig) { _, _ = r.ctx.CreateCQOnVector(8, nil, -1) })
}

// TestQueryDataInOrder passes the driver's answer on and names it.
func TestQueryDataInOrder(t *testing.T) {
	for _, want := range []DataInOrder{DataInOrderNone, DataInOrderWholeMsg} {
		r := newRig(t)
		r.f.inOrder = want
		got, err := r.qp.QueryDataInOrder(OpSend)
		if err != nil || got != want {
			t.Errorf("QueryDataInOrder(SEND) = %v, %v; want %v", got, err, want)
		}
	}
	got := []string{DataInOrderNone.String(), DataInOrderWholeMsg.String(), DataInOrder(2).String()}
	want := []string{"not in order", "whole message in order", "data in order 0x2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
}
