package bench

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	var v []time.Duration
	for i := 1; i <= 100; i++ {
		v = append(v, time.Duration(i))
	}
	for p, want := range map[int]time.Duration{50: 50, 90: 90, 99: 99, 100: 100, 1: 1} {
		if got := percentile(v, p); got != want {
			t.Errorf("p%d = %d, want %d", p, got, want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("single value p99 = %d", got)
	}
}

func TestRunCountsRequestsAndErrors(t *testing.T) {
	var calls atomic.Int64
	r := Run(context.Background(), Config{Name: "x", Clients: 4, Duration: 200 * time.Millisecond}, func(_ context.Context, w, seq int) error {
		calls.Add(1)
		time.Sleep(time.Millisecond)
		if seq%2 == 1 {
			return errors.New("odd")
		}
		return nil
	})
	if r.Requests == 0 || r.Errors == 0 || r.Errors >= r.Requests || int64(r.Requests) > calls.Load() {
		t.Fatalf("result %+v, calls %d", r, calls.Load())
	}
	if r.P50 < time.Millisecond || r.Max < r.P99 || r.P99 < r.P90 || r.P90 < r.P50 {
		t.Fatalf("percentiles out of order: %+v", r)
	}
	var b strings.Builder
	WriteTable(&b, []Result{r})
	if !strings.Contains(b.String(), "first error: odd") {
		t.Fatalf("table:\n%s", b.String())
	}
}

func TestPoolEndsTheRun(t *testing.T) {
	pool := NewPool([]int{1, 2, 3, 4, 5})
	var sum atomic.Int64
	r := Run(context.Background(), Config{Name: "pool", Clients: 3, Duration: 10 * time.Second}, func(context.Context, int, int) error {
		v, err := pool.Take()
		if err != nil {
			return err
		}
		sum.Add(int64(v))
		return nil
	})
	if r.Requests != 5 || r.Errors != 0 || sum.Load() != 15 || r.Duration > 5*time.Second {
		t.Fatalf("result %+v sum %d", r, sum.Load())
	}
}

func TestOpenLoopRate(t *testing.T) {
	r := Run(context.Background(), Config{Name: "rate", Clients: 8, Duration: 500 * time.Millisecond, Rate: 200}, func(context.Context, int, int) error {
		return nil
	})
	// 200/s for 0.5 s is 100 calls; allow for timer slack.
	if r.Requests < 80 || r.Requests > 110 {
		t.Fatalf("open loop at 200/s for 0.5s made %d calls", r.Requests)
	}
}
