package cmdutil

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// finishSAPath parses --sa-path, python-rdma's path to the SA: a LID, a
// port GUID or GID, or an IBPath(...) spec (its SL kept). Like
// python-rdma's _set_sa_path it implies --sa. A directed route is refused:
// SA queries are GMPs, LID routed.
func (o *CommonOptions) finishSAPath() error {
	if o.SAPathArg == "" {
		return nil
	}
	t, err := endport.ParseTarget(o.SAPathArg, endport.Any)
	if err != nil {
		return UsageErrorf("--sa-path: %v", err)
	}
	p, err := t.Path()
	if err != nil {
		return UsageErrorf("--sa-path: %v", err)
	}
	if p.IsDR() {
		return UsageErrorf("--sa-path %q is a directed route: SA queries are LID routed; give a LID, port GUID, GID or IBPath(...)", o.SAPathArg)
	}
	o.saPath = &p
	o.ViaSA = true
	return nil
}

// useSAPath points the transactor's SA address at --sa-path, a port GUID
// or GID first resolved through the local port's SM (python-rdma's
// resolve_path of the SA path).
func (o *CommonOptions) useSAPath(x *madrpc.Transactor, sa *madrpc.SAAddress) error {
	if o.saPath == nil {
		return nil
	}
	if sa == nil {
		return fmt.Errorf("--sa-path %s: no local port to send from", o.SAPathArg)
	}
	p, err := x.Resolve(o.Context(), *o.saPath)
	if err != nil {
		return fmt.Errorf("--sa-path %s: %w", o.SAPathArg, err)
	}
	sa.SMLID, sa.SL = p.LID, p.SL
	return nil
}
