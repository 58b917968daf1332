package server

import (
	"context"
	"log/slog"
	"time"

	"worldid/internal/leaf/metrics"
	"worldid/oidc"
	"worldid/refresh"
	"worldid/registry"
)

// The handlers and packages report events through observer hooks in their
// Options (func fields, nil = nothing) and expose their state through
// methods read at scrape time; only this file turns either into metric
// families (doc/operations in README, "Metrics"). Names follow the
// Prometheus conventions: snake_case under worldid_, counters end in
// _total, units are base units in the name (_seconds), label values are
// the packages' own words.

// scrapeTimeout bounds a store read made for one scrape.
const scrapeTimeout = 2 * time.Second

// monitor holds the event families the hooks feed.
type monitor struct {
	m             *metrics.Registry
	log           *slog.Logger
	verifications *metrics.Counter
	refreshes     *metrics.Counter
	rootCalls     *metrics.Counter
	rootLatency   *metrics.Histogram
	batchSize     *metrics.Histogram
}

func newMonitor(m *metrics.Registry, log *slog.Logger) *monitor {
	return &monitor{
		m:   m,
		log: log,
		verifications: m.NewCounter("worldid_verifications_total",
			"Proof verification requests by interface (verify: /api/v4/verify), protocol (3.0, 4.0, unparsed) and outcome (success or the error code).",
			"interface", "protocol", "outcome"),
		refreshes: m.NewCounter("worldid_refresh_requests_total",
			"Credential refresh requests (/api/v1/refresh) by outcome: success or the error code.", "outcome"),
		rootCalls: m.NewCounter("worldid_root_source_calls_total",
			"Questions to the on-chain root source (-roots-rpc) by kind (root, key), chain and outcome (ok, error); cached answers ask nothing.",
			"call", "chain", "outcome"),
		rootLatency: m.NewHistogram("worldid_root_source_call_duration_seconds",
			"Latency of questions to the on-chain root source, by kind and chain.", metrics.DefaultLatencyBuckets(), "call", "chain"),
		batchSize: m.NewHistogram("worldid_proof_batch_size",
			"Proofs checked together in one batch (proofs checked alone while invalid ones are frequent are not counted).",
			[]float64{1, 2, 4, 8, 16, 32, 64}),
	}
}

// verify is verify.Options.Observe.
func (mo *monitor) verify(protocol, outcome string) {
	mo.verifications.Inc("verify", protocol, outcome)
}

// refresh is refresh.Options.Observe.
func (mo *monitor) refresh(outcome string) { mo.refreshes.Inc(outcome) }

// rootCall is rootsource.Options.Observe.
func (mo *monitor) rootCall(call, chain, outcome string, took time.Duration) {
	mo.rootCalls.Inc(call, chain, outcome)
	mo.rootLatency.Observe(took.Seconds(), call, chain)
}

// batch is registry.Options.ObserveBatch.
func (mo *monitor) batch(size int) { mo.batchSize.Observe(float64(size)) }

// watchRegistry reads the trees and the batcher's mode at every scrape.
func (mo *monitor) watchRegistry(ids *registry.Registry) {
	mo.m.NewGaugeFunc("worldid_tree_size", "Identities (leaves) in each identity tree.", func(report func(float64, ...string)) {
		for _, t := range ids.TreeStats() {
			report(float64(t.Size), t.Name)
		}
	}, "tree")
	mo.m.NewGaugeFunc("worldid_tree_root_changed_timestamp_seconds", "Unix time the current root of each identity tree was created; absent for a tree without a root.", func(report func(float64, ...string)) {
		for _, t := range ids.TreeStats() {
			if !t.RootChanged.IsZero() {
				report(float64(t.RootChanged.Unix()), t.Name)
			}
		}
	}, "tree")
	mo.m.NewGaugeFunc("worldid_proof_checks_alone", "1 while proofs are verified one by one because invalid ones are frequent (or batching is off), 0 while they are batched.", func(report func(float64, ...string)) {
		report(boolGauge(ids.CheckingAlone()))
	})
}

// watchNullifiers reads the store's nullifier count at every scrape.
func (mo *monitor) watchNullifiers(count func(context.Context) (int, error)) {
	mo.m.NewGaugeFunc("worldid_nullifiers", "Nullifiers recorded by the verify endpoint, over all actions; absent when the store cannot be read.", func(report func(float64, ...string)) {
		ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
		defer cancel()
		n, err := count(ctx)
		if err != nil {
			mo.log.Warn("metrics: nullifier count", "err", err)
			return
		}
		report(float64(n))
	})
}

// watchKeys reads the OIDC signing keys at every scrape: how long the
// signing key has signed and when the next one takes over (a scheduled
// successor's activation, else the signing key's activation plus the
// rotation period).
func (mo *monitor) watchKeys(p *oidc.Provider, rotation time.Duration) {
	signing := func() (age, next float64, ok bool) {
		ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
		defer cancel()
		keys, err := p.KeyList(ctx)
		if err != nil {
			mo.log.Warn("metrics: signing keys", "err", err)
			return 0, 0, false
		}
		now := time.Now()
		for i, k := range keys {
			if k.State != "active" {
				continue
			}
			nextAt := k.ActivatesAt.Add(rotation)
			if i+1 < len(keys) {
				nextAt = keys[i+1].ActivatesAt
			}
			return now.Sub(k.ActivatesAt).Seconds(), float64(nextAt.Unix()), true
		}
		return 0, 0, false
	}
	mo.m.NewGaugeFunc("worldid_oidc_signing_key_age_seconds", "How long the current OIDC signing key has been signing.", func(report func(float64, ...string)) {
		if age, _, ok := signing(); ok {
			report(age)
		}
	})
	mo.m.NewGaugeFunc("worldid_oidc_signing_key_next_rotation_timestamp_seconds", "Unix time the next OIDC signing key takes over (a scheduled successor's activation, else the current key's activation plus -key-rotation).", func(report func(float64, ...string)) {
		if _, next, ok := signing(); ok {
			report(next)
		}
	})
	mo.m.NewGaugeFunc("worldid_oidc_key_rotation_period_seconds", "The configured -key-rotation.", func(report func(float64, ...string)) {
		report(rotation.Seconds())
	})
}

// watchProofLane reads the refresh proof lane at every scrape.
func (mo *monitor) watchProofLane(h *refresh.Handler) {
	mo.m.NewGaugeFunc("worldid_refresh_proof_checks", "Refresh x-zkp-proof checks running and waiting for a slot (-refresh-proof-checks).", func(report func(float64, ...string)) {
		running, waiting := h.ProofLane()
		report(float64(running), "running")
		report(float64(waiting), "waiting")
	}, "state")
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
