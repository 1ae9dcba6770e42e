package ibsim

import (
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// drainTimeout bounds how long Close waits for ibsim to read what the
// client sent last.
const drainTimeout = 200 * time.Millisecond

// drain waits until ibsim has read every datagram sent on conn, or
// drainTimeout passes. ibsim handles a client's disconnect (on the control
// socket) before data the client sent just before, and that data is then
// never read: an RMPP transfer's last ACK, say, which leaves the SA
// resending to a client that has gone. On a Unix datagram socket the bytes
// sent stay charged to the sender (SIOCOUTQ) until the receiver reads
// them. Over TCP, or where the count cannot be read, drain returns at once.
func drain(conn net.PacketConn) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	deadline := time.Now().Add(drainTimeout)
	for {
		queued := 0
		cerr := raw.Control(func(fd uintptr) {
			queued, err = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
		})
		if cerr != nil || err != nil || queued == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
