package ratelimit

import (
	"strconv"
	"testing"
	"time"
)

func TestLimiterBurstAndRefill(t *testing.T) {
	l := New(Rate{Burst: 3, Every: 10 * time.Second}, 100)
	t0 := time.Unix(1_000_000, 0)
	for i := range 3 {
		if _, ok := l.Allow("a", t0); !ok {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	wait, ok := l.Allow("a", t0)
	if ok || wait != 10*time.Second {
		t.Fatalf("4th request: ok=%v wait=%v, want refused for 10s", ok, wait)
	}
	if _, ok := l.Allow("b", t0); !ok {
		t.Fatal("another key shares the bucket")
	}
	if _, ok := l.Allow("a", t0.Add(9*time.Second)); ok {
		t.Fatal("token before the refill interval")
	}
	if _, ok := l.Allow("a", t0.Add(10*time.Second)); !ok {
		t.Fatal("no token after the refill interval")
	}
	// After a long idle period the bucket is full again, never fuller.
	later := t0.Add(time.Hour)
	for i := range 3 {
		if _, ok := l.Allow("a", later); !ok {
			t.Fatalf("refilled burst request %d refused", i)
		}
	}
	if _, ok := l.Allow("a", later); ok {
		t.Fatal("bucket exceeded its burst")
	}
}

func TestLimiterDisabled(t *testing.T) {
	l := New(Rate{Burst: -1}, 1)
	for range 100 {
		if _, ok := l.Allow("a", time.Unix(0, 0)); !ok {
			t.Fatal("disabled limiter refused")
		}
	}
}

// TestLimiterBoundedMemory: a full table of active keys never refuses a
// newcomer (strangers filling the table must not lock everyone out) and
// never grows past its bound.
func TestLimiterBoundedMemory(t *testing.T) {
	l := New(Rate{Burst: 2, Every: time.Minute}, 10)
	t0 := time.Unix(1_000_000, 0)
	for i := range 10 {
		for range 2 {
			l.Allow(strconv.Itoa(i), t0)
		}
	}
	for i := range 100 {
		if _, ok := l.Allow("new"+strconv.Itoa(i), t0); !ok {
			t.Fatalf("newcomer %d refused by a full table of active keys", i)
		}
		if len(l.tat) > 10 {
			t.Fatalf("table grew to %d", len(l.tat))
		}
	}
	if _, ok := l.Allow("new99", t0); !ok {
		t.Fatal("the newest key lost its second token")
	}
	if _, ok := l.Allow("new99", t0); ok {
		t.Fatal("the newest key exceeded its burst")
	}
	if _, ok := l.Allow("new", t0.Add(2*time.Minute)); !ok {
		t.Fatal("new key refused after the others refilled")
	}
	if len(l.tat) > 10 {
		t.Fatalf("table grew to %d", len(l.tat))
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, time.Minute: 60} {
		if got := RetryAfter(d); got != want {
			t.Errorf("RetryAfter(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestClientKey(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.1:80":            "192.0.2.1",
		"[::ffff:192.0.2.1]:80":   "192.0.2.1",
		"[2001:db8:1:2:3::4]:443": "2001:db8:1:2::/64",
		"unix":                    "unix",
	} {
		if got := ClientKey(addr); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", addr, got, want)
		}
	}
}
