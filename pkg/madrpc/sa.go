package madrpc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// SAQuery is one request to the subnet administrator (IBA 15.4): a Get,
// GetTable, Set or Delete of one record type, selected by the fields of a
// template record the component mask names.
type SAQuery struct {
	Method mad.Method // MethodGet, MethodGetTable, MethodSet, MethodDelete
	AttrID mad.AttrID
	// Name names the record in messages ("NodeRecord").
	Name    string
	AttrMod uint32
	// ComponentMask has bit n set when the template's n-th component
	// (IBA's numbering for the record type) selects.
	ComponentMask uint64
	// SMKey is the SM_Key: 0 for an untrusted request.
	SMKey uint64
	// Record is the template record.
	Record []byte
	// Timeout, when not 0, replaces the Transactor's timeout: a table the
	// SA takes long to compute.
	Timeout time.Duration
}

// SAResult is the SA's answer to an SAQuery.
type SAResult struct {
	// RecordLen is the distance between records: the response's
	// AttributeOffset, in bytes. Zero in a GetTable response without
	// records.
	RecordLen int
	// Records are the records returned, each RecordLen bytes (a Get's
	// one record runs to the end of the MAD).
	Records [][]byte
	// Response is the whole response, reassembled.
	Response *Response
}

// SAPath returns the path to the SA: the SM's LID and SL from the local
// port, as libibmad's sa_get_handle finds it. It fails when the port knows
// no SM.
func (t *Transactor) SAPath() (mad.Path, error) {
	sa := t.opts.SA
	if sa == nil || sa.SMLID == 0 || sa.SMLID > mad.MaxUnicastLID {
		return mad.Path{}, errors.New("no SM/SA found: the local port knows no SM LID")
	}
	return mad.Path{LID: sa.SMLID, SL: sa.SL}, nil
}

// QuerySA sends q to the SA and returns the records of its answer; a
// GetTable's many-segment answer comes reassembled. A response with a
// non-zero status is a *StatusError naming the SA's status.
func (t *Transactor) QuerySA(ctx context.Context, q *SAQuery) (*SAResult, error) {
	path, err := t.SAPath()
	if err != nil {
		return nil, err
	}
	name := q.Name
	if name == "" {
		name = fmt.Sprintf("attribute %#04x", uint16(q.AttrID))
	}
	r, err := t.Do(ctx, &Request{Path: path, Class: mad.ClassSA, Method: q.Method, AttrID: q.AttrID,
		AttrMod: q.AttrMod, Name: name, Data: q.Record, ComponentMask: q.ComponentMask, MKey: q.SMKey, Timeout: q.Timeout})
	if err != nil {
		return nil, err
	}
	res := &SAResult{Response: r, RecordLen: int(binary.BigEndian.Uint16(r.MAD[mad.SAAttributeOffsetOffset:])) * 8}
	data := r.Data()
	switch {
	case r.Header.Method != mad.MethodGetTableResp && r.Header.Method != mad.MethodGetTraceTableResp && r.Header.Method != mad.MethodGetMultiResp:
		res.Records = [][]byte{data}
		if res.RecordLen == 0 {
			res.RecordLen = len(data)
		}
	case res.RecordLen > 0:
		// Sized up front: a big fabric's table has 170,000 records, and
		// growing the slice copied it some 25 times.
		res.Records = make([][]byte, 0, len(data)/res.RecordLen)
		for len(data) >= res.RecordLen {
			res.Records = append(res.Records, data[:res.RecordLen:res.RecordLen])
			data = data[res.RecordLen:]
		}
	}
	return res, nil
}

// PathSLs asks the SA for one reversible PathRecord from the local port to
// every port (to port GUID dguid only, when not 0) and returns each
// destination LID's SL, as infiniband-diags' ibqueryerrors does before its
// PMA queries. The SA may take long to compute a whole fabric's paths:
// the query waits timeout for its answer.
func (t *Transactor) PathSLs(ctx context.Context, dguid rdma.GUID, timeout time.Duration) (map[rdma.LID]uint8, error) {
	sa := t.opts.SA
	if !t.knowsSM() {
		return nil, errors.New("no SM/SA found: the local port knows no SM LID")
	}
	q := mad.PathRecord{SGID: rdma.NewGID(defaultGIDPrefx, sa.PortGUID), Reversible: 1, NumbPath: 1} // one path per pair
	mask := (*mad.PathRecord)(nil).Layout().ComponentMask("SGID", "Reversible", "NumbPath")
	if dguid != 0 {
		q.DGID = rdma.NewGID(defaultGIDPrefx, dguid)
		mask |= (*mad.PathRecord)(nil).Layout().ComponentMask("DGID")
	}
	rec, _ := q.MarshalBinary()
	res, err := t.QuerySA(ctx, &SAQuery{Method: mad.MethodGetTable, AttrID: mad.AttrPathRecord, Name: "PathRecord",
		ComponentMask: mask, Record: rec, Timeout: timeout})
	if err != nil {
		return nil, err
	}
	sls := make(map[rdma.LID]uint8, len(res.Records))
	for _, r := range res.Records {
		var pr mad.PathRecord
		if pr.UnmarshalBinary(r) == nil {
			sls[rdma.LID(pr.DLID)] = pr.SL
		}
	}
	return sls, nil
}
