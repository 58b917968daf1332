// Package e2e holds the tests that drive the built worldid binary or wire
// the real packages together: the end-to-end flows (e2e_test.go), hostile
// input per interface (oidc_test.go, verify_test.go, refresh_test.go,
// admin_test.go), crash and disk faults (faults_test.go), concurrency under
// the race detector (concurrency_test.go), two replicas on one PostgreSQL
// (replicas_test.go), TLS (tls_test.go), the server's memory
// (rss_test.go) and `worldid-bench abuse`, legitimate traffic under a flood
// of junk (abuse_test.go), and the sign-in pages as a person meets them in
// headless Chromium (browser_test.go; page_test.go: the true state of an
// ended sign-in, the wait page's states, the expiry in local time, the
// layout on three screens in light and dark; browser_session_test.go: the
// login session over HTTPS, prompt=none, max_age and logout). harness_test.go is the one harness they share: building
// the binary, starting and stopping a server, HTTP helpers and the
// hostile-case runner.
//
// It has no non-test code.
package e2e
