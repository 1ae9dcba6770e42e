package madrpc_test

import (
	"context"
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// ExampleQuerier_Get reads a port's PortInfo by LID, as smpquery portinfo
// does. A program gets its transactor from endport.Open; here the fabric
// is one in-memory SMA.
func ExampleQuerier_Get() {
	sma := madtest.NewSMA().Put(&mad.PortInfo{LID: 4, SMLID: 1, LinkState: mad.PortStateActive, LinkWidthActive: mad.LinkWidth4X}, 1)
	x := madrpc.NewTransactor(madtest.New(sma.Handle), madrpc.TransactorOptions{})
	defer x.Close()

	var pi mad.PortInfo
	q := madrpc.NewQuerier(x, mad.LIDPath(4))
	if _, err := q.Get(context.Background(), &pi, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("LID %d, SM LID %d, %s, width %s\n", pi.LID, pi.SMLID, pi.LinkState, pi.LinkWidthActive)
	// Output:
	// LID 4, SM LID 1, Active, width 4X
}

// ExampleTransactor_QuerySA asks the SA for the NodeRecord of a LID, as
// saquery -N does. The fake SA here answers every query with one record.
func ExampleTransactor_QuerySA() {
	sa := func(req *mad.Packet) []mad.Packet {
		rec := mad.NodeRecord{LID: 7, NodeInfo: mad.NodeInfo{NodeType: mad.NodeTypeCA, NumPorts: 2, NodeGUID: 0x0002c90300001234}}
		copy(rec.NodeDescription.NodeDescription[:], "node7 HCA-1")
		data, _ := rec.MarshalBinary()
		return []mad.Packet{madtest.Reply(req, 0, 56, data)} // the record after the SA header
	}
	x := madrpc.NewTransactor(madtest.New(sa), madrpc.TransactorOptions{SA: &madrpc.SAAddress{SMLID: 1}})
	defer x.Close()

	tmpl, _ := (&mad.NodeRecord{LID: 7}).MarshalBinary()
	lid, _ := (&mad.NodeRecord{}).Layout().Component("LID")
	res, err := x.QuerySA(context.Background(), &madrpc.SAQuery{Method: mad.MethodGet, AttrID: mad.AttrNodeRecord,
		Name: "NodeRecord", ComponentMask: lid.Mask, Record: tmpl})
	if err != nil {
		fmt.Println(err)
		return
	}
	var nr mad.NodeRecord
	if err := nr.UnmarshalBinary(res.Records[0]); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("LID %d: %s, %d ports, GUID %s, %q\n", nr.LID, nr.NodeInfo.NodeType, nr.NodeInfo.NumPorts, nr.NodeInfo.NodeGUID, nr.NodeDescription.NodeDescription)
	// Output:
	// LID 7: Channel Adapter, 2 ports, GUID 0x0002c90300001234, "node7 HCA-1"
}

// ExamplePMA_Get reads a port's error and traffic counters, as perfquery
// does. The fake performance manager answers with fixed counters.
func ExamplePMA_Get() {
	pma := func(req *mad.Packet) []mad.Packet {
		pc := mad.PortCounters{PortSelect: 1, SymbolErrorCounter: 3, LinkDownedCounter: 1, PortXmitData: 1000, PortRcvData: 2000}
		data, _ := pc.MarshalBinary()
		return []mad.Packet{madtest.Reply(req, 0, 64, data)} // the data area of a PMA MAD
	}
	x := madrpc.NewTransactor(madtest.New(pma), madrpc.TransactorOptions{})
	defer x.Close()

	var pc mad.PortCounters
	if _, err := madrpc.NewPMA(x, mad.LIDPath(4)).Get(context.Background(), &pc, 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("port %d: SymbolErrorCounter %d, LinkDownedCounter %d, PortXmitData %d, PortRcvData %d\n",
		pc.PortSelect, pc.SymbolErrorCounter, pc.LinkDownedCounter, pc.PortXmitData, pc.PortRcvData)
	// Output:
	// port 1: SymbolErrorCounter 3, LinkDownedCounter 1, PortXmitData 1000, PortRcvData 2000
}
