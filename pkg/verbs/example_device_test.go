package verbs_test

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// ExampleContext_QueryDeviceLegacy reads a device's identity and limits
// with the legacy ibv_query_device, as a program written for libibverbs
// 1.0 does, and shows that QueryDevice (ibv_query_device_ex) reads the
// same limits. It needs an RDMA device (rxe0 here), so it is compiled,
// not run, by go test (TestIntegrationQueryDeviceLegacy runs in the VM).
func ExampleContext_QueryDeviceLegacy() {
	ctx, err := verbs.Open("rxe0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	legacy, err := ctx.QueryDeviceLegacy()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("node GUID %#016x, vendor %#x, firmware %q\n", legacy.NodeGUID, legacy.VendorID, legacy.FWVer)
	ex, err := ctx.QueryDevice()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("max QPs:", legacy.Attr.MaxQP, ex.MaxQP, "max SGEs:", legacy.Attr.MaxSGE, ex.MaxSGE)
}
