package madrpc

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
)

// Request is one MAD to send and wait on: the class, method and attribute,
// where to, and the attribute data.
type Request struct {
	Path         mad.Path
	Class        mad.Class // ClassSMI is sent as ClassSMIDirect on a DR path
	ClassVersion uint8     // 0 means 1
	Method       mad.Method
	AttrID       mad.AttrID
	AttrMod      uint32
	// Name names the attribute in errors ("NodeInfo"); empty means its ID.
	Name string
	// Data is the attribute data, copied to the class's data area.
	Data []byte
	// DataOffset, when not 0, is where the attribute data starts in the
	// MAD instead of the class's usual place (congestion control's
	// CongestionLog starts at byte 32).
	DataOffset int
	// MKey is the SMP M_Key or a congestion control MAD's CC_Key (both
	// at byte 24), or an SA MAD's SM_Key (byte 36).
	MKey uint64
	// OUI is the vendor's IEEE OUI of a vendor range 2 class (bytes
	// 37-39): 0x001405, OpenIB's, for ibping and ibsysstat.
	OUI uint32
	// ComponentMask is an SA request's component mask (bytes 48-55): the
	// record fields that select.
	ComponentMask uint64
	// Timeout, when not 0, replaces the Transactor's timeout for this
	// request: a query the responder takes long to answer.
	Timeout time.Duration
	// Before, when set, is the attribute as the sender last read it: a
	// dry run (TransactorOptions.DryRun) then shows the fields the
	// request changes from it rather than every field it carries.
	Before []byte
}

// dataStart returns where r's attribute data starts in a MAD of class c.
func (r *Request) dataStart(c mad.Class) (int, error) {
	if r.DataOffset != 0 {
		if r.DataOffset < mad.HeaderLen || r.DataOffset >= mad.Size {
			return 0, fmt.Errorf("%v: data offset %d outside the MAD", r, r.DataOffset)
		}
		return r.DataOffset, nil
	}
	return dataOffset(c)
}

// dataOffset returns where class c's attribute data starts in a MAD.
func dataOffset(c mad.Class) (int, error) {
	switch {
	case c.IsSMP(), c == mad.ClassPerf, c == mad.ClassCC:
		return mad.SMPDataOffset, nil
	case c == mad.ClassSA:
		return 56, nil
	case c.IsVendorRange2():
		return 40, nil
	case c.IsVendorRange1(), c == mad.ClassBM, c == mad.ClassDevMgt:
		return mad.HeaderLen, nil
	}
	return 0, fmt.Errorf("class %v: no known data layout", c)
}

// String names the request for messages: "SubnGet(NodeInfo)".
func (r *Request) String() string {
	attr := r.Name
	if attr == "" {
		attr = fmt.Sprintf("attribute %#04x", uint16(r.AttrID))
	}
	var op string
	switch {
	case r.Class.IsSMP():
		op = "Subn"
	case r.Class == mad.ClassPerf:
		op = "Perf"
	case r.Class == mad.ClassSA:
		op = "SubnAdm"
	case r.Class == mad.ClassCC:
		op = "CC"
	default:
		op = r.Class.String() + " "
	}
	m := r.Method.String()
	return fmt.Sprintf("%s%s(%s)", op, m, attr)
}

// encode writes the request with transaction ID tid into mad, which holds
// Size bytes, and returns the class actually sent.
// class returns the class the request goes as: a directed-route SMP
// for an SMP to a DR path.
func (r *Request) class() (mad.Class, error) {
	if r.Class == mad.ClassSMI && r.Path.IsDR() {
		return mad.ClassSMIDirect, nil
	}
	if r.Class == mad.ClassSMIDirect && !r.Path.IsDR() {
		return 0, fmt.Errorf("%v: a directed-route SMP needs a DR path, not %v", r, r.Path)
	}
	return r.Class, nil
}

// respAttr is the attribute the response carries: the request's, except
// that a GetMulti of MultiPathRecords is answered with PathRecords (IBA
// o15-0.2.7).
func (r *Request) respAttr() mad.AttrID {
	if r.Method == mad.MethodGetMulti && r.Class == mad.ClassSA && r.AttrID == mad.AttrMultiPathRecord {
		return mad.AttrPathRecord
	}
	return r.AttrID
}

// encode writes the request into buf (at least Size bytes; a GetMulti's
// may be longer, for its data) and returns the class it goes as.
func (r *Request) encode(buf []byte, tid uint64) (mad.Class, error) {
	class, err := r.class()
	if err != nil {
		return 0, err
	}
	if err := r.Path.Validate(); err != nil {
		return 0, err
	}
	if class.IsSMP() && r.Path.DGID != nil && r.Path.LID == 0 {
		return 0, fmt.Errorf("%v to %v: an SMP takes no global route; a GID target needs the SA to resolve it to a LID, and the local port knows no SM", r, r.Path)
	}
	off, err := r.dataStart(class)
	if err != nil {
		return 0, err
	}
	if len(r.Data) > len(buf)-off {
		return 0, fmt.Errorf("%v: %d bytes of data; the class has room for %d", r, len(r.Data), len(buf)-off)
	}
	clear(buf)
	version := r.ClassVersion
	if version == 0 {
		version = 1
		if class == mad.ClassSA || class == mad.ClassCC {
			version = 2 // as libibmad sends them
		}
	}
	h := mad.Header{
		BaseVersion:  mad.BaseVersion,
		MgmtClass:    class,
		ClassVersion: version,
		Method:       r.Method,
		TID:          tid,
		AttrID:       r.AttrID,
		AttrMod:      r.AttrMod,
	}
	if err := h.MarshalTo(buf); err != nil {
		return 0, err
	}
	switch class {
	case mad.ClassSMIDirect:
		d := mad.DRSMPHeader{
			HopCount: uint8(r.Path.Hops()),
			MKey:     r.MKey,
			DrSLID:   r.Path.DRSLID(),
			DrDLID:   0xffff,
		}
		copy(d.InitialPath[:], r.Path.DR)
		if err := d.MarshalTo(buf); err != nil {
			return 0, err
		}
	case mad.ClassSMI, mad.ClassCC:
		binary.BigEndian.PutUint64(buf[mad.MKeyOffset:], r.MKey)
	}
	if class == mad.ClassSA {
		binary.BigEndian.PutUint64(buf[mad.SASMKeyOffset:], r.MKey)
		binary.BigEndian.PutUint64(buf[mad.SAComponentMaskOffset:], r.ComponentMask)
	}
	if class.IsVendorRange2() {
		buf[37], buf[38], buf[39] = byte(r.OUI>>16), byte(r.OUI>>8), byte(r.OUI)
	}
	copy(buf[off:], r.Data)
	return class, nil
}

// Response is a MAD received in answer to a Request.
type Response struct {
	Header mad.Header
	// MAD is the whole response.
	MAD []byte
	// Tries is how many tries it took: a try that timed out is sent
	// again, up to the retries.
	Tries int
	// Sent counts the MADs this end sent for it: the request once a try
	// (a GetMulti's segments each) and again within a try when the
	// transport returned it undelivered, and where ibtool runs RMPP
	// itself the ACKs of the answer's segments and what its timers sent
	// again. The kernel's RMPP ACKs are not seen.
	Sent int
	// DryRun says the request was not sent (TransactorOptions.DryRun):
	// the response is the request itself and no port answered.
	DryRun bool
	data   int // offset of the attribute data
	end    int // end of the attribute data
}

// Data returns the attribute data of the response: 64 bytes for an SMP,
// the rest of the MAD for other classes.
func (r *Response) Data() []byte { return r.MAD[r.data:r.end] }
