package exporter

import (
	"context"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// counter is one port counter the exporter reports: the PMA field it is
// read from and infiniband_exporter's metric name for it (after
// "infiniband_switch_" or "infiniband_hca_").
type counter struct {
	field  string
	metric string
	kind   counterKind
}

// counterKind says how a counter counts.
type counterKind int

const (
	// kindData: 4-byte words.
	kindData counterKind = iota
	// kindPackets: packets.
	kindPackets
	// kindError: events.
	kindError
)

// counters are the counters in infiniband_exporter's order; their
// indexes are bits of PortReading's masks.
var counters = []counter{
	{"PortXmitData", "port_transmit_data_bytes_total", kindData},
	{"PortRcvData", "port_receive_data_bytes_total", kindData},
	{"PortXmitPkts", "port_transmit_packets_total", kindPackets},
	{"PortRcvPkts", "port_receive_packets_total", kindPackets},
	{"PortUnicastXmitPkts", "port_unicast_transmit_packets_total", kindPackets},
	{"PortUnicastRcvPkts", "port_unicast_receive_packets_total", kindPackets},
	{"PortMulticastXmitPkts", "port_multicast_transmit_packets_total", kindPackets},
	{"PortMulticastRcvPkts", "port_multicast_receive_packets_total", kindPackets},
	{"SymbolErrorCounter", "port_symbol_error_total", kindError},
	{"LinkErrorRecoveryCounter", "port_link_error_recovery_total", kindError},
	{"LinkDownedCounter", "port_link_downed_total", kindError},
	{"PortRcvErrors", "port_receive_errors_total", kindError},
	{"PortRcvRemotePhysicalErrors", "port_receive_remote_physical_errors_total", kindError},
	{"PortRcvSwitchRelayErrors", "port_receive_switch_relay_errors_total", kindError},
	{"PortXmitDiscards", "port_transmit_discards_total", kindError},
	{"PortXmitConstraintErrors", "port_transmit_constraint_errors_total", kindError},
	{"PortRcvConstraintErrors", "port_receive_constraint_errors_total", kindError},
	{"LocalLinkIntegrityErrors", "port_local_link_integrity_errors_total", kindError},
	{"ExcessiveBufferOverrunErrors", "port_excessive_buffer_overrun_errors_total", kindError},
	{"VL15Dropped", "port_vl15_dropped_total", kindError},
	{"PortXmitWait", "port_transmit_wait_total", kindError},
	{"QP1Dropped", "port_qp1_dropped_total", kindError},
}

// PortReading is one port's counters as a sweep read them.
type PortReading struct {
	Port int
	// Values are the counters' values in counters' order, data counters
	// in 4-byte words as the PMA counts them.
	Values [numCounters]uint64
	// Present has bit i set when counter i was read; Saturated when it
	// was read from a field narrower than 64 bits that stood at its
	// largest value, where the PMA stops counting.
	Present, Saturated uint32
	// Extended is set when the data counters came from
	// PortCountersExtended.
	Extended bool
	// Read is set when the port's counters were read.
	Read bool
}

const numCounters = 22

// counterField is where a counter is read: its field in PortCounters
// (narrow) and in PortCountersExtended (wide), each with whether the
// attribute has it.
type counterField struct {
	narrow, wide       mad.Field
	hasNarrow, hasWide bool
}

// counterFields are counters' fields, looked up once: a scrape reads
// them for every port.
var counterFields = sync.OnceValue(func() *[numCounters]counterField {
	fs := new([numCounters]counterField)
	narrow, wide := new(mad.PortCounters).Layout(), new(mad.PortCountersExtended).Layout()
	for i, c := range counters {
		fs[i].narrow, fs[i].hasNarrow = narrow.Field(c.field)
		fs[i].wide, fs[i].hasWide = wide.Field(c.field)
	}
	return fs
})

// readPort reads port num's counters at the PMA path leads to, each
// from the attribute the PMA's capabilities choose
// (mad.PMACapabilities.CounterSource).
func readPort(ctx context.Context, x *madrpc.Transactor, path mad.Path, caps mad.PMACapabilities, num int) (PortReading, error) {
	r := PortReading{Port: num}
	var narrow, wide []byte
	var err error
	readNarrow, readWide := caps.CounterAttributes(mad.PortCounterNames...)
	// The request carries only PortSelect, and the reply stays undecoded:
	// a sweep does this for every port.
	pma := madrpc.NewPMA(x, path)
	if readNarrow {
		if narrow, err = pma.GetData(ctx, new(mad.PortCounters).Layout(), num); err != nil {
			return r, err
		}
	}
	if readWide {
		if wide, err = pma.GetData(ctx, new(mad.PortCountersExtended).Layout(), num); err != nil {
			return r, err
		}
	}
	r.Extended = caps.CounterSource("PortXmitData") == mad.FromPortCountersExtended
	fs := counterFields()
	for i, c := range counters {
		var data []byte
		var f mad.Field
		var ok bool
		switch caps.CounterSource(c.field) {
		case mad.FromPortCounters:
			data, f, ok = narrow, fs[i].narrow, fs[i].hasNarrow
		case mad.FromPortCountersExtended:
			data, f, ok = wide, fs[i].wide, fs[i].hasWide
		}
		if !ok || len(data) == 0 {
			continue
		}
		v := f.Value(data)
		r.Values[i] = v
		r.Present |= 1 << i
		if f.Width < 64 && v == 1<<f.Width-1 {
			r.Saturated |= 1 << i
		}
	}
	return r, nil
}
