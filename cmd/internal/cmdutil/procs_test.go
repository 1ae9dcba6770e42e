package cmdutil

import (
	"runtime"
	"testing"
)

// TestSetProcs: a light tool keeps the one processor ibtool starts with,
// any other gets the runtime's default, and GOMAXPROCS in the environment
// wins for both when it is a positive number.
func TestSetProcs(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	tests := []struct {
		name  string
		light bool
		env   string
		want  int
	}{
		{"light", true, "", 1},
		{"not light", false, "", def},
		{"light, GOMAXPROCS=3", true, "3", 3},
		{"not light, GOMAXPROCS=3", false, "3", 3},
		{"light, GOMAXPROCS=0 (the runtime ignores it too)", true, "0", 1},
		{"not light, GOMAXPROCS=junk", false, "junk", def},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GOMAXPROCS(1) // as internal/oneproc leaves it
			env := map[string]string{}
			if tt.env != "" {
				env["GOMAXPROCS"] = tt.env
			}
			f, _, _ := NewTestFactory(env)
			f.SetProcs(Tool{Name: "t", Light: tt.light})
			if got := runtime.GOMAXPROCS(0); got != tt.want {
				t.Errorf("GOMAXPROCS = %d, want %d", got, tt.want)
			}
		})
	}
}
