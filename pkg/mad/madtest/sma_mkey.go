package madtest

import (
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
)

// smpMKeyOffset is where an SMP carries its M_Key, LID-routed or
// directed-route (IBA 14.2.1.1 and 14.2.1.2).
const smpMKeyOffset = 24

// The M_Key check of IBA 14.2.4, as the SMA does it after CheckMKeys. The port's M_Key,
// M_KeyProtectBits and M_KeyLeasePeriod are those of the PortInfo a Get
// with modifier 0 returns (the one stored for 0, else for AnyMod): the
// SMA has one M_Key, as a switch's ports all go by port 0's.
//
// The check passes when the port's M_Key is 0 or the SMP carries it.
// When it fails:
//
//	protect bits   Get                               Set, TrapRepress
//	0              answered                          dropped
//	1              answered, PortInfo's M_Key as 0   dropped
//	2, 3           dropped                           dropped
//
// A drop gets no response, counts in PortInfo's M_KeyViolations (which
// stops at 0xffff) and, with a non-zero M_KeyLeasePeriod and no lease
// running, starts the lease: when it runs out the protect bits fall to
// 0, so that a lost key does not lock the port for good. An SMP that
// passes the check stops a running lease. The SMA sends no Bad M_Key
// trap (256).

// CheckMKeys makes the SMA check the M_Key of every SMP; it returns s. An
// SMA that does not lets every SMP pass, whatever its PortInfo's M_Key:
// the fake fabrics of tool tests show keys without guarding with them.
func (s *SMA) CheckMKeys() *SMA {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkMKeys = true
	return s
}

// protection returns the PortInfo the M_Key check reads and where it is
// stored, or false when there is none.
func (s *SMA) protection() (*mad.PortInfo, smaKey, bool) {
	if !s.checkMKeys {
		return nil, smaKey{}, false
	}
	for _, k := range []smaKey{{mad.AttrPortInfo, 0}, {mad.AttrPortInfo, AnyMod}} {
		if data, ok := s.attrs[k]; ok {
			var pi mad.PortInfo
			if err := pi.UnmarshalBinary(data); err != nil {
				return nil, smaKey{}, false
			}
			return &pi, k, true
		}
	}
	return nil, smaKey{}, false
}

// storeProtection writes pi back where protection found it.
func (s *SMA) storeProtection(pi *mad.PortInfo, k smaKey) {
	data, err := pi.AppendBinary(nil)
	if err != nil {
		panic(err) // generated attributes encode without error
	}
	s.attrs[k] = data
}

// now is the lease's clock.
func (s *SMA) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// checkMKey runs the M_Key check on an SMP of method m carrying key and
// reports whether the SMA may answer it. s.mu is held.
func (s *SMA) checkMKey(m mad.Method, key uint64) bool {
	pi, k, ok := s.protection()
	if !ok {
		return true
	}
	now := s.now()
	if !s.leaseEnd.IsZero() && !now.Before(s.leaseEnd) {
		s.leaseEnd = time.Time{}
		pi.ProtectBits = 0
		s.storeProtection(pi, k)
	}
	if pi.MKey == 0 || pi.MKey == key {
		if m == mad.MethodGet || m == mad.MethodSet || m == mad.MethodTrapRepress {
			s.leaseEnd = time.Time{}
		}
		return true
	}
	switch {
	case m == mad.MethodGet && pi.ProtectBits < 2:
		return true
	case m == mad.MethodGet, m == mad.MethodSet, m == mad.MethodTrapRepress:
	default:
		return true // not checked: a Trap or a response, which gets no answer anyway
	}
	if pi.MKeyViolations != 0xffff {
		pi.MKeyViolations++
	}
	if s.leaseEnd.IsZero() && pi.MKeyLeasePeriod != 0 {
		s.leaseEnd = now.Add(time.Duration(pi.MKeyLeasePeriod) * time.Second)
	}
	s.storeProtection(pi, k)
	return false
}

// setProtection takes the M_Key, protect bits and lease period of a
// PortInfo Set that passed the check, whatever port it named.
func (s *SMA) setProtection(data []byte) {
	var set mad.PortInfo
	if set.UnmarshalBinary(data) != nil {
		return
	}
	pi, k, ok := s.protection()
	if !ok {
		return
	}
	pi.MKey, pi.ProtectBits, pi.MKeyLeasePeriod = set.MKey, set.ProtectBits, set.MKeyLeasePeriod
	s.storeProtection(pi, k)
}

// hideMKey returns the PortInfo reply to a Get carrying key: at protect
// level 1 a Get without the port's M_Key sees the M_Key field as 0.
func (s *SMA) hideMKey(reply []byte, key uint64) []byte {
	pi, _, ok := s.protection()
	if !ok || pi.ProtectBits != 1 || pi.MKey == key {
		return reply
	}
	var got mad.PortInfo
	if got.UnmarshalBinary(reply) != nil {
		return reply
	}
	got.MKey = 0
	data, err := got.AppendBinary(nil)
	if err != nil {
		return reply
	}
	return data
}
