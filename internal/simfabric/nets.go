package simfabric

import _ "embed"

// Net2sw2path4hca is ibsim's example net file net.2sw2path4hca (two
// switches joined by two links, two 2-port HCAs on each, port 1 cabled),
// the bench's small fabric: Options{Net: simfabric.Net2sw2path4hca}. HCAs
// get GUIDs from 0x100000, switches from 0x200000; opensm attaches to
// Switch1.
//
//go:embed testdata/net.2sw2path4hca
var Net2sw2path4hca []byte

// NetChassis holds nodes that libibnetdisc groups into chassis (Voltaire,
// Mellanox, Topspin and Xsigo GUIDs and device IDs) and plain nodes, for
// ibnetdiscover -g and the chassis ports' external numbers. Attach at H1,
// VCA, chassis-ca or H2.
//
//go:embed testdata/net.chassis
var NetChassis []byte
