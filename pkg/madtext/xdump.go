package madtext

// AppendXdump appends data as libibmad's xdump prints it: in hex, two
// bytes a group, eight groups a line.
func AppendXdump(b, data []byte) []byte {
	const hexd = "0123456789abcdef"
	for i, c := range data {
		b = append(b, hexd[c>>4], hexd[c&0xf])
		switch {
		case i == len(data)-1:
			b = append(b, '\n')
		case i%16 == 15:
			b = append(b, '\n')
		case i%2 == 1:
			b = append(b, ' ')
		}
	}
	return b
}
