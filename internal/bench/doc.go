// Package bench is the load generator behind `worldid bench`: N concurrent
// clients call one operation in a closed loop for a fixed duration, and the
// result reports throughput, latency percentiles (p50, p90, p99, max) and
// errors, as a table or JSON.
//
// Latencies are recorded exactly (one duration per call), so percentiles
// are exact order statistics, not histogram estimates. Progress goes to a
// separate writer (stderr) once per second.
//
// Flood, ProcMemory, ReadStoreUsage and AbuseReport serve the abuse
// scenario: junk sent as fast as the server answers, the server
// process's RSS and peak RSS from /proc, and the JSON store's acknowledged
// LSN and bytes on disk, so a report can say what junk cost.
//
// It does not open connections itself: each scenario supplies the operation
// (normally an HTTP request through a shared http.Client whose transport
// keeps MaxIdleConnsPerHost at least the client count).
package bench
