package rdma

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/pingpong"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// ppOptions are the flags the ibverbs-utils pingpongs share; each tool
// registers the ones rdma-core's program has.
type ppOptions struct {
	IO       cmdutil.IOStreams
	Server   string // the server's host name; empty: this side is the server
	TCPPort  int    // -p
	Device   string // -d
	IBPort   int    // -i
	Size     int    // -s
	MTU      int    // -m as enum ibv_mtu
	RxDepth  int    // -r
	Iters    int    // -n
	SL       int    // -l
	Events   bool   // -e
	GIDIndex int    // -g; -1: none
	Check    bool   // -c
	// ibv_rc_pingpong only.
	ODP, ImplicitODP, Prefetch, Timestamps, DeviceMemory, NewSend bool

	open func(string) (*verbs.Context, error)
	ctx  context.Context
	args struct{ port, ibPort, size, mtu, rxDepth, iters, sl, gid string }
}

// ppDefaults are rdma-core's defaults for one program.
type ppDefaults struct {
	size, mtu int
	noMTU     bool // ibv_ud_pingpong has no -m
}

// addPingpongFlags registers the options every pingpong has, with
// rdma-core's names, letters and defaults. The numbers are strings here
// and read by finish, which takes 0x hex and 0 octal as strtoul does.
func addPingpongFlags(fl *pflag.FlagSet, o *ppOptions, d ppDefaults) {
	fl.StringVarP(&o.args.port, "port", "p", fmt.Sprint(pingpong.DefaultPort), "listen on/connect to TCP port <port>")
	fl.StringVarP(&o.Device, "ib-dev", "d", "", "use IB device <dev> (default first device found)")
	fl.StringVarP(&o.args.ibPort, "ib-port", "i", "1", "use port <port> of IB device")
	fl.StringVarP(&o.args.size, "size", "s", fmt.Sprint(d.size), "size of message to exchange")
	if !d.noMTU {
		fl.StringVarP(&o.args.mtu, "mtu", "m", fmt.Sprint(d.mtu), "path MTU")
	}
	fl.StringVarP(&o.args.rxDepth, "rx-depth", "r", "500", "number of receives to post at a time")
	fl.StringVarP(&o.args.iters, "iters", "n", "1000", "number of exchanges")
	fl.StringVarP(&o.args.sl, "sl", "l", "0", "service level value")
	fl.BoolVarP(&o.Events, "events", "e", false, "sleep on CQ events (default poll)")
	fl.StringVarP(&o.args.gid, "gid-idx", "g", "-1", "local port GID index (needed on RoCE)")
	fl.BoolVarP(&o.Check, "chk", "c", false, "validate received buffer")
}

// finish reads the numeric flags and the server argument.
func (o *ppOptions) finish(args []string, d ppDefaults) error {
	if len(args) == 1 {
		o.Server = args[0]
	}
	num := func(dst *int, name, s string, max uint64) error {
		v, err := pingpong.ParseNum(name, s, max)
		if err != nil {
			return cmdutil.UsageErrorf("%v", err)
		}
		*dst = int(v)
		return nil
	}
	for _, n := range []struct {
		dst  *int
		name string
		s    string
		max  uint64
	}{
		{&o.TCPPort, "-p port", o.args.port, 65535}, {&o.IBPort, "-i IB port", o.args.ibPort, 255},
		{&o.Size, "-s size", o.args.size, 1<<31 - 1}, {&o.RxDepth, "-r rx depth", o.args.rxDepth, 1 << 20},
		{&o.Iters, "-n iterations", o.args.iters, 1<<31 - 1}, {&o.SL, "-l service level", o.args.sl, 15},
	} {
		if err := num(n.dst, n.name, n.s, n.max); err != nil {
			return err
		}
	}
	if o.IBPort < 1 {
		return cmdutil.UsageErrorf("invalid -i IB port 0: want 1 to 255")
	}
	if o.RxDepth < 1 {
		return cmdutil.UsageErrorf("invalid -r rx depth 0: want at least 1")
	}
	o.GIDIndex = -1
	if o.args.gid != "-1" {
		if err := num(&o.GIDIndex, "-g GID index", o.args.gid, 255); err != nil {
			return err
		}
	}
	if !d.noMTU {
		var m int
		if err := num(&m, "-m MTU", o.args.mtu, 1<<16); err != nil {
			return err
		}
		if o.MTU = pingpong.MTUBytes(uint64(m)); o.MTU == 0 {
			return cmdutil.UsageErrorf("invalid -m MTU %s: want 256, 512, 1024, 2048 or 4096", o.args.mtu)
		}
	}
	return nil
}

// ppRunE is the RunE of a pingpong: flags, then run (or runF in tests).
func ppRunE(o *ppOptions, d ppDefaults, check func() error, run func(*ppOptions) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if err := o.finish(args, d); err != nil {
			return err
		}
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		o.ctx = c.Context()
		if o.ctx == nil {
			o.ctx = context.Background()
		}
		return run(o)
	}
}

