package madrpc

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
)

// PMA sends typed PerfMgt Gets and Sets to one node's performance manager
// agent: each request selects its port in PortSelect.
type PMA struct {
	Q *Querier
}

// NewPMA returns a PMA of x at path.
func NewPMA(x *Transactor, path mad.Path) *PMA { return &PMA{Q: NewQuerier(x, path)} }

// Capabilities reads the PMA's ClassPortInfo. The request carries port in
// its second byte, where the counter attributes have PortSelect, as
// libibmad sends every PerfMgt Get.
func (p *PMA) Capabilities(ctx context.Context, port int) (mad.PMACapabilities, error) {
	cpi := mad.ClassPortInfo{ClassVersion: uint8(port)}
	if _, err := p.Q.Get(ctx, &cpi, 0); err != nil {
		return mad.PMACapabilities{}, err
	}
	return mad.CapabilitiesOf(&cpi), nil
}

// Get reads a's attribute for port: the request is a with PortSelect set
// to port; the reply is decoded into a, and its data returned for dumps.
func (p *PMA) Get(ctx context.Context, a mad.Attribute, port int) ([]byte, error) {
	if err := mad.SelectPort(a, port); err != nil {
		return nil, err
	}
	return p.Q.Get(ctx, a, 0)
}

// Reset sends a Set of l's attribute for port that clears the counters
// mask selects (0: all of them), laid out as libibmad's
// performance_reset_via lays it out (see ResetData). planned is true when
// a dry run kept the Set from the fabric.
func (p *PMA) Reset(ctx context.Context, l *mad.Layout, port int, mask uint64) (planned bool, err error) {
	r, err := p.Q.X.Do(ctx, p.Q.request(l, mad.MethodSet, 0, mad.ResetData(l, port, mask), nil))
	if err != nil {
		return false, err
	}
	return r.DryRun, nil
}

// PortNumbers returns the ports a PMA of the node at q's path answers
// for, one by one: 1 to NumPorts, from 0 on a switch with an enhanced
// port 0 (infiniband-diags' AllPortSelect emulation).
func PortNumbers(ctx context.Context, q *Querier) ([]int, error) {
	var ni mad.NodeInfo
	if _, err := q.Get(ctx, &ni, 0); err != nil {
		return nil, err
	}
	if ni.NumPorts == 0 {
		return nil, fmt.Errorf("NodeInfo says the node has no ports")
	}
	start := 1
	if ni.NodeType == mad.NodeTypeSwitch {
		var si mad.SwitchInfo
		if _, err := q.Get(ctx, &si, 0); err != nil {
			return nil, err
		}
		if si.EnhancedPort0 != 0 {
			start = 0
		}
	}
	ports := make([]int, 0, int(ni.NumPorts)+1-start)
	for p := start; p <= int(ni.NumPorts); p++ {
		ports = append(ports, p)
	}
	return ports, nil
}

// ReadCounters reads port's counters: the attributes CounterAttributes
// says the counters named (all when none are) need, for a PMA with
// capabilities caps (see Capabilities). PortCounters' PortXmitWait reads
// 0 where the PMA does not claim it (Hide).
func (p *PMA) ReadCounters(ctx context.Context, caps mad.PMACapabilities, port int, names ...string) (*mad.PortCounterSet, error) {
	s := &mad.PortCounterSet{Caps: caps}
	narrow, wide := caps.CounterAttributes(names...)
	if narrow {
		s.Counters = new(mad.PortCounters)
		if _, err := p.Get(ctx, s.Counters, port); err != nil {
			return nil, err
		}
		caps.Hide(s.Counters)
	}
	if wide {
		s.Extended = new(mad.PortCountersExtended)
		if _, err := p.Get(ctx, s.Extended, port); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// GetData reads l's attribute for port and returns the reply's attribute
// data undecoded: the request carries only PortSelect, as a Get of any
// counter attribute needs. A sweep reading many ports uses it to skip
// decoding whole attributes.
func (p *PMA) GetData(ctx context.Context, l *mad.Layout, port int) ([]byte, error) {
	r, err := p.Q.X.Do(ctx, p.Q.request(l, mad.MethodGet, 0, []byte{0, uint8(port)}, nil))
	if err != nil {
		return nil, err
	}
	return r.Data(), nil
}
