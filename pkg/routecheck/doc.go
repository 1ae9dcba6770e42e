// Package routecheck checks the routing of an InfiniBand subnet as
// ibutils' ibdmchk does: every CA-to-CA route followed through the
// switches' linear forwarding tables reaches its destination with no loop
// and no black hole, the hop counts of the routes against the topology's
// minimum, how evenly the destinations spread over the switch ports, the
// credit loops of the channel dependency graph of (port, VL) channels, the
// Up/Down rule from a set of root switches, and the multicast trees of the
// multicast forwarding tables.
//
// A Fabric is filled either by the loaders of opensm's dumps (ReadSubnet
// for opensm-subnet.lst, ReadFDBs for opensm.fdbs, ReadMCFDBs for
// opensm.mcfdbs, ReadPathSLs and ReadSL2VL for ibdmchk's -c and -d files)
// or by its constructor methods (AddNode, Connect, SetLFT, SetMFT,
// SetPathSL, SetSL2VL). Sweep reads the live fabric: on a fabric
// pkg/subnet discovered it reads every switch's forwarding tables
// (pkg/route), and optionally the SL2VL tables and the SA's path SLs, into
// a Snapshot — the state opensm's dumps hold — whose Fabric method builds
// the same model the loaders would, and whose Write methods write those
// dumps. Design fills one as a subnet manager would bring a fabric up
// (ibdmchk's design mode): from a Topology that ReadTopology reads from
// ibnetdiscover's topology file, it gives the ports the SM reaches their
// LIDs and routes every switch's table with the MinHop or UpDown engine.
//
// The checks follow each destination's tree through the forwarding tables
// once instead of tracing every pair of ports, and search the dependency
// graph for cycles iteratively, so fabrics of tens of thousands of ports
// are checked in seconds and deep graphs cannot overflow a stack.
package routecheck
