package ibsim

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

// sockets are a client's two datagram sockets before CONNECT.
type sockets struct {
	ctl  net.Conn       // connected to ibsim's control socket
	data net.PacketConn // bound where ibsim's out socket will send
	id   uint32         // the connection id for CONNECT
	// out gives ibsim's data socket for client number n, and outSA the
	// same as a socket address to connect to (nil: not to be connected).
	out   func(n uint32) net.Addr
	outSA func(n uint32) syscall.Sockaddr
}

func (s *sockets) close() {
	s.ctl.Close()
	s.data.Close()
}

// openSockets binds and connects the sockets for cfg's mode. The data
// socket must exist before CONNECT: ibsim connects to it while handling
// CONNECT and aborts if it cannot.
func openSockets(cfg *Config) (*sockets, error) {
	if cfg.inet() {
		return openInet(cfg)
	}
	return openUnix(cfg)
}

// connSeq counts the clients this process has opened, to name their
// sockets apart.
var connSeq atomic.Uint32

// nextConnID returns the id that names a new client's unix sockets: the
// PID for the first client, as the shim uses, and the PID plus a counter
// above bit 22 for later ones. Linux PIDs stay below 1<<22, so no other
// process's names collide, and the id stays a positive C int (ibsim prints
// it with %d).
func nextConnID() uint32 {
	n := (connSeq.Add(1) - 1) % 512
	return uint32(os.Getpid()) + n<<22
}

func openUnix(cfg *Config) (*sockets, error) {
	base := cfg.sockName()
	id := nextConnID()
	// ibsim's make_name counts the terminating NUL into the address
	// length, so every abstract name ends in a NUL byte (ss shows
	// "@sim:ctl@"). Go counts exactly len(Name) bytes after the family for
	// an abstract name, so the NUL is spelled out.
	abstract := func(format string, args ...any) *net.UnixAddr {
		return &net.UnixAddr{Name: "@" + fmt.Sprintf(format, args...) + "\x00", Net: "unixgram"}
	}
	ctl, err := net.DialUnix("unixgram", abstract("%s:ctl%d", base, id), abstract("%s:ctl", base))
	if err != nil {
		return nil, withoutAddrs(err)
	}
	data, err := net.ListenUnixgram("unixgram", abstract("%s:in%d", base, id))
	if err != nil {
		ctl.Close()
		return nil, withoutAddrs(err)
	}
	return &sockets{
		ctl:  ctl,
		data: data,
		id:   id,
		out:  func(n uint32) net.Addr { return abstract("%s:out%d", base, n) },
		outSA: func(n uint32) syscall.Sockaddr {
			return &syscall.SockaddrUnix{Name: abstract("%s:out%d", base, n).Name}
		},
	}, nil
}

// withoutAddrs drops a *net.OpError's addresses, whose trailing NULs would
// reach the terminal; the caller names ibsim's socket itself.
func withoutAddrs(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

// openInet opens the UDP sockets. ibsim is IPv4 only; it sends a client's
// data to the address the client's control messages came from, at the port
// given as the connection id.
func openInet(cfg *Config) (*sockets, error) {
	port := cfg.serverPort()
	server, err := net.ResolveUDPAddr("udp4", net.JoinHostPort(cfg.ServerName, strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	ctl, err := net.DialUDP("udp4", nil, server)
	if err != nil {
		return nil, err
	}
	data, err := net.ListenUDP("udp4", &net.UDPAddr{})
	if err != nil {
		ctl.Close()
		return nil, err
	}
	return &sockets{
		ctl:  ctl,
		data: data,
		id:   uint32(data.LocalAddr().(*net.UDPAddr).Port),
		out: func(n uint32) net.Addr {
			return &net.UDPAddr{IP: server.IP, Port: port + int(n) + 1}
		},
		// Not connected: ibsim may answer from another of its host's
		// addresses than the one dialled, which a connected UDP socket
		// would drop.
		outSA: func(uint32) syscall.Sockaddr { return nil },
	}, nil
}
