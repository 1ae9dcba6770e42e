package cmdutil

import "testing"

func TestFindOperation(t *testing.T) {
	type op struct{ name, alias string }
	ops := []op{{"NodeInfo", "NI"}, {"PortInfo", "PI"}}
	names := func(o *op) (string, string) { return o.name, o.alias }
	for _, tt := range []struct {
		in, want string
	}{{"NodeInfo", "NodeInfo"}, {"ni", "NodeInfo"}, {"PORTINFO", "PortInfo"}, {"pi", "PortInfo"}} {
		got, err := FindOperation(ops, tt.in, names)
		if err != nil || got.name != tt.want {
			t.Errorf("FindOperation(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	_, err := FindOperation(ops, "SwitchInfo", names)
	if err == nil || err.Error() != "operation 'SwitchInfo' not supported" || ExitCode(err) != ExitUsage {
		t.Errorf("unknown operation: %v (exit %d), want the usage error infiniband-diags gives", err, ExitCode(err))
	}
}
