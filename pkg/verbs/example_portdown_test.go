package verbs_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// ExamplePortDownError tells a port that went down apart from other
// ends of a wait, as a program does with the cause of a context that
// WaitPortDown's result ended.
func ExamplePortDownError() {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&verbs.PortDownError{Device: "rxe0", Port: 1, Event: verbs.EventPortErr})
	var pd *verbs.PortDownError
	if errors.As(context.Cause(ctx), &pd) {
		fmt.Printf("%v; port %d of %s\n", pd, pd.Port, pd.Device)
	}
	// Output:
	// port 1 of rxe0 went down (IBV_EVENT_PORT_ERR); port 1 of rxe0
}

// ExampleContext_WaitPortDown ends a wait for a peer's message when the
// port goes down under it. It needs an RDMA device, so go test compiles
// it without running it; dev is the device the connection is on.
func ExampleContext_WaitPortDown() {
	var dev *verbs.Context
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		if err := dev.WaitPortDown(ctx, 1); err != nil {
			cancel(err) // a *verbs.PortDownError, or the events unreadable
		}
	}()
	<-ctx.Done() // the program's own wait: a completion, a CM event
	fmt.Println(context.Cause(ctx))
}
