//go:build cgo && !noverbs

package verbs

// #include "ibt_verbs.h"
import "C"

import "syscall"

// ForkInit is ibv_fork_init: it makes libibverbs keep registered memory
// out of a forked child's copy-on-write, where the kernel does not do so
// itself. Call it before any MR is registered: after one, it is an error
// wrapping EINVAL.
func ForkInit() error {
	if err := loadLib(); err != nil {
		return err
	}
	if rc := C.ibtv_fork_init(); rc != 0 {
		return verbError("ibv_fork_init", "libibverbs", rcErr(rc, nil))
	}
	return nil
}

// ForkInitialized is ibv_is_fork_initialized. A libibverbs without it
// (before rdma-core 35) is an error wrapping EOPNOTSUPP.
func ForkInitialized() (ForkStatus, error) {
	if err := loadLib(); err != nil {
		return 0, err
	}
	s := C.ibtv_is_fork_initialized()
	if s < 0 {
		return 0, verbError("ibv_is_fork_initialized", "libibverbs", syscall.EOPNOTSUPP)
	}
	return ForkStatus(s), nil
}
