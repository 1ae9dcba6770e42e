// Package verbs reads RDMA devices through libibverbs (cgo): the device
// list, each device's attributes and each port's, as rdma-core's
// ibv_devinfo shows them.
//
// Built without cgo (CGO_ENABLED=0) or with the noverbs tag, every call
// returns ErrNoVerbs, so the rest of ibtool builds and runs anywhere; the
// cgo build needs libibverbs-dev.
package verbs
