package exporter

import (
	"math/bits"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// laneRate is a link speed's signaling and effective rate per lane, in
// Gb/s (infiniband_exporter's laneRates).
type laneRate struct{ raw, effective float64 }

var (
	rateSDR   = laneRate{2.5, 2}
	rateDDR   = laneRate{5, 4}
	rateQDR   = laneRate{10, 8}
	rateFDR10 = laneRate{10.3125, 10}
	rateFDR   = laneRate{14.0625, 13.64}
	rateEDR   = laneRate{25.78125, 25}
	rateHDR   = laneRate{50, 50}
	rateNDR   = laneRate{100, 100}
)

// speedRates are LinkSpeed's bits' rates, slowest first, and
// extSpeedRates LinkSpeedExt's.
var (
	speedRates    = []laneRate{rateSDR, rateDDR, rateQDR}
	extSpeedRates = []laneRate{rateFDR, rateEDR, rateHDR, rateNDR}
)

// widthLanes are LinkWidth's bits' lane counts: 1x, 4x, 8x, 12x, 2x.
var widthLanes = []int{1, 4, 8, 12, 2}

// lanes is the number of lanes of a LinkWidth value (one bit set), 0 for
// none or an unknown one.
func lanes(w uint8) int {
	if bits.OnesCount8(w) != 1 {
		return 0
	}
	i := bits.TrailingZeros8(w)
	if i >= len(widthLanes) {
		return 0
	}
	return widthLanes[i]
}

// widestLanes is the lane count of the widest width of a set of LinkWidth
// bits.
func widestLanes(set uint8) int {
	n := 0
	for i, l := range widthLanes {
		if set&(1<<i) != 0 && l > n {
			n = l
		}
	}
	return n
}

// activeRate is the rate a port's link runs at, as ibnetdiscover names it
// (the extended speed where the port says it is valid, FDR10 where
// MlnxExtPortInfo says so); ok is false when the port's PortInfo was not
// read or names no known speed.
func activeRate(p *subnet.Port) (laneRate, bool) {
	if p.Info == nil {
		return laneRate{}, false
	}
	if ext := uint8(p.LinkSpeedExtActive()); ext != 0 {
		return fastest(ext, extSpeedRates)
	}
	if p.ExtInfo != nil && p.ExtInfo.LinkSpeedActive&1 != 0 {
		return rateFDR10, true
	}
	return fastest(uint8(p.Info.LinkSpeedActive), speedRates)
}

// fastest is the fastest rate of a set of speed bits.
func fastest(set uint8, rates []laneRate) (laneRate, bool) {
	for i := len(rates) - 1; i >= 0; i-- {
		if set&(1<<i) != 0 {
			return rates[i], true
		}
	}
	return laneRate{}, false
}

// enabledRate is the fastest speed both ends of p's link enable and
// support (p's alone when the far end's PortInfo is unknown): what the
// link should train to.
func enabledRate(p *subnet.Port) (laneRate, bool) {
	if p.Info == nil {
		return laneRate{}, false
	}
	ext, speed, extOK := speedSets(p)
	if r := p.Remote; r != nil && r.Info != nil {
		rext, rspeed, rextOK := speedSets(r)
		ext &= rext
		speed &= rspeed
		extOK = extOK && rextOK
	}
	if extOK {
		if rate, ok := fastest(ext, extSpeedRates); ok {
			return rate, true
		}
	}
	return fastest(speed, speedRates)
}

// speedSets are the speeds p enables and supports; extOK says its
// extended speeds are valid.
func speedSets(p *subnet.Port) (ext, speed uint8, extOK bool) {
	speed = uint8(p.Info.LinkSpeedEnabled) & uint8(p.Info.LinkSpeedSupported)
	if extSpeedsValid(p) {
		ext = uint8(p.Info.LinkSpeedExtEnabled) & uint8(p.Info.LinkSpeedExtSupported)
		extOK = true
	}
	return ext, speed, extOK
}

// extSpeedsValid reports whether p's capability mask (port 0's on a
// switch) says the extended speed fields are valid.
func extSpeedsValid(p *subnet.Port) bool {
	q := p
	if p.Node.Type == mad.NodeTypeSwitch {
		q = p.Node.Port(0)
	}
	return q != nil && q.Info != nil && q.Info.CapabilityMask&mad.PortCapIsExtendedSpeedsSupported != 0
}

// enabledLanes is the widest width both ends of p's link enable and
// support (p's alone when the far end's PortInfo is unknown).
func enabledLanes(p *subnet.Port) int {
	if p.Info == nil {
		return 0
	}
	set := uint8(p.Info.LinkWidthEnabled) & uint8(p.Info.LinkWidthSupported)
	if r := p.Remote; r != nil && r.Info != nil {
		set &= uint8(r.Info.LinkWidthEnabled) & uint8(r.Info.LinkWidthSupported)
	}
	return widestLanes(set)
}

// typeCode is ibnetdiscover's name of a node type: SW, CA or RT.
func typeCode(t mad.NodeType) string {
	switch t {
	case mad.NodeTypeSwitch:
		return "SW"
	case mad.NodeTypeCA:
		return "CA"
	case mad.NodeTypeRouter:
		return "RT"
	}
	return "??"
}
