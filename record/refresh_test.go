package record

import (
	"strings"
	"testing"
	"time"
)

func TestIsCanonicalHex(t *testing.T) {
	good := "0x" + strings.Repeat("0a", 32)
	if !IsCanonicalHex(good) {
		t.Fatal("rejected canonical hex")
	}
	for _, s := range []string{"", "0x", good[:65], good + "0", "0X" + good[2:], strings.ToUpper(good), "0x" + strings.Repeat("g", 64), " " + good[1:]} {
		if IsCanonicalHex(s) {
			t.Errorf("accepted %q", s)
		}
	}
}

func TestSignupValidate(t *testing.T) {
	ok := Signup{IDCommitment: "0x" + strings.Repeat("1", 64), SignupID: "s", VerifiedAt: time.Unix(0, 0)}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*Signup){
		"short commitment": func(s *Signup) { s.IDCommitment = "0x1" },
		"empty signup_id":  func(s *Signup) { s.SignupID = "" },
		"long signup_id":   func(s *Signup) { s.SignupID = strings.Repeat("a", maxSignupID+1) },
		"before 1970":      func(s *Signup) { s.VerifiedAt = time.Unix(-1, 0) },
	} {
		s := ok
		edit(&s)
		if s.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRefreshSignal(t *testing.T) {
	sub := "0x" + strings.Repeat("ab", 32)
	if got, want := RefreshSignal(sub, 1750000000, ""), "refresh:"+sub+":1750000000"; got != want {
		t.Errorf("credential-only signal %q, want %q", got, want)
	}
	d := strings.Repeat("cd", 32)
	if got, want := RefreshSignal(sub, 5, d), "refresh:"+sub+":5:"+d; got != want {
		t.Errorf("PCP signal %q, want %q", got, want)
	}
}
