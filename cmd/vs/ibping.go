package vs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/umad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:        "ibping",
		Light:       true,
		Summary:     "ping a port's ibping server, or be one (-S)",
		New:         func(f *cmdutil.Factory) *cobra.Command { return newIbpingCmd(f, nil) },
		SignalIsEnd: true,
	})
}

// ibpingOptions are ibping's parsed flags and arguments.
type ibpingOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	Target endport.Target
	Count  uint64 // 0: until interrupted
	Flood  bool
	vendorClassFlags
}

func newIbpingCmd(f *cmdutil.Factory, runF func(*ibpingOptions) error) *cobra.Command {
	o := &ibpingOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "ibping [options] <dest lid|guid>",
		Short: "ping a port's ibping server, or be one (-S)",
		Long: `ibping sends OpenIB ping requests (vendor class 0x32) to a port where an
ibping server (ibping -S) runs, once a second, and prints each reply's host
name and round trip time, then statistics when it stops (after -c pings, or
on Ctrl-C). With -S it is the server: it answers every ping with this
host's name and domain until it is stopped.

On the simulator the server attaches with the SM flag: ibsim hands
unsolicited requests only to such a client.`,
		Example: `  ibping -S            # on the target host
  ibping -c 5 12       # five pings to LID 12
  ibping -f -c 1000 12 # as fast as the replies come`,
		Args: cmdutil.ArgsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			serve, err := o.finish(args)
			if err != nil {
				return err
			}
			if serve {
				return pingServe(o.Common.Context(), f, &o.Common, o.IO, mad.ClassOpenIBPing, o.OUI, false, func(mad.Header) mad.OpenIBText { return hostAndDomain() })
			}
			if len(args) == 0 {
				return &cmdutil.UsageError{Err: errors.New("expected <dest lid|guid>"), Syntax: true}
			}
			t, err := o.Common.ParseTarget(args[0])
			if err != nil {
				return err
			}
			o.Target = t
			if runF != nil {
				return runF(o)
			}
			return ibpingRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsSA)
	fl := c.Flags()
	cmdutil.AddTargetFlags(c, &o.Common, "LGD")
	fl.Uint64VarP(&o.Count, "count", "c", 0, "stop after count packets")
	fl.BoolVarP(&o.Flood, "flood", "f", false, "flood destination")
	o.add(c)
	return c
}

// hostAndDomain is what an ibping server answers: "host.domain", or the
// host name alone without a domain, cut to one MAD.
func hostAndDomain() mad.OpenIBText {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "?hostname?"
	}
	var uts syscall.Utsname
	domain := ""
	if syscall.Uname(&uts) == nil {
		var b []byte
		for _, c := range uts.Domainname {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		domain = string(b)
	}
	s := host
	if domain != "" && domain != "(none)" {
		s += "." + domain
	}
	return mad.OpenIBText(s).Fit()
}

// serverRMPPTimeout is how long a server's RMPP window waits for its ACK
// when -t does not say.
const serverRMPPTimeout = time.Second

// pingServe answers Get requests of class with answer(request header)
// until ctx ends: ibping -S and ibsysstat -S. An answer longer than one
// MAD goes with RMPP (rmpp must be set, as ibsysstat registers its class):
// the kernel segments it, or over the simulator ibtool does. Without rmpp
// it is cut to one MAD.
func pingServe(ctx context.Context, f *cmdutil.Factory, o *cmdutil.CommonOptions, io cmdutil.IOStreams, class mad.Class, oui uint32, rmpp bool, answer func(h mad.Header) mad.OpenIBText) error {
	agent := umad.Agent{Class: class, ClassVersion: 1, Methods: []mad.Method{mad.MethodGet}, OUI: mad.OUIBytes(oui)}
	if rmpp {
		agent.RMPPVersion = 1
	}
	tr, _, err := f.OpenServerTransport(o, []umad.Agent{agent})
	if err != nil {
		return err
	}
	defer tr.Close()
	kernelRMPP := false
	if r, ok := tr.(madrpc.RMPPReassembler); ok && r.ReassemblesRMPP() {
		kernelRMPP = true
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = serverRMPPTimeout
	}
	sends := madrpc.NewRMPPSends(tr, timeout)
	warn := func(format string, a ...any) { fmt.Fprintf(io.ErrOut, "warning: "+format+"\n", a...) }
	var p mad.Packet
	for {
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if next, ok := sends.Next(); ok {
			rctx, cancel = context.WithDeadline(ctx, next)
		}
		err := tr.Recv(rctx, &p)
		cancel()
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return nil // stopped by a signal: a server's normal end
			case rctx.Err() != nil: // an RMPP window's time ran out
				for _, err := range sends.Expire(ctx, time.Now()) {
					warn("%v", err)
				}
				continue
			}
			return err
		}
		if p.Status != 0 || len(p.MAD) < mad.Size {
			continue
		}
		if taken, err := sends.Take(ctx, &p); taken {
			if err != nil {
				warn("answering LID %d: %v", p.Addr.LID, err)
			}
			continue
		}
		var h mad.Header
		if h.UnmarshalBinary(p.MAD) != nil || h.MgmtClass != class || h.Method != mad.MethodGet {
			continue
		}
		if mad.Vendor2OUI(p.MAD) != oui {
			continue
		}
		text := answer(h)
		if !rmpp {
			text = text.Fit()
		}
		msg, segmented, err := mad.OpenIBResponse(p.MAD, text)
		if err != nil {
			warn("answering LID %d: %v", p.Addr.LID, err)
			continue
		}
		if o.Verbose > 0 {
			fmt.Fprintf(io.ErrOut, "%s: answered %v from LID %d (%d bytes)\n", class, h.Method, p.Addr.LID, len(msg)-mad.Vendor2DataOffset)
		}
		if segmented && !kernelRMPP {
			err = sends.Send(ctx, msg, mad.Vendor2DataOffset, p.Addr)
		} else {
			err = tr.Send(ctx, &mad.Packet{MAD: msg, Addr: p.Addr})
		}
		if err != nil {
			warn("answering LID %d: %v", p.Addr.LID, err)
		}
	}
}

