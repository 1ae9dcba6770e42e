package cmdutil

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/ibtool/ibtool/pkg/madrpc"
)

// --dry-run: the tools that change fabric state make all their reads as
// usual, but every MAD whose method changes state (a Set, a Trap) goes to
// the run's dryRunLog instead of the fabric (mad.TransactorOptions.DryRun).
// Each becomes one line on stdout, where the tool's output goes, in the
// order the tool would have sent them:
//
//	dry-run: SubnSet(PortInfo) from=mlx5_0/1 dr=0,1,3 attrmod=0x5 LinkState=Down
//
// that is the request (as one word), the local port it would leave from
// (from=), its route (lid=, dr=, or both for a combined route; gid= for a
// global one), the attribute modifier, and the attribute fields it would
// write (mad.PlannedFields), a value quoted as Go quotes strings when it
// holds a space. With --json the plans go into the tool's document under
// "dryRun" instead. A run that made its plan exits 0.

// dryRunLog is what a --dry-run run did not send.
type dryRunLog struct {
	mu sync.Mutex
	// out takes each plan's line as it is made; nil with --json.
	out   io.Writer
	plans []*madrpc.Plan
}

// planScopeKey keys a context's planScope.
type planScopeKey struct{}

// PlanScope keeps the plans made under a context, so a tool that sends
// from several goroutines at once can write them in its own order.
type PlanScope struct {
	mu    sync.Mutex
	plans []*madrpc.Plan
}

// WithPlanScope returns a context whose plans s keeps until the log takes
// them (dryRunLog.take).
func WithPlanScope(ctx context.Context) (context.Context, *PlanScope) {
	s := &PlanScope{}
	return context.WithValue(ctx, planScopeKey{}, s), s
}

// plan is the transactor's DryRun hook.
func (l *dryRunLog) plan(ctx context.Context, p *madrpc.Plan) error {
	if s, ok := ctx.Value(planScopeKey{}).(*PlanScope); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.plans = append(s.plans, p)
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.plans = append(l.plans, p)
	if l.out == nil {
		return nil
	}
	_, err := l.out.Write(appendPlanLine(nil, p))
	return err
}

// Take adds the plans s kept to the log and returns their lines, for the
// caller to write where they belong (none with --json). A nil log or
// scope takes nothing.
func (l *dryRunLog) Take(s *PlanScope) []byte {
	if l == nil || s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	var b []byte
	for _, p := range s.plans {
		l.plans = append(l.plans, p)
		if l.out != nil {
			b = appendPlanLine(b, p)
		}
	}
	s.plans = nil
	return b
}

// SetDryRun, under --dry-run, makes opts plan instead of sending the
// MADs that change state, each plan's line written to out (kept for the
// JSON document with --json).
func (o *CommonOptions) SetDryRun(out io.Writer, opts *madrpc.TransactorOptions) {
	if !o.DryRun {
		return
	}
	if o.PlanLog == nil {
		o.PlanLog = &dryRunLog{}
		if !o.JSON {
			o.PlanLog.out = out
		}
	}
	opts.DryRun = o.PlanLog.plan
}

// DryRunPlans returns the plans of the run, for a JSON document: nil
// without --dry-run, a list (maybe empty) with it.
func (o *CommonOptions) DryRunPlans() []*madrpc.Plan {
	if !o.DryRun {
		return nil
	}
	if o.PlanLog == nil {
		return []*madrpc.Plan{}
	}
	o.PlanLog.mu.Lock()
	defer o.PlanLog.mu.Unlock()
	return append([]*madrpc.Plan{}, o.PlanLog.plans...)
}

// addDryRun adds the run's plans to a JSON document under "dryRun", under
// --dry-run.
func (o *CommonOptions) addDryRun(doc map[string]any) {
	if plans := o.DryRunPlans(); plans != nil {
		doc["dryRun"] = plans
	}
}

// appendPlanLine appends a plan's line (see above).
func appendPlanLine(b []byte, p *madrpc.Plan) []byte {
	b = append(b, "dry-run: "...)
	// One word, as a script splitting at spaces takes it: a vendor
	// class's request is named "Vendor1(0x0a) Set(...)".
	b = append(b, strings.ReplaceAll(p.Request, " ", "")...)
	b = fmt.Appendf(b, " from=%s/%d", p.Device, p.Port)
	if p.LID != 0 {
		b = fmt.Appendf(b, " lid=%d", p.LID)
	}
	if p.DR != nil {
		b = append(b, " dr="...)
		for i, port := range p.DR {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(port), 10)
		}
	}
	if p.GID != nil {
		b = append(b, " gid="...)
		b = append(b, p.GID.String()...)
	}
	b = fmt.Appendf(b, " attrmod=%#x", p.AttrMod)
	for _, f := range p.Fields {
		b = AppendPlanValue(append(append(b, ' '), f.Name...), f.Text)
	}
	return append(b, '\n')
}

// AppendPlanValue appends "=value", the value quoted when a script
// splitting the line at spaces would cut it.
func AppendPlanValue(b []byte, v string) []byte {
	b = append(b, '=')
	if v == "" || strings.ContainsAny(v, " \t\"'=\\") || strconv.Quote(v) != `"`+v+`"` {
		return strconv.AppendQuote(b, v)
	}
	return append(b, v...)
}
