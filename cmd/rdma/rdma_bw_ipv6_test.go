package rdma

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestBwConnectIPv6: with -6 the client dials over IPv6 only (a server
// given as an IPv4 address is refused), as python-rdma's AF_INET6.
func TestBwConnectIPv6(t *testing.T) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	peer, err := bwConnect(ctx, &rdmaBwOptions{Server: "::1", TCPPort: port, IPv6: true})
	if err != nil {
		t.Fatalf("-6 to [::1]:%d: %v", port, err)
	}
	peer.conn.Close()
	if _, err := bwConnect(ctx, &rdmaBwOptions{Server: "127.0.0.1", TCPPort: port, IPv6: true}); err == nil {
		t.Errorf("-6 to 127.0.0.1:%d connected", port)
	}

	// The server with -6 listens on IPv6: a tcp6 client reaches it.
	srvPort := freeTCP6Port(t)
	done := make(chan error, 1)
	go func() {
		p, err := bwConnect(ctx, &rdmaBwOptions{TCPPort: srvPort, IPv6: true})
		if err == nil {
			p.conn.Close()
		}
		done <- err
	}()
	var c net.Conn
	for i := 0; i < 100; i++ {
		if c, err = net.Dial("tcp6", net.JoinHostPort("::1", strconv.Itoa(srvPort))); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("dialing the -6 server: %v", err)
	}
	c.Close()
	if err := <-done; err != nil {
		t.Errorf("-6 server: %v", err)
	}
}

// freeTCP6Port returns a TCP port free on the IPv6 loopback just now.
func freeTCP6Port(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