// pingStats are ibping's statistics.
type pingStats struct {
	Transmitted uint64        `json:"transmitted"`
	Received    uint64        `json:"received"`
	Min, Max    time.Duration `json:"-"`
	Total       time.Duration `json:"-"`
	Host        string        `json:"host"`
}

func ibpingRun(o *ibpingOptions) error {
	if err := o.Common.CheckGMPTarget(o.Target, "ping MADs"); err != nil {
		return err
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	p, err := o.Common.GMPTarget(x, o.Target, "ping MADs")
	if err != nil {
		return err
	}
	ctx := o.Common.Context()
	st := pingStats{Min: -1}
	start := time.Now()
	var replies []pingReply
	for o.Count == 0 || st.Transmitted < o.Count {
		st.Transmitted++
		t0 := time.Now()
		r, err := x.Do(ctx, &madrpc.Request{Path: p, Class: mad.ClassOpenIBPing, Method: mad.MethodGet, Name: "Ping", OUI: o.OUI})
		if ctx.Err() != nil {
			st.Transmitted--
			break
		}
		if err == nil {
			rtt := time.Since(t0)
			var text mad.OpenIBText
			_ = text.UnmarshalBinary(r.Data()) // takes any data
			host := string(text)
			if st.Host == "" {
				st.Host = host
			}
			st.Received++
			st.Total += rtt
			if st.Min < 0 || rtt < st.Min {
				st.Min = rtt
			}
			st.Max = max(st.Max, rtt)
			replies = append(replies, pingReply{Host: host, RTTMicroseconds: rtt.Microseconds()})
			if !o.Flood && !o.Common.JSON {
				fmt.Fprintf(o.IO.Out, "Pong from %s (%s): time %s ms\n", host, p, msec(rtt))
			}
		} else if o.Common.Verbose > 0 {
			fmt.Fprintf(o.IO.ErrOut, "ibping: %v\n", err)
		}
		if !o.Flood && (o.Count == 0 || st.Transmitted < o.Count) {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			if ctx.Err() != nil {
				break
			}
		}
	}
	elapsed := time.Since(start)
	if err := ibpingReport(o, p, st, replies, elapsed); err != nil {
		return err
	}
	if st.Transmitted > 0 && st.Received == 0 {
		return &cmdutil.FindingsError{Summary: fmt.Sprintf("no reply from %s", p)}
	}
	return nil
}

// pingReply is one reply in ibping's --json document.
type pingReply struct {
	Host            string `json:"host"`
	RTTMicroseconds int64  `json:"rttMicroseconds"`
}

// ibpingDoc is ibping's --json document.
type ibpingDoc struct {
	Replies          []pingReply `json:"replies"`
	Statistics       pingStats   `json:"statistics"`
	Target           string      `json:"target"`
	TimeMilliseconds int64       `json:"timeMilliseconds"`
}

// ibpingReport prints the statistics, as infiniband-diags' report does.
func ibpingReport(o *ibpingOptions, p mad.Path, st pingStats, replies []pingReply, elapsed time.Duration) error {
	if o.Common.JSON {
		return cmdutil.WriteJSONDocument(o.IO.Out, ibpingDoc{Replies: replies, Statistics: st, Target: p.String(), TimeMilliseconds: elapsed.Milliseconds()})
	}
	loss := uint64(0)
	if st.Transmitted > 0 {
		loss = (st.Transmitted - st.Received) * 100 / st.Transmitted
	}
	var avg, minRTT time.Duration
	if st.Received > 0 {
		avg = st.Total / time.Duration(st.Received)
		minRTT = st.Min
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n--- %s (%s) ibping statistics ---\n", st.Host, p)
	fmt.Fprintf(&b, "%d packets transmitted, %d received, %d%% packet loss, time %d ms\n", st.Transmitted, st.Received, loss, elapsed.Milliseconds())
	fmt.Fprintf(&b, "rtt min/avg/max = %s/%s/%s ms\n", msec(minRTT), msec(avg), msec(st.Max))
	_, err := fmt.Fprint(o.IO.Out, b.String())
	return err
}

// msec formats a duration as milliseconds with three decimals.
func msec(d time.Duration) string {
	us := d.Microseconds()
	return fmt.Sprintf("%d.%03d", us/1000, us%1000)
}
