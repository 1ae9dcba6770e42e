package exporter

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// view is a topology's devices for one choice of collectors, with their
// label values, built once per topology and choice: a scrape formats no
// label of its own.
type view struct {
	// devices are the devices swept, the topology's slice (sweeps of the
	// same slice are shared); results come in its order.
	devices []*Device
	// labels are devices[i]'s label values.
	labels []deviceLabels
	// byGUID are devices' indexes by their guid label.
	byGUID []int32
	// rows are every device's ports in (guid, port) label order.
	rows []row
}

// deviceLabels are a device's label values; name and desc (its name in
// the node name map and its NodeDescription) made valid (labelValue).
type deviceLabels struct {
	guid, lid, nodeGUID string
	name, desc          string
}

// row is one port of a device, and the label values of its link.
type row struct {
	dev int32 // index in view.devices
	idx int32 // index in the device's Ports
	// port is the port number's label.
	port string
	// uplink labels, empty without a remote port; uplink made valid
	// (labelValue).
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
		v.labels[i] = deviceLabels{guid: d.GUID.String(), lid: strconv.Itoa(int(d.LID)), nodeGUID: d.Node.GUID.String(),
			name: labelValue(d.Name), desc: labelValue(d.Node.Desc)}
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
				r.uplink = labelValue(t.names.Name(uint64(rn.GUID), rn.Desc))
				r.uplinkGUID = rp.GUID.String()
				r.uplinkPort = portLabel(rp.Num)
				r.uplinkLID = strconv.Itoa(int(rp.LID()))
			}
			v.rows = append(v.rows, r)
		}
		ports := v.rows[first:]
		slices.SortStableFunc(ports, func(a, b row) int { return strings.Compare(a.port, b.port) })
	}
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
