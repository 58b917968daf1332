package forwarded

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// FuzzParsePrefixes: ParsePrefixes never panics, every prefix it returns
// is valid and masked, a bare address becomes the host prefix of its
// unmapped form, and the formatted list parses back to the same prefixes.
// Seeds: the lists the package tests use, plus mapped, zoned and
// whitespace-heavy forms.
func FuzzParsePrefixes(f *testing.F) {
	for _, s := range []string{
		"10.0.0.0/8, 127.0.0.1", "10.0.0.0/8,127.0.0.1,::1", "192.0.2.1", "",
		"10.0.0.0/33", "example.com", "1.2.3",
		"::ffff:10.0.0.1", "::ffff:10.0.0.0/104", "10.1.2.3/8", "fe80::1%eth0", " 2001:db8::/32 ,, ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		got, err := ParsePrefixes(list)
		if err != nil {
			return
		}
		items := strings.Split(list, ",")
		var formatted []string
		for _, p := range got {
			if !p.IsValid() || p != p.Masked() || p.Addr().Zone() != "" {
				t.Fatalf("ParsePrefixes(%q) returned %v", list, p)
			}
			formatted = append(formatted, p.String())
		}
		nonEmpty := slices.DeleteFunc(slices.Clone(items), func(s string) bool { return strings.TrimSpace(s) == "" })
		if len(nonEmpty) != len(got) {
			t.Fatalf("%d prefixes from %d non-empty items", len(got), len(nonEmpty))
		}
		for i, item := range nonEmpty {
			if a, err := netip.ParseAddr(strings.TrimSpace(item)); err == nil {
				if a = a.Unmap().WithZone(""); !got[i].IsSingleIP() || got[i].Addr() != a {
					t.Fatalf("address %q became %v", item, got[i])
				}
			}
		}
		back, err := ParsePrefixes(strings.Join(formatted, ","))
		if err != nil || !slices.Equal(back, got) {
			t.Fatalf("%q → %v does not parse back: %v %v", list, got, back, err)
		}
	})
}

func FuzzClientAddr(f *testing.F) {
	f.Add("127.0.0.1:1", "198.51.100.1, 203.0.113.7, 10.1.2.3")
	f.Add("[::1]:2", "2001:db8::1,,")
	trusted, _ := ParsePrefixes("10.0.0.0/8,127.0.0.1,::1")
	f.Fuzz(func(t *testing.T, remote, xff string) {
		got, ok := ClientAddr(trusted, remote, []string{xff})
		if ok && isTrusted(trusted, got) {
			t.Fatalf("returned a trusted proxy %v as the client", got)
		}
	})
}
