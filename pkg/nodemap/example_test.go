package nodemap_test

import (
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/pkg/nodemap"
)

// ExampleMap_Name names nodes as the tools do with --node-name-map: the
// map's name for a GUID it holds, else the node description with
// unprintable bytes made spaces.
func ExampleMap_Name() {
	m, err := nodemap.Parse(strings.NewReader("0x0002c90300001234 \"rack1-leaf1\"\n"), "ib-node-name-map")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Len(), "names")
	fmt.Println(m.Name(0x0002c90300001234, "MF0;switch-1:SX6036/U1"))
	fmt.Println(m.Name(0x0002c90300005678, "node\x01 HCA-1"))
	// Output:
	// 1 names
	// rack1-leaf1
	// node  HCA-1
}
