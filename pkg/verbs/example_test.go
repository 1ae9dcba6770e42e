package verbs_test

import (
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
