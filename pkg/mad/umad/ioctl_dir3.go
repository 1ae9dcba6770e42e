//go:build ppc64 || ppc64le || mips || mipsle || mips64 || mips64le

package umad

// The _IOC layout of PowerPC and MIPS: three direction bits above a 13-bit
// size.
const (
	iocNone     = 1
	iocRead     = 2
	iocWrite    = 4
	iocSizeBits = 13
)
