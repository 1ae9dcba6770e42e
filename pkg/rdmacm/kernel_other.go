//go:build !linux

package rdmacm

import (
	"fmt"
	"runtime"
)

func openKernel(path string) (kernel, error) {
	return nil, &Error{Op: "open " + path, Err: fmt.Errorf("the RDMA connection manager is Linux's, not %s/%s's", runtime.GOOS, runtime.GOARCH)}
}
