package fabric

// python-rdma's ibtracert discovers the subnet's switches first and then
// walks the route, reading each switch's LFT by directed route, or by LID
// once the switch's LID is known when the discovery was LID routed; with
// --cache the discovery comes from the cache file. ibtracert keeps
// infiniband-diags' walk (pkg/route.Tracer) and takes from those options
// what changes it: --discovery lid reads a switch's SwitchInfo and LFT by
// its LID (Tracer.LIDRouted), --discovery sa (--sa) asks the SA for the
// records, and --cache answers NodeInfo, NodeDescription, PortInfo and
// SwitchInfo from the cached (or freshly discovered and saved) fabric
// (Tracer.Fabric), so that only the LFT blocks go out.
