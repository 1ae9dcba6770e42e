package rdma

import (
	"context"
	"net/netip"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdmacm"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "mckey",
		Summary: "multicast datagrams to an IP multicast group over rdma_cm, as rdmacm-utils' mckey",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newMckeyCmd(f, nil) },
	})
}

// mckey's defaults (librdmacm/examples/mckey.c).
const (
	mckeyDefaultConns = 1
	mckeyDefaultCount = 10
	mckeyDefaultSize  = 100
)

// mckeyOptions are mckey's flags.
type mckeyOptions struct {
	IO cmdutil.IOStreams
	// Group is -m, the multicast group's address.
	Group       string
	Sender      bool   // -s
	Bind        string // -b
	Connections int    // -c
	Count       int    // -C
	Size        int    // -S
	SendOnly    bool   // -o
	// NoLoopback is -l: the QPs do not receive their own group's
	// datagrams.
	NoLoopback bool
	// Unmapped is -M, a multicast GID (AF_IB) in place of -m's address.
	Unmapped netip.Addr

	ps      rdmacm.PortSpace
	ctx     context.Context
	args    struct{ conns, count, size, ps, unmapped string }
	resolve func(ctx context.Context, host string) (netip.Addr, error)
}

// mckeyLookup looks a host name up; tests swap it.
var mckeyLookup = rpingResolve

func newMckeyCmd(f *cmdutil.Factory, runF func(*mckeyOptions) error) *cobra.Command {
	o := &mckeyOptions{IO: f.IO, resolve: mckeyLookup}
	if runF == nil {
		runF = mckeyRun
	}
	c := &cobra.Command{
		Use:   "mckey -m multicast_address [-s] [-b bind_address] [-c connections] [-C message_count] [-S message_size] [-p port_space] [-o] [-l]",
		Short: "multicast datagrams to an IP multicast group over rdma_cm, as rdmacm-utils' mckey",
		Long: `mckey joins -c UD endpoints to the multicast group of IP address -m through
the kernel's RDMA connection manager, as rdmacm-utils' mckey does, and
prints the group's GID, MLID and SL; a sender (-s) then sends -C
datagrams of -S bytes to the group on each, a receiver (no -s) waits
for as many. Either side can be rdmacm-utils' mckey. Multicast needs
InfiniBand or RoCE.`,
		Example: `  mckey -m 239.1.2.3 -b 192.0.2.2 -C 3        # receiver
  mckey -m 239.1.2.3 -b 192.0.2.1 -s -C 3     # sender`,
		Args: cmdutil.ArgsRange(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.finish(); err != nil {
				return err
			}
			o.ctx = c.Context()
			if o.ctx == nil {
				o.ctx = context.Background()
			}
			return runF(o)
		},
	}
	fl := c.Flags()
	fl.SortFlags = false
	fl.StringVarP(&o.Group, "multicast", "m", "", "multicast_address: the group's IP address")
	fl.StringVarP(&o.args.unmapped, "unmapped", "M", "", "unmapped_multicast_address: a multicast GID (AF_IB) in place of -m")
	fl.BoolVarP(&o.Sender, "sender", "s", false, "send to the group (without it: receive)")
	fl.StringVarP(&o.Bind, "bind", "b", "", "bind_address: the local address")
	fl.StringVarP(&o.args.conns, "connections", "c", strconv.Itoa(mckeyDefaultConns), "connections")
	fl.StringVarP(&o.args.count, "count", "C", strconv.Itoa(mckeyDefaultCount), "message_count: datagrams on each connection")
	fl.StringVarP(&o.args.size, "size", "S", strconv.Itoa(mckeyDefaultSize), "message_size: bytes in a datagram, at most the path MTU")
	fl.StringVarP(&o.args.ps, "port-space", "p", "0x111", "port_space: 0x111 for UDP (the default), 0x2 for IPOIB")
	fl.BoolVarP(&o.SendOnly, "send-only", "o", false, "join as a send-only full member")
	fl.BoolVarP(&o.NoLoopback, "no-loopback", "l", false, "join without multicast loopback")
	return c
}

// finish checks the flags (strictly where mckey takes anything atoi
// reads).
func (o *mckeyOptions) finish() error {
	num := func(flag, s string, lo int) (int, error) {
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil || int(v) < lo {
			return 0, cmdutil.UsageErrorf("invalid %s %q: want a decimal number from %d", flag, s, lo)
		}
		return int(v), nil
	}
	var err error
	if o.Connections, err = num("-c connections", o.args.conns, 1); err != nil {
		return err
	}
	if o.Count, err = num("-C message_count", o.args.count, 0); err != nil {
		return err
	}
	if o.Size, err = num("-S message_size", o.args.size, 0); err != nil {
		return err
	}
	v, err := strconv.ParseUint(o.args.ps, 0, 16)
	o.ps = rdmacm.PortSpace(v)
	if err != nil || (o.ps != rdmacm.PortSpaceUDP && o.ps != rdmacm.PortSpaceIPoIB) {
		return cmdutil.UsageErrorf("invalid -p port space %q: want %#x (UDP) or %#x (IPoIB)", o.args.ps, uint16(rdmacm.PortSpaceUDP), uint16(rdmacm.PortSpaceIPoIB))
	}
	switch {
	case o.args.unmapped != "":
		a, err := netip.ParseAddr(o.args.unmapped)
		if err != nil || !a.Is6() {
			return cmdutil.UsageErrorf("invalid -M unmapped_multicast_address %q: want a GID", o.args.unmapped)
		}
		o.Unmapped = a
	case o.Group == "":
		return cmdutil.UsageErrorf("-m multicast_address is required")
	}
	return nil
}
