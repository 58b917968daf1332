package server

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"worldid/internal/leaf/metrics"
	"worldid/oidc"
	"worldid/record"
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

// scrapeTimeout bounds one store read for the metrics.
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
	signinEvents  *metrics.Counter
	deviceEvents  *metrics.Counter
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
		signinEvents: m.NewCounter("worldid_signin_events_total",
			"Sign-in funnel and Wallet Bridge calls by event: started, scanned, approved, refused, wallet_error, finished, cancelled, expired, bridge_create_ok, bridge_create_error, bridge_poll_ok, bridge_poll_error.",
			"event"),
		deviceEvents: m.NewCounter("worldid_device_grant_events_total",
			"Device authorization grants (RFC 8628) by event: started, bad_code, approved, denied, slow_down, redeemed; their sign-ins count in worldid_signin_events_total too.",
			"event"),
		batchSize: m.NewHistogram("worldid_proof_batch_size",
			"Proofs checked together in one batch (proofs checked alone while invalid ones are frequent are not counted).",
			[]float64{1, 2, 4, 8, 16, 32, 64}),
	}
}

// verify is verify.Options.Observe.
func (mo *monitor) verify(protocol, outcome string) {
	mo.verifications.Inc("verify", protocol, outcome)
}

// signin is signin.Options.Observe.
func (mo *monitor) signin(event string) { mo.signinEvents.Inc(event) }

// device is oidc.Options.ObserveDevice.
func (mo *monitor) device(event string) { mo.deviceEvents.Inc(event) }

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

// storeReadInterval is how often the values the metrics show from the
// store are read (storeReadings).
const storeReadInterval = 5 * time.Second

// storeReadings are the metrics read from the store: the nullifier count
// and the OIDC signing keys. Server.every reads them every storeReadInterval,
// not the scrape, which must answer at once while the store hangs; a
// failed read keeps the last values.
type storeReadings struct {
	log        *slog.Logger
	nullifiers func(context.Context) (int, error)
	keys       func(context.Context) ([]record.KeyInfo, error)
	rotation   time.Duration

	nullifierCount *metrics.Gauge
	nextRotation   *metrics.Gauge
	activated      atomic.Int64 // Unix time the signing key started signing; 0 before the first read
}

// watchStore registers the families of the store readings; read fills
// them, run keeps them current.
func (mo *monitor) watchStore(nullifiers func(context.Context) (int, error), p *oidc.Provider, rotation time.Duration) *storeReadings {
	r := &storeReadings{log: mo.log, nullifiers: nullifiers, keys: p.KeyList, rotation: rotation,
		nullifierCount: mo.m.NewGauge("worldid_nullifiers", "Nullifiers recorded by the verify endpoint, over all actions (read every 5 s)."),
		nextRotation: mo.m.NewGauge("worldid_oidc_signing_key_next_rotation_timestamp_seconds",
			"Unix time the next OIDC signing key takes over: a scheduled successor's activation, else the current key's activation plus -key-rotation (read every 5 s)."),
	}
	mo.m.NewGaugeFunc("worldid_oidc_signing_key_age_seconds", "How long the current OIDC signing key has been signing.", func(report func(float64, ...string)) {
		if at := r.activated.Load(); at != 0 {
			report(float64(time.Now().Unix() - at))
		}
	})
	mo.m.NewGaugeFunc("worldid_oidc_key_rotation_period_seconds", "The configured -key-rotation.", func(report func(float64, ...string)) {
		report(rotation.Seconds())
	})
	return r
}

// read reads the store once, each value within scrapeTimeout.
func (r *storeReadings) read(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	if n, err := r.nullifiers(ctx); err != nil {
		r.log.Debug("metrics: nullifier count", "err", err) // an outage is the health check's to report
	} else {
		r.nullifierCount.Set(float64(n))
	}
	keys, err := r.keys(ctx)
	if err != nil {
		r.log.Debug("metrics: signing keys", "err", err)
		return
	}
	for i, k := range keys {
		if k.State != "active" {
			continue
		}
		next := k.ActivatesAt.Add(r.rotation)
		if i+1 < len(keys) && keys[i+1].State == "pending" { // not a revoked key's record
			next = keys[i+1].ActivatesAt
		}
		r.activated.Store(k.ActivatesAt.Unix())
		r.nextRotation.Set(float64(next.Unix()))
	}
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
