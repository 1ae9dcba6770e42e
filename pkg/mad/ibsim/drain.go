package ibsim

import (
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// rawConn is conn's file descriptor for system calls Go has no method
// for, nil when it has none.
func rawConn(conn net.PacketConn) syscall.RawConn {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}

// drainTimeout bounds how long Close waits for ibsim to read what the
// client sent last.
const drainTimeout = 200 * time.Millisecond

// drain waits until ibsim has read every datagram sent on conn, or
// timeout passes. ibsim handles a client's disconnect (on the control
// socket) before data the client sent just before, and that data is then
// never read: an RMPP transfer's last ACK, say, which leaves the SA
// resending to a client that has gone. On a Unix datagram socket the bytes
// sent stay charged to the sender (SIOCOUTQ) until the receiver reads
// them. Over UDP the count empties as soon as the kernel has sent the data,
// and where it cannot be read, drain returns at once.
func drain(raw syscall.RawConn, timeout time.Duration) {
	if raw == nil {
		return
	}
	deadline := time.Now().Add(timeout)
	for {
		var queued int
		var err error
		cerr := raw.Control(func(fd uintptr) {
			queued, err = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
		})
		if cerr != nil || err != nil || queued == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
