// Package metrics is a small Prometheus text-format (version 0.0.4) registry
// and HTTP instrumentation for worldid.
//
// It implements counters, gauges and fixed-bucket histograms keyed by label values,
// an http.Handler serving them at /metrics, and a middleware that records
// every request by route pattern (http.Request.Pattern as set by
// http.ServeMux, never the raw path, so that ids and tokens in URLs never
// become label values) and status code.
//
// It does not implement gauges with callbacks, summaries, exemplars or the
// OpenMetrics format; a Prometheus server scrapes the text format directly.
package metrics
