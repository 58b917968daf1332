package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// Op is one unit of work. worker identifies the calling client (0..N-1) and
// seq counts that client's calls, so operations can derive distinct inputs.
// An Op returning ErrExhausted ends its client without counting the call:
// scenarios that consume a prepared pool (single-use proofs, codes) stop
// when the pool is empty.
type Op func(ctx context.Context, worker, seq int) error

// ErrExhausted: the operation's prepared inputs are used up.
var ErrExhausted = errors.New("bench: prepared inputs exhausted")

// Config says how hard and how long to drive an Op.
type Config struct {
	Name     string
	Clients  int
	Duration time.Duration
	// Rate, if positive, makes the run open-loop: calls are scheduled at
	// Rate per second (at most Clients in flight) and latency is measured
	// from each call's scheduled start, so a stalled server shows up as
	// latency instead of silently lowering the offered load.
	Rate     float64
	Progress io.Writer // may be nil
}

// Result summarises one run.
type Result struct {
	Name       string        `json:"name"`
	Clients    int           `json:"clients"`
	Duration   time.Duration `json:"duration_ns"`
	Requests   int           `json:"requests"`
	Errors     int           `json:"errors"`
	Throughput float64       `json:"throughput_per_s"`
	P50        time.Duration `json:"p50_ns"`
	P90        time.Duration `json:"p90_ns"`
	P99        time.Duration `json:"p99_ns"`
	Max        time.Duration `json:"max_ns"`
	FirstError string        `json:"first_error,omitempty"`
	// ServerCPU is the server process's CPU time per request (-server-pid;
	// with an in-process server, this process's: the load generator's too).
	ServerCPU time.Duration `json:"server_cpu_per_request_ns,omitempty"`
}

// Run drives op with cfg.Clients concurrent clients until cfg.Duration has
// passed or ctx is done.
func Run(ctx context.Context, cfg Config, op Op) Result {
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      int
		firstErr  string
		done      atomic.Int64
		wg        sync.WaitGroup
	)
	stopProgress := reportProgress(cfg, &done)
	start := time.Now()
	schedule := openLoopSchedule(ctx, cfg.Rate, start)
	for w := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 1024)
			var localErrs int
			var localFirst string
			for seq := 0; ctx.Err() == nil; seq++ {
				t0 := time.Now()
				if schedule != nil {
					var ok bool
					if t0, ok = <-schedule; !ok {
						break
					}
				}
				err := op(ctx, w, seq)
				if ctx.Err() != nil || errors.Is(err, ErrExhausted) {
					break // cut off by the deadline or the pool: neither a result nor an error
				}
				local = append(local, time.Since(t0))
				done.Add(1)
				if err != nil {
					localErrs++
					if localFirst == "" {
						localFirst = err.Error()
					}
				}
			}
			mu.Lock()
			latencies = append(latencies, local...)
			errs += localErrs
			if firstErr == "" {
				firstErr = localFirst
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start) // ends when the last client stops (deadline or pool)
	stopProgress()
	return summarise(cfg, elapsed, latencies, errs, firstErr)
}

// Pool hands out prepared inputs once each, safely across clients.
type Pool[T any] struct {
	items []T
	next  atomic.Int64
}

// NewPool returns a pool over items.
func NewPool[T any](items []T) *Pool[T] { return &Pool[T]{items: items} }

// Take returns the next unused item, or ErrExhausted.
func (p *Pool[T]) Take() (T, error) {
	i := p.next.Add(1) - 1
	if i >= int64(len(p.items)) {
		var zero T
		return zero, ErrExhausted
	}
	return p.items[i], nil
}

// openLoopSchedule emits the scheduled start times of an open-loop run, or
// returns nil for a closed loop. A slot no client is free to take waits in
// the channel, so its latency includes the wait.
func openLoopSchedule(ctx context.Context, rate float64, start time.Time) <-chan time.Time {
	if rate <= 0 {
		return nil
	}
	slots := make(chan time.Time, 1<<16)
	interval := time.Duration(float64(time.Second) / rate)
	go func() {
		defer close(slots)
		for i := 0; ; i++ {
			at := start.Add(time.Duration(i) * interval)
			if d := time.Until(at); d > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(d):
				}
			}
			select {
			case slots <- at:
			case <-ctx.Done():
				return
			}
		}
	}()
	return slots
}

func reportProgress(cfg Config, done *atomic.Int64) (stop func()) {
	if cfg.Progress == nil {
		return func() {}
	}
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var last int64
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				n := done.Load()
				fmt.Fprintf(cfg.Progress, "%s: %d requests (%d/s)\n", cfg.Name, n, n-last)
				last = n
			}
		}
	}()
	return func() { close(quit); <-finished }
}

func summarise(cfg Config, elapsed time.Duration, lat []time.Duration, errs int, firstErr string) Result {
	slices.Sort(lat)
	r := Result{Name: cfg.Name, Clients: cfg.Clients, Duration: elapsed, Requests: len(lat), Errors: errs, FirstError: firstErr}
	if len(lat) == 0 {
		return r
	}
	r.Throughput = float64(len(lat)) / elapsed.Seconds()
	r.P50, r.P90, r.P99 = percentile(lat, 50), percentile(lat, 90), percentile(lat, 99)
	r.Max = lat[len(lat)-1]
	return r
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 · n)
	return sorted[max(rank, 1)-1]
}

// WriteTable prints results as an aligned table.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tclients\trequests\terrors\treq/s\tp50\tp90\tp99\tmax\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t\n", r.Name, r.Clients, r.Requests, r.Errors,
			r.Throughput, ms(r.P50), ms(r.P90), ms(r.P99), ms(r.Max))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s: first error: %s\n", r.Name, r.FirstError)
		}
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

// WriteJSON prints results as a JSON array.
func WriteJSON(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}
