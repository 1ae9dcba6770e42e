package ibdiagconf_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ibtool/ibtool/pkg/ibdiagconf"
)

// ExampleSettings_Parse reads an ibdiag.conf and asks which keys it set.
// A program reads the default file with Load(ibdiagconf.DefaultPath).
func ExampleSettings_Parse() {
	conf := "# site defaults\nCA=mlx5_0\nPort=1\ntimeout=500\nm_key=0x1234\n"
	var s ibdiagconf.Settings
	if err := s.Parse(strings.NewReader(conf), "ibdiag.conf"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("CA %s port %d, timeout %d ms, M_Key %#x\n", s.CA, s.Port, s.TimeoutMS, s.MKey)
	fmt.Println("sa_key set:", s.Has(ibdiagconf.KeySAKey), "- m_key set at", s.Where(ibdiagconf.KeyMKey))

	err := s.Parse(strings.NewReader("Port=300\n"), "bad.conf")
	var le *ibdiagconf.LineError
	if errors.As(err, &le) {
		fmt.Printf("%s line %d: %v\n", le.Path, le.Line, le.Err)
	}
	// Output:
	// CA mlx5_0 port 1, timeout 500 ms, M_Key 0x1234
	// sa_key set: false - m_key set at ibdiag.conf:5
	// bad.conf line 1: Port=300: out of range 0 to 255
}
