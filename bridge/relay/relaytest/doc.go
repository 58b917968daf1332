// Package relaytest is the conformance suite every relay.Store passes:
// relay.Memory and store/postgres run it.
package relaytest
