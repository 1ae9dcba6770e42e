package verbs

import (
	"errors"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// legacyPart is the part of a that struct ibv_device_attr has: what
// QueryDeviceLegacy's Attr holds when the device answers both queries
// alike.
func legacyPart(a Attr) Attr {
	return Attr{
		MaxMRSize: a.MaxMRSize, PageSizeCap: a.PageSizeCap, MaxQP: a.MaxQP, MaxQPWR: a.MaxQPWR,
		DeviceCapFlags: a.DeviceCapFlags, MaxSGE: a.MaxSGE, MaxSGERd: a.MaxSGERd, MaxCQ: a.MaxCQ, MaxCQE: a.MaxCQE,
		MaxMR: a.MaxMR, MaxPD: a.MaxPD, MaxQPRdAtom: a.MaxQPRdAtom, MaxEERdAtom: a.MaxEERdAtom,
		MaxResRdAtom: a.MaxResRdAtom, MaxQPInitRdAtom: a.MaxQPInitRdAtom, MaxEEInitRdAtom: a.MaxEEInitRdAtom,
		AtomicCap: a.AtomicCap, MaxEE: a.MaxEE, MaxRDD: a.MaxRDD, MaxMW: a.MaxMW,
		MaxRawIPv6QP: a.MaxRawIPv6QP, MaxRawEthQP: a.MaxRawEthQP, MaxMcastGrp: a.MaxMcastGrp,
		MaxMcastQPAttach: a.MaxMcastQPAttach, MaxTotalMcastQPAttach: a.MaxTotalMcastQPAttach,
		MaxAH: a.MaxAH, MaxFMR: a.MaxFMR, MaxMapPerFMR: a.MaxMapPerFMR,
		MaxSRQ: a.MaxSRQ, MaxSRQWR: a.MaxSRQWR, MaxSRQSGE: a.MaxSRQSGE,
		MaxPKeys: a.MaxPKeys, LocalCAAckDelay: a.LocalCAAckDelay, PhysPortCnt: a.PhysPortCnt,
	}
}

// TestQueryDeviceLegacy reads the identity and the legacy attributes as
// the driver answers them; a failed query is a VerbError naming
// ibv_query_device, and the answer is not kept (each call asks).
func TestQueryDeviceLegacy(t *testing.T) {
	f := useFake(t)
	f.attr = Attr{MaxQP: 1 << 17, MaxSGE: 32, AtomicCap: AtomicHCA, MaxPKeys: 64, PhysPortCnt: 1,
		PhysPortCntEx: 1, NumCompVectors: 2, CompletionTimestampMask: 0xffff, DeviceCapFlagsEx: 1 << 40}
	f.devAttr = DeviceAttr{FWVer: "6.1.0", NodeGUID: 0x0200_00ff_fe00_0001, SysImageGUID: 0x0200_00ff_fe00_0001, VendorID: 0xffffff}
	ctx := must(Open("rxe0"))
	got, err := ctx.QueryDeviceLegacy()
	if err != nil {
		t.Fatal(err)
	}
	want := DeviceAttr{FWVer: "6.1.0", NodeGUID: 0x0200_00ff_fe00_0001, SysImageGUID: 0x0200_00ff_fe00_0001, VendorID: 0xffffff,
		Attr: Attr{MaxQP: 1 << 17, MaxSGE: 32, AtomicCap: AtomicHCA, MaxPKeys: 64, PhysPortCnt: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected attributes (-want +got):\n%s", diff)
	}
	f.attr.MaxQP = 7
	f.fail["queryDeviceLegacy"] = syscall.ENODEV
	_, err = ctx.QueryDeviceLegacy()
	var ve *VerbError
	if !errors.As(err, &ve) || ve.Verb != "ibv_query_device" || !errors.Is(err, syscall.ENODEV) {
		t.Fatalf("failed query: error %v, want a VerbError of ibv_query_device wrapping ENODEV", err)
	}
	delete(f.fail, "queryDeviceLegacy")
	if got := must(ctx.QueryDeviceLegacy()); got.Attr.MaxQP != 7 {
		t.Errorf("second query: MaxQP %d, want the device's new answer 7", got.Attr.MaxQP)
	}
	wantPanic(t, "verbs: QueryDeviceLegacy on closed context mlx5_0", func(*rig) {
		c := must(Open("mlx5_0"))
		check(c.Close())
		_, _ = c.QueryDeviceLegacy()
	})
}
