package sa

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
)

// TestSaqueryGenericRecord: a record type saquery has no view of prints
// as its layout dumps it, two tabs in, and its JSON is the generated
// struct's.
func TestSaqueryGenericRecord(t *testing.T) {
	lr := &mad.LinkRecord{FromLID: 1, FromPort: 3, ToPort: 1, ToLID: 2}
	raw, _ := lr.MarshalBinary()
	r := genericRecord{attr: lr, raw: raw}
	var text strings.Builder
	r.writeText(&text, &saText{})
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{text.String(), string(js)}
	want := []string{"LinkRecord dump:\n" +
		"\t\tFromLID:.........................1\n" +
		"\t\tFromPort:........................3\n" +
		"\t\tToPort:..........................1\n" +
		"\t\tToLID:...........................2\n",
		`{"fromLID":1,"fromPort":3,"toPort":1,"toLID":2}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("generic record (-want +got):\n%s", diff)
	}
	// Queried as a generic record type, selected by MEMBER=VALUE.
	sa := newFakeSA()
	sa.every = true
	o, err := saqueryOpts(t, sa, "LR", "toLID=2")
	if err != nil {
		t.Fatal(err)
	}
	o.Query = &saQueryType{name: "LinkRecord", layout: linkRecordLayout, run: (*saQuerier).genericRecords}
	var out strings.Builder
	o.IO.Out = &out
	if err := saqueryRun(o); err != nil {
		t.Fatal(err)
	}
	var h mad.Header
	var tmpl mad.LinkRecord
	h.UnmarshalBinary(sa.reqs[len(sa.reqs)-1].MAD)
	tmpl.UnmarshalBinary(sa.reqs[len(sa.reqs)-1].MAD[56:])
	wantOut := "LinkRecord dump:\n\t\tFromLID:.........................0\n\t\tFromPort:........................0\n" +
		"\t\tToPort:..........................0\n\t\tToLID:...........................0\n"
	if diff := cmp.Diff([]any{wantOut, mad.AttrLinkRecord, uint16(2)}, []any{out.String(), h.AttrID, tmpl.ToLID}); diff != "" {
		t.Errorf("generic query (-want +got):\n%s", diff)
	}
	// Every SA record of the table has a view today; one added to it
	// would be listed here and in saquery's usage.
	for _, q := range genericQueries() {
		if f := findSAQuery(q.name); f == nil || f.layout != q.layout {
			t.Errorf("%s: not found by its name", q.name)
		}
	}
}

// FuzzSaqueryRecords decodes any bytes as each record type saquery
// prints and prints them, as text and JSON.
func FuzzSaqueryRecords(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x01\x02\x03\xff\xfe\xfd\xfc"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var buf [176]byte // the longest record, ServiceRecord's
		copy(buf[:], b)
		rec := buf[:]
		text := &saText{showKeys: len(b)%2 == 0, cpi: newClassPortInfo(rec)}
		for _, r := range []saTextRecord{newNodeRecord(rec), newPathRecord(rec), text.cpi, newPortInfoRecord(rec),
			newMCMemberRecord(rec), mcGroupText{newMCMemberRecord(rec)}, newServiceRecord(rec), newSMInfoRecord(rec),
			newSwitchInfoRecord(rec), newInformInfoRecord(rec), newLinkRecord(rec), newSL2VLRecord(rec),
			newVLArbRecord(rec), newPKeyTableRecord(rec), newLFTRecord(rec), newGUIDInfoRecord(rec), newMFTRecord(rec)} {
			r.writeText(io.Discard, text)
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("%T: %v", r, err)
			}
		}
	})
}
