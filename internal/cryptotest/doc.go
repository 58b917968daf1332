// Package cryptotest holds the test and benchmark helpers that the crypto
// packages (field, poseidon, babyjub) share: running a test or benchmark
// once per crypto path (field.Path), and timing an operation against a peer
// implementation on a shared, noisy machine. Only _test.go files import it.
//
// It does not check results or speed targets itself: the targets are in
// doc/performance.md and are read from the benchmarks' output.
package cryptotest
