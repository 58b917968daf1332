package credential

import (
	"bytes"
	"testing"
)

// FuzzParse: Parse never panics, and whatever it accepts re-serializes to
// a canonical form that parses to the same credential and is a fixed point.
func FuzzParse(f *testing.F) {
	file := loadCredentialFile(f)
	for _, v := range file.Vectors {
		for _, s := range []*string{v.JSONV030, v.JSONV030Unsigned, v.JSONHead} {
			if s != nil {
				f.Add([]byte(*s))
			}
		}
	}
	for _, v := range file.VerifyOnly {
		f.Add([]byte(v.JSONV030))
	}
	for _, v := range file.Negative {
		f.Add([]byte(v.JSONV030))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		canon, err := c.MarshalJSON()
		if err != nil {
			t.Fatalf("accepted credential does not marshal: %v", err)
		}
		back, err := Parse(canon)
		if err != nil {
			t.Fatalf("canonical form does not parse: %v", err)
		}
		if !equal(back, c) {
			t.Fatal("canonical form parses to another credential")
		}
		again, _ := back.MarshalJSON()
		if !bytes.Equal(again, canon) {
			t.Fatal("MarshalJSON is not a fixed point")
		}
		c.Verify(c.Issuer)
	})
}
