package bench

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD: the calling thread's CPU time.
const rusageThread = 1

// rs256Samples is how many signatures RS256CPU times.
const rs256Samples = 200

// RS256CPU is the CPU time of one RS256 signature (RSA-2048 PKCS #1 v1.5
// over SHA-256, the ID token's) on this machine: the calling thread's CPU
// time over rs256Samples signatures, so that other load on the machine
// lengthens the wall clock but not the result. The server's CPU per /token
// request divided by it is the request's cost in signatures.
func RS256CPU() (time.Duration, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return 0, err
	}
	digest := sha256.Sum256([]byte("header.payload"))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := threadCPU()
	if err != nil {
		return 0, err
	}
	for range rs256Samples {
		if _, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest[:]); err != nil {
			return 0, err
		}
	}
	after, err := threadCPU()
	return (after - before) / rs256Samples, err
}

func threadCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// runMeasured runs one scenario and, given the server's process id, the
// server's CPU time per request over the run (/proc, 10 ms ticks).
func runMeasured(ctx context.Context, cfg Config, op Op, serverPID int) (Result, error) {
	if serverPID == 0 {
		return Run(ctx, cfg, op), nil
	}
	before, err := ProcCPU(serverPID)
	if err != nil {
		return Result{}, err
	}
	r := Run(ctx, cfg, op)
	after, err := ProcCPU(serverPID)
	if err != nil || r.Requests == 0 {
		return r, err
	}
	r.ServerCPU = (after - before) / time.Duration(r.Requests)
	return r, nil
}

// writeCPU prints each result's server process CPU per request (or, in
// process, the bench's), in RS256 signatures when sig is known.
func writeCPU(w io.Writer, results []Result, sig time.Duration) {
	if sig > 0 {
		fmt.Fprintf(w, "one RS256 signature: %s CPU\n", us(sig))
	}
	for _, r := range results {
		switch {
		case r.ServerCPU == 0:
		case sig > 0:
			fmt.Fprintf(w, "%s: process CPU %s per request = %.2f RS256 signatures\n", r.Name, us(r.ServerCPU), float64(r.ServerCPU)/float64(sig))
		default:
			fmt.Fprintf(w, "%s: process CPU %s per request\n", r.Name, us(r.ServerCPU))
		}
	}
}

func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d.Nanoseconds())/1000) }

// startCPUProfile profiles this process into path (nothing if path is
// empty) until the returned function is called; with several scenarios
// the last one's profile is kept.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
