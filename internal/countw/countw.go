// Package countw counts the bytes written through a writer, for
// io.WriterTo implementations that stream through layers that do not
// report their length.
package countw

import "io"

// Writer passes writes on to W and counts the bytes it passed in N.
type Writer struct {
	W io.Writer
	N int64
}

func (c *Writer) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
