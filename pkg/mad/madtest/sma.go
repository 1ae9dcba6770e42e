package madtest

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
)

// AnyMod, given to SMA.Put as the modifier, answers a Get of the attribute
// with any modifier that has no answer of its own.
const AnyMod = ^uint64(0)

// SMARequest is one SMP an SMA received.
type SMARequest struct {
	Method mad.Method
	AttrID mad.AttrID
	Mod    uint32
	// MKey is the M_Key the SMP carried.
	MKey uint64
	// Data is the request's attribute data (64 bytes).
	Data []byte
	// Dropped says the M_Key check failed: the SMA did not answer.
	Dropped bool
}

type smaKey struct {
	id  mad.AttrID
	mod uint64
}

// SMA answers SMPs as one node's subnet management agent would, from
// typed attributes: a Get returns what Put stored for the attribute and
// modifier, a Set stores its data and returns it, other methods (a Trap)
// get no answer, and an attribute with nothing stored is answered with
// status "method/attribute combination unsupported". It answers by LID
// and by directed route alike; a test routes requests to SMAs by their
// path itself.
//
// After CheckMKeys the SMA checks M_Keys as IBA 14.2.4 has a port do,
// with the M_Key, M_KeyProtectBits and M_KeyLeasePeriod of its PortInfo
// (sma_mkey.go).
type SMA struct {
	mu sync.Mutex
	// checkMKeys is set by CheckMKeys.
	checkMKeys bool
	attrs      map[smaKey][]byte
	requests   []SMARequest
	// leaseEnd is when the M_Key lease started by a violation runs out
	// and the protect bits fall to 0; zero when no lease runs.
	leaseEnd time.Time
	// Now is the clock of the M_Key lease; nil means time.Now.
	Now func() time.Time
}

// NewSMA returns an SMA with no attributes.
func NewSMA() *SMA { return &SMA{attrs: map[smaKey][]byte{}} }

// Put makes a Get of a's attribute with modifier mod (AnyMod: any
// modifier) return a; it returns s, so a test can chain Puts.
func (s *SMA) Put(a mad.Attribute, mod uint64) *SMA {
	data, err := a.AppendBinary(nil)
	if err != nil {
		panic(err) // generated attributes encode without error
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attrs[smaKey{a.Layout().ID, mod}] = data
	return s
}

// PutData is Put for an attribute given as its data.
func (s *SMA) PutData(id mad.AttrID, mod uint64, data []byte) *SMA {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attrs[smaKey{id, mod}] = append([]byte(nil), data...)
	return s
}

// Handle answers one request; it is a Handler.
func (s *SMA) Handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	if err := h.UnmarshalBinary(req.MAD); err != nil || !h.MgmtClass.IsSMP() {
		return nil
	}
	data := req.MAD[mad.SMPDataOffset : mad.SMPDataOffset+mad.SMPDataLen]
	mkey := binary.BigEndian.Uint64(req.MAD[smpMKeyOffset:])
	s.mu.Lock()
	defer s.mu.Unlock()
	passed := s.checkMKey(h.Method, mkey)
	s.requests = append(s.requests, SMARequest{Method: h.Method, AttrID: h.AttrID, Mod: h.AttrMod, MKey: mkey,
		Data: append([]byte(nil), data...), Dropped: !passed})
	if !passed {
		return nil // IBA 14.2.4: a failed M_Key check gets no response
	}
	key := smaKey{h.AttrID, uint64(h.AttrMod)}
	switch h.Method {
	case mad.MethodGet:
	case mad.MethodSet:
		s.attrs[key] = append([]byte(nil), data...)
		if h.AttrID == mad.AttrPortInfo {
			s.setProtection(data)
		}
	default:
		return nil // a Trap or a response: nothing answers
	}
	reply, ok := s.attrs[key]
	if !ok {
		reply, ok = s.attrs[smaKey{h.AttrID, AnyMod}]
	}
	if !ok {
		return []mad.Packet{Reply(req, mad.StatusMethodAttrUnsupported, mad.SMPDataOffset, nil)}
	}
	if h.Method == mad.MethodGet && h.AttrID == mad.AttrPortInfo {
		reply = s.hideMKey(reply, mkey)
	}
	return []mad.Packet{Reply(req, mad.StatusOK, mad.SMPDataOffset, reply)}
}

// Requests returns the requests received so far, in order.
func (s *SMA) Requests() []SMARequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SMARequest(nil), s.requests...)
}
