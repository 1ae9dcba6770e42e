package madtext

import "github.com/ibtool/ibtool/pkg/mad"

// LinkWidthCompat names a LinkWidthActive value the short way
// ibnetdiscover's topology (dump_linkwidth_compat) and opensm's subnet
// dump write it: "1x", "2x", "4x", "8x", "12x", and "??" for any other.
func LinkWidthCompat(w mad.LinkWidth) string {
	switch w {
	case mad.LinkWidth1X:
		return "1x"
	case mad.LinkWidth2X:
		return "2x"
	case mad.LinkWidth4X:
		return "4x"
	case mad.LinkWidth8X:
		return "8x"
	case mad.LinkWidth12X:
		return "12x"
	}
	return "??"
}
