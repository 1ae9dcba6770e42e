package madtext

import (
	"strings"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
)

// fieldNamesMap is built on first use, under a sync.Once: a package-level
// sync.OnceValue allocates its closures in the package's init.
var (
	fieldNamesOnce sync.Once
	fieldNamesMap  map[string]string
)

// fieldNames maps each libibmad label of the attribute table to its
// field's name (the last part of the Go name: "LocalPortNum" for
// "LocalPort"); no label stands for two names (TestFieldName).
func fieldNames() map[string]string {
	fieldNamesOnce.Do(func() { fieldNamesMap = buildFieldNames() })
	return fieldNamesMap
}

func buildFieldNames() map[string]string {
	m := make(map[string]string)
	for _, l := range mad.Layouts {
		for _, f := range l.Fields {
			if f.Label == "" {
				continue
			}
			name := f.Name
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				name = name[i+1:]
			}
			m[f.Label] = name
		}
	}
	return m
}

// FieldName returns the IBA name of the field libibmad labels label
// ("BaseVersion" for "BaseVers"): the names python-rdma prints with
// --int-names.
func FieldName(label string) (string, bool) {
	n, ok := fieldNames()[label]
	return n, ok
}
