package rdmacm

// Migrate moves the ID to channel to (rdma_migrate_id): its events,
// those the kernel holds and those this package fetched and has not yet
// handed out, and those of its multicast groups, come through to from
// now on. Nobody may be waiting for the ID's events on its old channel.
func (id *ID) Migrate(to *EventChannel) error {
	from := id.ch
	if to == from {
		return nil
	}
	in := make([]byte, migrateIDSize)
	le.PutUint32(in[8:], id.handle)
	le.PutUint32(in[12:], uint32(from.k.file()))
	out := make([]byte, migrateIDResp)
	// The command goes to the channel the ID moves to, naming the one it
	// leaves.
	from.mu.Lock()
	closed := id.closed || from.closed
	from.mu.Unlock()
	to.mu.Lock()
	closed = closed || to.closed
	to.mu.Unlock()
	if closed {
		return &Error{Op: "migrate", Addr: id.addr.Remote, Err: ErrClosed}
	}
	if err := to.k.command(cmdMigrateID, in, 0, out); err != nil {
		return &Error{Op: "migrate", Addr: id.addr.Remote, Err: err}
	}
	from.mu.Lock()
	delete(from.ids, id.handle)
	var moved []*Event
	kept := from.backlog[:0]
	for _, ev := range from.backlog {
		if ev.ID == id {
			moved = append(moved, ev)
		} else {
			kept = append(kept, ev)
		}
	}
	from.backlog = kept
	mcs := map[uint64]*Multicast{}
	for uid, mc := range from.mcs {
		if mc.id == id {
			mcs[uid] = mc
			delete(from.mcs, uid)
		}
	}
	from.mu.Unlock()
	to.mu.Lock()
	to.ids[id.handle] = id
	to.backlog = append(to.backlog, moved...)
	for uid, mc := range mcs {
		to.mcs[uid] = mc
	}
	to.wake()
	id.ch = to
	to.mu.Unlock()
	return nil
}
