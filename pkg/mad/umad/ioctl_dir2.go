//go:build !(ppc64 || ppc64le || mips || mipsle || mips64 || mips64le)

package umad

// The _IOC layout of asm-generic/ioctl.h: two direction bits above a
// 14-bit size.
const (
	iocNone     = 0
	iocWrite    = 1
	iocRead     = 2
	iocSizeBits = 14
)
