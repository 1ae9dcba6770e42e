package rdma_test

import (
	"fmt"
	"os"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// ExampleFS_Devices lists the RDMA devices of a sysfs tree and their
// ports, as ibstat does. A program reads the machine's own with
// rdma.NewFS(os.DirFS("/sys"), "/sys"); here it reads a fixture tree.
func ExampleFS_Devices() {
	devs, err := rdma.NewFS(os.DirFS("testdata/mlx5"), "/sys").Devices()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range devs {
		for _, p := range d.Ports {
			fmt.Printf("%s/%d %s %s LID %s GUID %s\n", d.Name, p.Number, p.LinkLayer, p.State, p.LID, p.GUID)
		}
	}
	// Output:
	// mlx5_0/1 InfiniBand Active LID 5 GUID 0x0c42a10300a1b2c4
	// mlx5_0/2 InfiniBand Down LID 65535 GUID 0x0c42a10300a1b2c5
	// mlx5_1/1 Ethernet Active LID 0 GUID 0x0e42a1fffe654321
}

// ExampleParseGID parses a GID and takes it apart.
func ExampleParseGID() {
	g, err := rdma.ParseGID("fe80::2:c903:a1:b2c4")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("prefix %#x GUID %s (%s)\n", g.Prefix(), g.GUID(), g.GUID().Colon())
	fmt.Println(g.Long())
	// Output:
	// prefix 0xfe80000000000000 GUID 0x0002c90300a1b2c4 (0002:c903:00a1:b2c4)
	// fe80:0000:0000:0000:0002:c903:00a1:b2c4
}
