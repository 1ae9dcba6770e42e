// Package madrpc sends InfiniBand management datagrams and waits for their
// answers: the Transactor, which matches responses to requests by TID,
// retries on timeouts with the kernel's grace between tries and keeps a
// window of requests in flight; RMPP, the multi-packet protocol SA tables
// and vendor classes use (a receiver and a sender, with timers per
// transfer and a total limit); SA queries (QuerySA, PathRecord resolution
// of GID and GUID targets, python-rdma's --sa way of answering SMP Gets
// from SA records); typed Gets and Sets of pkg/mad's attributes through a
// Querier, and a PMA client; and dry-run Plans of what a Set would change.
//
// A Transactor runs over any mad.Transport: pkg/mad/umad for the kernel,
// pkg/mad/ibsim for the simulator, pkg/mad/madtest for tests. Programs
// get one ready with the tools' defaults from endport.Open. Errors are
// typed: *TimeoutError (which request, to where, after how many tries),
// *StatusError, *ReplyError, *RMPPError, *NoRecordError.
//
// The wire formats (headers, attributes, SA records) are pkg/mad's; this
// package neither formats text nor imports any that does.
package madrpc
