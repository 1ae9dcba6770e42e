package exporter

import (
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"

	"github.com/prometheus/client_golang/prometheus"
)

// The metric families: infiniband_exporter's, then ibtool's own.

const namespace = "infiniband"

// deviceDescs are one collector's (switch or HCA) families.
type deviceDescs struct {
	counters                    [numCounters]*desc
	rcvErr                      [len(rcvErrCounters)]*desc
	duration, error, timeout    *desc
	rate, rawRate, uplink, info *desc
}

// newDeviceDescs builds the families of the switch collector (subsystem
// "switch", title "switch") or the HCA collector ("hca", "HCA"), named,
// typed and labelled as infiniband_exporter's.
func newDeviceDescs(subsystem, title string) *deviceDescs {
	p := namespace + "_" + subsystem + "_"
	d := &deviceDescs{
		duration: newDesc(p+"collect_duration_seconds", "Duration of collection", prometheus.GaugeValue, "guid", "collector"),
		error:    newDesc(p+"collect_error", "Indicates if collect error", prometheus.GaugeValue, "guid", "collector"),
		timeout:  newDesc(p+"collect_timeout", "Indicates if collect timeout", prometheus.GaugeValue, "guid", "collector"),
		uplink: newDesc(p+"uplink_info", "Infiniband "+title+" uplink information", prometheus.GaugeValue,
			"guid", "port", subsystem, "uplink", "uplink_guid", "uplink_type", "uplink_port", "uplink_lid"),
		info: newDesc(p+"info", "Infiniband "+title+" information", prometheus.GaugeValue, "guid", subsystem, "lid"),
	}
	for i, c := range counters {
		d.counters[i] = newDesc(p+c.metric, "Infiniband "+title+" port "+c.field, prometheus.CounterValue, "guid", "port")
	}
	for i, c := range rcvErrCounters {
		d.rcvErr[i] = newDesc(p+c.metric, "Infiniband "+title+" port "+c.field, prometheus.CounterValue, "guid", "port")
	}
	if subsystem == "switch" {
		d.rate = newDesc(p+"port_rate_bytes_per_second", "Infiniband switch port rate", prometheus.GaugeValue, "guid", "port")
		d.rawRate = newDesc(p+"port_raw_rate_bytes_per_second", "Infiniband switch port raw rate", prometheus.GaugeValue, "guid", "port")
	} else {
		d.rate = newDesc(p+"rate_bytes_per_second", "Infiniband HCA rate", prometheus.GaugeValue, "guid")
		d.rawRate = newDesc(p+"raw_rate_bytes_per_second", "Infiniband HCA raw rate", prometheus.GaugeValue, "guid")
	}
	return d
}

// rcvErrCounters are PortRcvErrorDetails' counters and
// infiniband_exporter's metric names for them (its "dli", sic).
var rcvErrCounters = [...]struct {
	field, metric string
	value         func(*mad.PortRcvErrorDetails) uint16
}{
	{"PortLocalPhysicalErrors", "port_local_physical_errors_total", func(d *mad.PortRcvErrorDetails) uint16 { return d.PortLocalPhysicalErrors }},
	{"PortMalformedPktErrors", "port_malformed_packet_errors_total", func(d *mad.PortRcvErrorDetails) uint16 { return d.PortMalformedPktErrors }},
	{"PortBufferOverrunErrors", "port_buffer_overrun_errors_total", func(d *mad.PortRcvErrorDetails) uint16 { return d.PortBufferOverrunErrors }},
	{"PortDLIDMappingErrors", "port_dli_mapping_errors_total", func(d *mad.PortRcvErrorDetails) uint16 { return d.PortDLIDMappingErrors }},
	{"PortVLMappingErrors", "port_vl_mapping_errors_total", func(d *mad.PortRcvErrorDetails) uint16 { return d.PortVLMappingErrors }},
	{"PortLoopingErrors", "port_looping_errors_total", func(d *mad.PortRcvErrorDetails) uint16 { return d.PortLoopingErrors }},
}

// descSet holds every metric's Desc, built on first use rather than at
// init: a program that links the package and does not serve pays nothing.
type descSet struct {
	switchDescs     *deviceDescs
	hcaDescs        *deviceDescs
	collectDuration *desc
	collectErrors   *desc
	collectTimeouts *desc
	lastExecution   *desc
	portInfo        *desc
	linkState       *desc
	physState       *desc
	widthActive     *desc
	widthEnabled    *desc
	speedActive     *desc
	speedEnabled    *desc
	saturated       *desc
}

// descs returns the metrics' Descs.
var descs = sync.OnceValue(func() *descSet {
	return &descSet{
		switchDescs: newDeviceDescs("switch", "switch"),
		hcaDescs:    newDeviceDescs("hca", "HCA"),

		collectDuration: newDesc(namespace+"_exporter_collector_duration_seconds", "Collector time duration.", prometheus.GaugeValue, "collector"),
		collectErrors:   newDesc(namespace+"_exporter_collect_errors", "Number of errors that occurred during collection", prometheus.GaugeValue, "collector"),
		collectTimeouts: newDesc(namespace+"_exporter_collect_timeouts", "Number of timeouts that occurred during collection", prometheus.GaugeValue, "collector"),
		lastExecution:   newDesc(namespace+"_exporter_last_execution", "Last execution time of exporter", prometheus.GaugeValue, "collector"),

		portInfo: newDesc(namespace+"_port_info", "Infiniband port information: the node's type, GUID, LID, name (node name map) and NodeDescription", prometheus.GaugeValue,
			"guid", "port", "type", "node_guid", "lid", "name", "description"),
		linkState: newDesc(namespace+"_port_link_state",
			"Infiniband port logical link state (PortInfo LinkState: 1 Down, 2 Init, 3 Armed, 4 Active)", prometheus.GaugeValue, "guid", "port"),
		physState: newDesc(namespace+"_port_physical_state",
			"Infiniband port physical link state (PortInfo PhysLinkState: 1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest)", prometheus.GaugeValue, "guid", "port"),
		widthActive: newDesc(namespace+"_port_link_width_active_lanes", "Infiniband port active link width, in lanes", prometheus.GaugeValue, "guid", "port"),
		widthEnabled: newDesc(namespace+"_port_link_width_enabled_lanes",
			"Infiniband port widest link width both ends of the link enable and support, in lanes", prometheus.GaugeValue, "guid", "port"),
		speedActive: newDesc(namespace+"_port_link_speed_active_bytes_per_second",
			"Infiniband port active link speed: signaling rate of one lane, in bytes per second (bits / 8)", prometheus.GaugeValue, "guid", "port"),
		speedEnabled: newDesc(namespace+"_port_link_speed_enabled_bytes_per_second",
			"Infiniband port fastest link speed both ends of the link enable and support: signaling rate of one lane, in bytes per second (bits / 8)", prometheus.GaugeValue, "guid", "port"),
		saturated: newDesc(namespace+"_port_counter_saturated",
			"Infiniband port counter read from a field narrower than 64 bits that stands at its largest value: the PMA stopped counting (present only when so)", prometheus.GaugeValue,
			"guid", "port", "counter"),
	}
})
