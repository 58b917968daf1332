package admin

import (
	"math"
	"strings"
)

// Imported client secrets are refused unless they look like random
// strings of at least minSecretBits, rather than stored under a salted
// slow hash: record.App.SecretHash is a fast SHA-256 checked on every
// token request, and a slow hash there would hand every client of the
// token endpoint a lever on the server's CPU. Portal secrets are random
// (sk_ and 64 hex digits), so the check refuses none of them; what it
// refuses is a secret someone chose.
const (
	// minSecretBits is the strength an imported secret must reach by
	// its length and alphabet (secretBits).
	minSecretBits = 128
	// minSecretSpread is the least Shannon entropy per character of an
	// imported secret's own character counts: random strings over 16 or
	// more symbols, 24 characters or longer, stay above 2.9 (measured on
	// 100 000 random hex secrets of 32 characters); "aaaa…" has 0.
	minSecretSpread = 2.5
)

// weakSecret explains why an imported secret is too weak to keep behind
// a fast hash, or returns "".
func weakSecret(s string) string {
	switch {
	case secretBits(s) < minSecretBits:
		return "is too weak: its length and character classes give fewer than 128 bits (use 32 random hex digits, 22 random letters and digits, or more)"
	case charSpread(s) < minSecretSpread:
		return "repeats too few characters to be random"
	case periodic(s):
		return "repeats a shorter string"
	case sequential(s):
		return "is mostly a run of consecutive characters"
	}
	return ""
}

// secretBits estimates the strength of s as a random string: its length
// times log2 of the alphabet its character classes span (hex digits 16;
// else lowercase 26, uppercase 26, digits 10, other printable ASCII 32).
func secretBits(s string) float64 {
	if strings.Trim(s, "0123456789abcdef") == "" || strings.Trim(s, "0123456789ABCDEF") == "" {
		return float64(len(s)) * 4
	}
	var lower, upper, digit, other bool
	for _, c := range s {
		switch {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case '0' <= c && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	alphabet := 0
	for _, class := range []struct {
		present bool
		size    int
	}{{lower, 26}, {upper, 26}, {digit, 10}, {other, 32}} {
		if class.present {
			alphabet += class.size
		}
	}
	return float64(len(s)) * math.Log2(float64(alphabet))
}

// charSpread is the Shannon entropy, in bits per character, of the
// character counts of s.
func charSpread(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n, h := float64(len(s)), 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// periodic reports whether s is a shorter string repeated (the last copy
// may be cut short).
func periodic(s string) bool {
	for p := 1; p <= len(s)/2; p++ {
		if s[p:] == s[:len(s)-p] {
			return true
		}
	}
	return false
}

// sequential reports whether more than half of the neighbouring
// characters of s are consecutive ("abcdef", "987654").
func sequential(s string) bool {
	steps := 0
	for i := 1; i < len(s); i++ {
		if d := int(s[i]) - int(s[i-1]); d == 1 || d == -1 {
			steps++
		}
	}
	return 2*steps > len(s)-1
}
