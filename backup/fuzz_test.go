package backup

import (
	"bytes"
	"testing"
)

func FuzzRead(f *testing.F) {
	b := sample(f)
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte("{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		Read(bytes.NewReader(data), func(string, any) error { return nil })
	})
}
