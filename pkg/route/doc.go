// Package route holds a fabric's forwarding: every switch's linear and
// multicast forwarding tables, collected fabric-wide by SMP (in parallel
// on the transactor's window) or from the SA's LinearForwardingTableRecords
// and MulticastForwardingTableRecords, as typed values a program walks:
// a switch's output port for a DLID (SwitchTables.OutPort), an MLID's
// ports (SwitchTables.Ports). ReadSwitch reads one switch's table, by
// LID or directed route, without a discovery.
//
// It builds on pkg/subnet's fabric database (the switches and the
// directed routes discovery found them by) and pkg/mad's attributes; the
// tools dump_fts, dump_lfts, dump_mfts and ibroute render what it
// collects.
package route
