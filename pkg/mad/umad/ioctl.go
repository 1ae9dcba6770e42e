package umad

// ioc builds an ioctl request number as the kernel's _IOC macro does: the
// direction, the argument size, the type (magic) and the number.
func ioc(dir, typ, nr, size uint) uint {
	return dir<<(iocSizeShift+iocSizeBits) | size<<iocSizeShift | typ<<8 | nr
}

// iocSizeShift is where _IOC puts the argument size.
const iocSizeShift = 16

// rdmaIoctlMagic is RDMA_IOCTL_MAGIC, the type of the user MAD ioctls.
const rdmaIoctlMagic = 0x1b

// Requests of ib_user_mad.h: _IOWR(0x1b, 1, struct ib_user_mad_reg_req),
// _IOW(0x1b, 2, __u32) and _IO(0x1b, 3); 0xc01c1b01, 0x40041b02 and 0x1b03
// on x86 and arm.
var (
	ioctlRegisterAgent   = ioc(iocRead|iocWrite, rdmaIoctlMagic, 1, regReqLen)
	ioctlUnregisterAgent = ioc(iocWrite, rdmaIoctlMagic, 2, 4)
	ioctlEnablePKey      = ioc(iocNone, rdmaIoctlMagic, 3, 0)
)
