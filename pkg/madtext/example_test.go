package madtext_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madtext"
)

// ExampleAppendPortInfoFields prints chosen PortInfo fields as
// ibportstate shows them, the M_Key hidden unless the keys are asked for.
func ExampleAppendPortInfoFields() {
	pi := mad.PortInfo{MKey: 0x1122, LID: 12, LinkState: mad.PortStateActive, LinkWidthActive: mad.LinkWidth4X}
	out := madtext.AppendPortInfoFields(nil, &pi, []string{"LID", "LinkState", "LinkWidthActive", "MKey"}, false)
	os.Stdout.Write(out)
	// Output:
	// Lid:.............................12
	// LinkState:.......................Active
	// LinkWidthActive:.................4X
	// Mkey:............................<not displayed>
}

// ExampleAppendDump prints an SA NodeRecord with libibmad's labels, as
// saquery does: the embedded NodeInfo's fields at their place in it.
func ExampleAppendDump() {
	rec := mad.NodeRecord{LID: 2, NodeInfo: mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: mad.NodeTypeCA, NumPorts: 2, LocalPortNum: 1}}
	data, _ := rec.MarshalBinary()
	out := madtext.AppendDump(nil, rec.Layout(), data)
	for _, line := range strings.SplitAfter(string(out), "\n")[:5] {
		fmt.Print(line)
	}
	// Output:
	// Lid:.............................2
	// BaseVers:........................1
	// ClassVers:.......................1
	// NodeType:........................Channel Adapter
	// NumPorts:........................2
}
