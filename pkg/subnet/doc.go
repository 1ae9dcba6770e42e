// Package subnet holds the subnet database, the nodes, ports and links of
// an InfiniBand fabric, and discovers it by directed-route SMPs.
//
// Discover walks the fabric breadth first from the local port, one hop
// level at a time, with every SMP of a level in flight at once up to the
// transactor's window. It asks each node for its NodeInfo, NodeDescription,
// SwitchInfo and PortInfo once, and learns a link from one end only
// wherever the other end is already known, so it sends fewer MADs than
// libibnetdisc. Afterwards it replays libibnetdisc's single FIFO queue of
// SMPs over what it found, without sending anything, so that the nodes
// come out in the order infiniband-diags lists them and each node carries
// the directed route libibnetdisc would have found it by.
//
// A query that fails after its retries does not stop the walk: it is
// recorded in Fabric.Errors, with which node or link it concerned, and the
// fabric is then partial.
package subnet
