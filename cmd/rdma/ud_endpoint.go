package rdma

import (
	"fmt"
	"sync"

	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// cmDevices opens the verbs device of each of a run's CM IDs once, and
// closes them all at the end (udaddy's and mckey's runs).
type cmDevices struct {
	mu   sync.Mutex
	devs map[string]*verbs.Context
}

// open returns the verbs device id is on, opening it the first time.
func (c *cmDevices) open(id *rdmacm.ID) (*verbs.Context, error) {
	d, err := id.Device()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if dev := c.devs[d.Name]; dev != nil {
		return dev, nil
	}
	dev, err := id.OpenDevice()
	if err != nil {
		return nil, err
	}
	if c.devs == nil {
		c.devs = map[string]*verbs.Context{}
	}
	c.devs[d.Name] = dev
	return dev, nil
}

// closeAll closes the devices opened.
func (c *cmDevices) closeAll() {
	for _, dev := range c.devs {
		dev.Close()
	}
}

// udVerbs are a UD endpoint's verbs objects: a PD, one CQ on a completion
// channel, and the MR its datagrams go from and to (a GRH's room first).
type udVerbs struct {
	pd  *verbs.PD
	cch *verbs.CompChannel
	cq  *verbs.CQ
	mr  *verbs.MR
}

// udSetup is how udaddy and mckey size an endpoint: -C datagrams of -S
// bytes, the program's name for its MTU line, whether the QP keeps its
// own multicast datagrams out (mckey -l), and whether it receives.
type udSetup struct {
	tool          string
	count, size   int
	blockLoopback bool
	sendOnly      bool
}

// makeUD checks the message size against the port's active MTU, then
// makes id's verbs objects and UD QP and posts its receives, each with
// wrID (verify_test_params, init_node, post_recvs of udaddy.c and
// mckey.c). What was made before an error is in v, for the caller to
// destroy.
func (s udSetup) makeUD(dev *verbs.Context, id *rdmacm.ID, wrID uint64, printf func(string, ...any)) (v udVerbs, err error) {
	port, err := dev.QueryPort(id.Addr().Port)
	if err != nil {
		return v, err
	}
	if mtu := port.ActiveMTU.Bytes(); s.count > 0 && s.size > mtu {
		printf("%s: message_size %d is larger than active mtu %d\n", s.tool, s.size, mtu)
		return v, &ucmaFailure{status: -22, err: fmt.Errorf("message_size %d is larger than the active MTU %d of port %d", s.size, mtu, id.Addr().Port)}
	}
	if v.pd, err = dev.AllocPD(); err != nil {
		return v, err
	}
	if v.cch, err = dev.CreateCompChannel(); err != nil {
		return v, err
	}
	cqe := 2
	if s.count > 0 {
		cqe = s.count * 2
	}
	if v.cq, err = dev.CreateCQ(cqe, v.cch); err != nil {
		return v, err
	}
	wr := max(s.count, 1)
	cfg := verbs.QPConfig{SendCQ: v.cq, RecvCQ: v.cq, BlockSelfMulticastLoopback: s.blockLoopback,
		Caps: verbs.QPCaps{MaxSendWR: wr, MaxRecvWR: wr, MaxSendSGE: 1, MaxRecvSGE: 1}}
	if _, err := id.CreateQP(v.pd, cfg); err != nil {
		return v, fmt.Errorf("unable to create QP: %w", err)
	}
	if s.count == 0 {
		return v, nil
	}
	if v.mr, err = v.pd.AllocMR(s.size+verbs.GRHSize, verbs.AccessLocalWrite); err != nil {
		return v, err
	}
	if s.sendOnly {
		return v, nil
	}
	for range s.count {
		if err := id.QP().PostRecv(verbs.RecvWR{ID: wrID, MR: v.mr, Length: s.size + verbs.GRHSize}); err != nil {
			return v, fmt.Errorf("failed to post receives: %w", err)
		}
	}
	return v, nil
}
