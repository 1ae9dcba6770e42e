package exporter

import "sync"

// The metric families: infiniband_exporter's, then ibtool's own.

const namespace = "infiniband"

// deviceDescs are one collector's (switch or HCA) families.
type deviceDescs struct {
	counters                    [numCounters]*Desc
	duration, error, timeout    *Desc
	rate, rawRate, uplink, info *Desc
}

// newDeviceDescs builds the families of the switch collector (subsystem
// "switch", title "switch") or the HCA collector ("hca", "HCA"), named,
// typed and labelled as infiniband_exporter's.
func newDeviceDescs(subsystem, title string) *deviceDescs {
	p := namespace + "_" + subsystem + "_"
	d := &deviceDescs{
		duration: NewDesc(p+"collect_duration_seconds", "Duration of collection", Gauge, "guid", "collector"),
		error:    NewDesc(p+"collect_error", "Indicates if collect error", Gauge, "guid", "collector"),
		timeout:  NewDesc(p+"collect_timeout", "Indicates if collect timeout", Gauge, "guid", "collector"),
		uplink: NewDesc(p+"uplink_info", "Infiniband "+title+" uplink information", Gauge,
			"guid", "port", subsystem, "uplink", "uplink_guid", "uplink_type", "uplink_port", "uplink_lid"),
		info: NewDesc(p+"info", "Infiniband "+title+" information", Gauge, "guid", subsystem, "lid"),
	}
	for i, c := range counters {
		d.counters[i] = NewDesc(p+c.metric, "Infiniband "+title+" port "+c.field, Counter, "guid", "port")
	}
	if subsystem == "switch" {
		d.rate = NewDesc(p+"port_rate_bytes_per_second", "Infiniband switch port rate", Gauge, "guid", "port")
		d.rawRate = NewDesc(p+"port_raw_rate_bytes_per_second", "Infiniband switch port raw rate", Gauge, "guid", "port")
	} else {
		d.rate = NewDesc(p+"rate_bytes_per_second", "Infiniband HCA rate", Gauge, "guid")
		d.rawRate = NewDesc(p+"raw_rate_bytes_per_second", "Infiniband HCA raw rate", Gauge, "guid")
	}
	return d
}

// descSet holds every metric's Desc, built on first use rather than at
// init: the package is linked into every tool's start.
type descSet struct {
	switchDescs     *deviceDescs
	hcaDescs        *deviceDescs
	collectDuration *Desc
	collectErrors   *Desc
	collectTimeouts *Desc
	lastExecution   *Desc
	portInfo        *Desc
	linkState       *Desc
	physState       *Desc
	widthActive     *Desc
	widthEnabled    *Desc
	speedActive     *Desc
	speedEnabled    *Desc
	saturated       *Desc
}

// descs returns the metrics' Descs.
var descs = sync.OnceValue(func() *descSet {
	return &descSet{
		switchDescs: newDeviceDescs("switch", "switch"),
		hcaDescs:    newDeviceDescs("hca", "HCA"),

		collectDuration: NewDesc(namespace+"_exporter_collector_duration_seconds", "Collector time duration.", Gauge, "collector"),
		collectErrors:   NewDesc(namespace+"_exporter_collect_errors", "Number of errors that occurred during collection", Gauge, "collector"),
		collectTimeouts: NewDesc(namespace+"_exporter_collect_timeouts", "Number of timeouts that occurred during collection", Gauge, "collector"),
		lastExecution:   NewDesc(namespace+"_exporter_last_execution", "Last execution time of exporter", Gauge, "collector"),

		portInfo: NewDesc(namespace+"_port_info", "Infiniband port information: the node's type, GUID, LID, name (node name map) and NodeDescription", Gauge,
			"guid", "port", "type", "node_guid", "lid", "name", "description"),
		linkState: NewDesc(namespace+"_port_link_state",
			"Infiniband port logical link state (PortInfo LinkState: 1 Down, 2 Init, 3 Armed, 4 Active)", Gauge, "guid", "port"),
		physState: NewDesc(namespace+"_port_physical_state",
			"Infiniband port physical link state (PortInfo PhysLinkState: 1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest)", Gauge, "guid", "port"),
		widthActive: NewDesc(namespace+"_port_link_width_active_lanes", "Infiniband port active link width, in lanes", Gauge, "guid", "port"),
		widthEnabled: NewDesc(namespace+"_port_link_width_enabled_lanes",
			"Infiniband port widest link width both ends of the link enable and support, in lanes", Gauge, "guid", "port"),
		speedActive: NewDesc(namespace+"_port_link_speed_active_bytes_per_second",
			"Infiniband port active link speed: signaling rate of one lane, in bytes per second (bits / 8)", Gauge, "guid", "port"),
		speedEnabled: NewDesc(namespace+"_port_link_speed_enabled_bytes_per_second",
			"Infiniband port fastest link speed both ends of the link enable and support: signaling rate of one lane, in bytes per second (bits / 8)", Gauge, "guid", "port"),
		saturated: NewDesc(namespace+"_port_counter_saturated",
			"Infiniband port counter read from a field narrower than 64 bits that stands at its largest value: the PMA stopped counting (present only when so)", Gauge,
			"guid", "port", "counter"),
	}
})
