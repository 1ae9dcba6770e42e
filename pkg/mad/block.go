package mad

// Block places the elements of a block attribute, generated from
// attributes.tbl's "block" field: the attribute's own fields come first
// (Layout.Fields), then Count elements of Element's layout, Stride bytes
// apart from Offset on.
type Block struct {
	// Field is the Go name of the attribute's array of elements.
	Field string
	// Element is the elements' layout.
	Element *Layout
	// Offset is where the first element starts in the attribute's
	// encoding; Stride how far apart they are; both in bytes.
	Offset, Stride int
	// Count is how many elements the attribute holds.
	Count int
}

// ElementData returns element i's bytes of data, the attribute's encoding,
// or nil where i is out of range or data ends before the element.
func (b *Block) ElementData(data []byte, i int) []byte {
	start := b.Offset + i*b.Stride
	if i < 0 || i >= b.Count || start+b.Stride > len(data) {
		return nil
	}
	return data[start : start+b.Stride]
}