// ppDevice opens -d (or the first device) and reads the port and, with
// -g, the GID; a port without a LID on InfiniBand cannot be reached.
func ppDevice(o *ppOptions) (*verbs.Context, verbs.Port, [16]byte, error) {
	var gid [16]byte
	dev, err := o.open(o.Device)
	if err != nil {
		if o.Device != "" && errors.Is(err, os.ErrNotExist) && !errors.Is(err, verbs.ErrNoVerbs) {
			return nil, verbs.Port{}, gid, cmdutil.UsageErrorf("IB device %s not found", o.Device)
		}
		return nil, verbs.Port{}, gid, err
	}
	port, err := dev.QueryPort(o.IBPort)
	if err != nil {
		dev.Close()
		return nil, port, gid, err
	}
	if port.LinkLayer != verbs.LinkLayerEthernet && port.LID == 0 {
		dev.Close()
		return nil, port, gid, fmt.Errorf("couldn't get local LID: %s port %d has none (is the subnet manager running?)", dev.Name(), o.IBPort)
	}
	if o.GIDIndex >= 0 {
		if gid, err = dev.QueryGID(o.IBPort, o.GIDIndex); err != nil {
			dev.Close()
			return nil, port, gid, fmt.Errorf("can't read sgid of index %d: %w", o.GIDIndex, err)
		}
	}
	return dev, port, gid, nil
}

// ppPSN is a random first PSN, 24 bits, as rdma-core's lrand48() & 0xffffff.
func ppPSN() uint32 { return rand.Uint32() & 0xffffff }

// ppExchange runs the TCP exchange of the addresses in mine: the client
// dials, the server accepts and calls connect with the client's
// addresses before it answers.
func ppExchange(o *ppOptions, mine []pingpong.Dest, connect func([]pingpong.Dest) error) ([]pingpong.Dest, error) {
	var c *pingpong.Conn
	var err error
	if o.Server != "" {
		c, err = pingpong.Dial(o.ctx, o.Server, o.TCPPort)
	} else {
		c, err = pingpong.Accept(o.ctx, o.TCPPort)
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	// A peer that stops answering mid-exchange must not keep the tool
	// past the end of its run.
	stop := context.AfterFunc(o.ctx, func() { c.Close() })
	defer stop()
	if o.Server != "" {
		return c.Client(mine)
	}
	return c.Server(mine, connect)
}

// ppQueue is what the pingpong loop drives: one QP's (or SRQ's) posts
// and its CQ. The verbs one is ppVerbsQueue; tests use a fake.
type ppQueue interface {
	// postRecv posts n receives and returns how many went.
	postRecv(n int) (int, error)
	postSend() error
	poll(wc []verbs.WorkCompletion) (int, error)
	// wait sleeps until the CQ has an event and asks for the next one.
	wait() error
}

// Work request IDs, rdma-core's, as bits of the pending mask.
const (
	ppRecvWRID = 1
	ppSendWRID = 2
)

// ppLoop is rdma-core's main loop for one QP: receives are kept posted
// (rx depth at a time, topped up when one or none is left), and each side
// sends once its previous send completed and the peer's message arrived;
// the client sends first. It returns the time from the first send to the
// last completion.
func ppLoop(ctx context.Context, q ppQueue, iters, rxDepth int, client, events bool, routs int) (time.Duration, error) {
	pending := ppRecvWRID
	if client {
		if err := q.postSend(); err != nil {
			return 0, err
		}
		pending |= ppSendWRID
	}
	start := time.Now()
	var wc [2]verbs.WorkCompletion
	rcnt, scnt, idle := 0, 0, 0
	for rcnt < iters || scnt < iters {
		if events {
			if err := q.wait(); err != nil {
				return 0, err
			}
		}
		n, err := q.poll(wc[:])
		if err != nil {
			return 0, err
		}
		if n == 0 {
			// A peer that went away leaves the loop polling, as
			// rdma-core's does; the run's context ends it.
			if idle++; idle%4096 == 0 && ctx.Err() != nil {
				return 0, ctx.Err()
			}
			continue
		}
		for _, w := range wc[:n] {
			if w.Status != verbs.WCSuccess {
				return 0, fmt.Errorf("failed status %s (%d) for wr_id %d", w.Status, int(w.Status), w.ID)
			}
			switch w.ID {
			case ppSendWRID:
				scnt++
			case ppRecvWRID:
				if routs--; routs <= 1 {
					got, err := q.postRecv(rxDepth - routs)
					routs += got
					if err != nil || routs < rxDepth {
						return 0, fmt.Errorf("couldn't post receive (%d): %w", routs, err)
					}
				}
				rcnt++
			default:
				return 0, fmt.Errorf("completion for unknown wr_id %d", w.ID)
			}
			pending &^= int(w.ID)
			if scnt < iters && pending == 0 {
				if err := q.postSend(); err != nil {
					return 0, fmt.Errorf("couldn't post send: %w", err)
				}
				pending = ppRecvWRID | ppSendWRID
			}
		}
	}
	return time.Since(start), nil
}

// ppPageSize is the page size the -c check marks, rdma-core's sysconf.
var ppPageSize = os.Getpagesize()

// ppMark is rdma-core's -c: the client sets the first byte of each page of
// what it sends to i/page_size % sizeof(char), which is always 0 (a
// sizeof where a 256 was meant, kept so that both programs agree), over a
// buffer filled with 0x7b; the server then finds 0 there.
func ppMark(b []byte) {
	for i := 0; i < len(b); i += ppPageSize {
		b[i] = 0
	}
}

// ppCheck is the server's side of -c: a line for each page whose first
// byte is not the mark.
func ppCheck(w interface{ Write([]byte) (int, error) }, b []byte) {
	for i := 0; i < len(b); i += ppPageSize {
		if b[i] != 0 {
			fmt.Fprintf(w, "invalid data in page %d\n", i/ppPageSize)
		}
	}
}
