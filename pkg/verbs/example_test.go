package verbs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// ExampleVerbError tells a missing device and a permission problem apart
// from other run-time failures, as a program does with what Open,
// RegMR or a QP's modify return.
func ExampleVerbError() {
	for _, err := range []error{
		&verbs.VerbError{Verb: "ibv_open_device", Object: "mlx5_9", Err: syscall.ENODEV},
		&verbs.VerbError{Verb: "ibv_reg_mr", Object: "rxe0 PD 1", Err: syscall.EACCES},
		&verbs.VerbError{Verb: "ibv_create_qp", Object: "rxe0 PD 1", Err: syscall.ENOMEM},
	} {
		switch {
		case errors.Is(err, os.ErrNotExist):
			fmt.Println("no such device:", err)
		case errors.Is(err, os.ErrPermission):
			fmt.Println("not allowed:", err)
		default:
			var ve *verbs.VerbError
			errors.As(err, &ve)
			fmt.Printf("%s failed: %v\n", ve.Verb, ve.Err)
		}
	}
	// Output:
	// no such device: mlx5_9: ibv_open_device: no such device
	// not allowed: rxe0 PD 1: ibv_reg_mr: permission denied
	// ibv_create_qp failed: cannot allocate memory
}

// ExampleCQ_Next posts one RDMA READ on a connected RC QP and waits for
// its completion. It needs an RDMA device, so go test compiles it
// without running it; qp, cq, mr and the peer's address and rkey come
// from the program's setup (examples/rdmawrite has all of it).
func ExampleCQ_Next() {
	var (
		qp         *verbs.QP
		cq         *verbs.CQ
		mr         *verbs.MR
		addr, rkey = uint64(0x7f0000001000), uint32(0x1234)
	)
	if err := qp.PostSend(verbs.SendWR{ID: 7, Op: verbs.OpRDMARead, MR: mr, Length: 64, RemoteAddr: addr, RKey: rkey}); err != nil {
		fmt.Println(err)
		return
	}
	wc, err := cq.Next(context.Background())
	if err != nil { // a *verbs.CompletionError when the READ failed
		fmt.Println(err)
		return
	}
	fmt.Printf("work request %d read %q\n", wc.ID, mr.Bytes()[:64])
}
