package exporter

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// view is a topology's devices for one choice of collectors, with the
// label values and the orders the exposition writes them in, built once
// per topology and choice: a scrape then writes its samples in order,
// with no sort and no label formatting of its own.
type view struct {
	// devices are the devices swept, the topology's slice (sweeps of the
	// same slice are shared); results come in its order.
	devices []*Device
	// labels are devices[i]'s label values.
	labels []deviceLabels
	// byGUID are devices' indexes by their guid label.
	byGUID []int32
	// rows are every device's ports in (guid, port) label order;
	// infoRows are rows' indexes in infiniband_port_info's label order
	// (description first).
	rows     []row
	infoRows []int32
}

// deviceLabels are a device's label values.
type deviceLabels struct {
	guid, lid, nodeGUID string
}

// row is one port of a device, and the label values of its link.
type row struct {
	dev int32 // index in view.devices
	idx int32 // index in the device's Ports
	// port is the port number's label.
	port string
	// uplink labels, empty without a remote port.
	uplink, uplinkGUID, uplinkPort, uplinkLID string
}

// selection names a choice of collectors: bit 0 the switches, bit 1 the
// CAs.
type selection int

const (
	selSwitch selection = 1 << iota
	selHCA
)

// views hold a topology's views by selection, each built on first use.
type views struct {
	once [4]sync.Once
	v    [4]*view
}

// view returns the topology's view for sel.
func (t *Topology) view(sel selection) *view {
	t.views.once[sel].Do(func() { t.views.v[sel] = newView(t, sel) })
	return t.views.v[sel]
}

func newView(t *Topology, sel selection) *view {
	v := &view{}
	switch sel {
	case selSwitch | selHCA:
		v.devices = t.all
	case selSwitch:
		v.devices = t.Switches
	case selHCA:
		v.devices = t.CAs
	}
	v.labels = make([]deviceLabels, len(v.devices))
	v.byGUID = make([]int32, len(v.devices))
	nrows := 0
	for i, d := range v.devices {
		v.labels[i] = deviceLabels{guid: d.GUID.String(), lid: strconv.Itoa(int(d.LID)), nodeGUID: d.Node.GUID.String()}
		v.byGUID[i] = int32(i)
		nrows += len(d.Ports)
	}
	slices.SortStableFunc(v.byGUID, func(a, b int32) int { return strings.Compare(v.labels[a].guid, v.labels[b].guid) })
	v.rows = make([]row, 0, nrows)
	for _, i := range v.byGUID {
		d := v.devices[i]
		first := len(v.rows)
		for j, p := range d.Ports {
			r := row{dev: i, idx: int32(j), port: portLabel(p.Num)}
			if rp := p.Remote; rp != nil {
				rn := rp.Node
				r.uplink = t.names.Name(uint64(rn.GUID), rn.Desc)
				r.uplinkGUID = rp.GUID.String()
				r.uplinkPort = portLabel(rp.Num)
				r.uplinkLID = strconv.Itoa(int(rp.LID()))
			}
			v.rows = append(v.rows, r)
		}
		ports := v.rows[first:]
		slices.SortStableFunc(ports, func(a, b row) int { return strings.Compare(a.port, b.port) })
	}
	v.infoRows = make([]int32, len(v.rows))
	for i := range v.infoRows {
		v.infoRows[i] = int32(i)
	}
	// infiniband_port_info's labels by name: description, guid, lid,
	// name, node_guid, port, type; rows are already in (guid, port)
	// order, so a stable sort by the description keeps it after.
	slices.SortStableFunc(v.infoRows, func(a, b int32) int {
		return cmp.Compare(v.devices[v.rows[a].dev].Node.Desc, v.devices[v.rows[b].dev].Node.Desc)
	})
	return v
}

// port returns a row's port.
func (v *view) port(r *row) *subnet.Port { return v.devices[r.dev].Ports[r.idx] }

// selectionOf is the selection of a collector's switches and CAs.
func selectionOf(switches, cas bool) selection {
	var s selection
	if switches {
		s |= selSwitch
	}
	if cas {
		s |= selHCA
	}
	return s
}

// portLabels are the port numbers' labels, made once.
var portLabels = sync.OnceValue(func() []string {
	l := make([]string, 256)
	for i := range l {
		l[i] = strconv.Itoa(i)
	}
	return l
})

func portLabel(num int) string {
	if num >= 0 && num < 256 {
		return portLabels()[num]
	}
	return strconv.Itoa(num)
}

// typeOf is the device type a family's rows are of: the switches', or
// the CAs'.
func typeOf(switches bool) mad.NodeType {
	if switches {
		return mad.NodeTypeSwitch
	}
	return mad.NodeTypeCA
}
