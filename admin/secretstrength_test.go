package admin

import (
	"strings"
	"testing"
)

// TestWeakSecret: random secrets in the formats a portal or a generator
// produces pass; chosen ones are refused, each by the check that names it.
func TestWeakSecret(t *testing.T) {
	for _, s := range []string{
		"sk_" + "3f9a0c5e7b21d84f6a0e9c3b5d71f2a8c4e60b19d3f7a5c2e8b04d6f1a9c3e57", // portal form
		"9f86d081884c7d659a2feaa0c55ad015",                                         // 32 hex: 128 bits
		"Zx8qL2vN7rT4bW9kP3mY6c",                                                   // 22 letters and digits
		"sk_portal_8c1f4e7a02d95b3e6f10a7c4d2",
	} {
		if why := weakSecret(s); why != "" {
			t.Errorf("%q refused: %s", s, why)
		}
	}
	for s, want := range map[string]string{
		"0123456789abcdef0123456789abcde":      "fewer than 128 bits", // 31 hex digits
		"passwordpasswordpassword":             "fewer than 128 bits",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":  "repeats too few characters",
		"Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!Aa1!":     "repeats too few characters",
		"Xk3pQ7LmXk3pQ7LmXk3pQ7LmXk3pQ7Lm":     "repeats a shorter string",
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ": "consecutive",
	} {
		if why := weakSecret(s); !strings.Contains(why, want) {
			t.Errorf("%q: %q, want a refusal naming %q", s, why, want)
		}
	}
}
