package cmd

import (
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

type chassisList = []struct{}

func groupChassis(f *subnet.Fabric) chassisList { return nil }
func chassisType(n *subnet.Node) string         { return "" }
func chassisSlot(n *subnet.Node) string         { return "" }
func isXsigoTCA(g rdma.GUID) bool               { return false }
func isXsigoHCA(g rdma.GUID) bool               { return false }
func (t *topology) chassisNodes()               {}
