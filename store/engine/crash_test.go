package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The crash test re-executes the test binary as a writer process
// (TestHelperWriter), kills it with SIGKILL at a random moment, and checks
// that every write the child acknowledged survived (doc/design.md §3).
const (
	crashDirEnv   = "WORLDID_STORE_CRASH_DIR"
	crashRoundEnv = "WORLDID_STORE_CRASH_ROUND"
	crashRounds   = 24
	crashWriters  = 8
	// crashCompactAfter is small so that kills also land in compactions.
	crashCompactAfter = 50
)

// crashValue is the value the child writes for key; the parent recomputes
// it to check that values are intact, not just present.
func crashValue(key string) string {
	return fmt.Sprintf(`{"key":%q,"pad":%q}`, key, strings.Repeat(key[len(key)-1:], 40+len(key)%64))
}

// crashPacked is the packed row the child writes with key: table
// "packed" (testCodecs), so that kills also land in snapshots with
// packed records.
func crashPacked(key string) (packedKey, value string) {
	dash := strings.LastIndexByte(key, '-')
	n, _ := strconv.Atoi(key[dash+1:])
	return fmt.Sprintf("%s/%064x", key[:dash], n), strconv.Itoa(n)
}

// TestHelperWriter is the child process: it writes until killed and prints
// "ack KEY" for each acknowledged Update. Each Update puts one key and its
// packed row (crashPacked) and increments a counter, so the parent can
// also check atomicity. It lives
// as long as its standard input is open: the parent closes it only when
// the kill failed, and a parent that dies takes the child with it.
func TestHelperWriter(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("helper process for TestCrashLosesNoAcknowledgedWrite")
	}
	round := os.Getenv(crashRoundEnv)
	db, err := Open(dir, Options{CompactAfter: crashCompactAfter, Codecs: testCodecs})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	var out sync.Mutex
	for w := range crashWriters {
		go func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("r%s-w%d-%06d", round, w, i)
				err := db.Update(context.Background(), func(tx *Tx) error {
					if err := tx.Insert("crash", key, json.RawMessage(crashValue(key))); err != nil {
						return err
					}
					pk, pv := crashPacked(key)
					if err := tx.Insert("packed", pk, json.RawMessage(pv)); err != nil {
						return err
					}
					_, err := tx.Increment("counters", "acks", math.MaxInt64)
					return err
				})
				out.Lock()
				if err != nil {
					fmt.Println("error", err)
					os.Exit(3)
				}
				fmt.Println("ack", key) // one write(2) to a pipe: atomic
				out.Unlock()
			}
		}()
	}
	io.Copy(io.Discard, os.Stdin)
	fmt.Println("error: not killed")
	os.Exit(4)
}

func TestCrashLosesNoAcknowledgedWrite(t *testing.T) {
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	acked := map[string]bool{}
	for round := range crashRounds {
		// Kill anywhere from during Open (and its compaction) to well
		// into the writes.
		delay := time.Duration(rng.IntN(250)) * time.Millisecond
		for _, key := range runCrashChild(t, dir, round, delay) {
			acked[key] = true
		}
		checkCrashState(t, dir, acked)
	}
	if len(acked) < 100 {
		t.Fatalf("only %d writes acknowledged in %d rounds: the test proved little", len(acked), crashRounds)
	}
	t.Logf("%d acknowledged writes survived %d kills", len(acked), crashRounds)
}

// runCrashChild starts a writer on dir, kills it after delay and returns the
// keys it acknowledged.
func runCrashChild(t *testing.T, dir string, round int, delay time.Duration) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, fmt.Sprintf("%s=%02d", crashRoundEnv, round))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(delay, func() {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			stdin.Close() // the child reports that it was not killed
		}
	})
	var keys []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		key, ok := strings.CutPrefix(line, "ack ")
		if !ok {
			t.Fatalf("round %d: child said %q (stderr: %s)", round, line, stderr.String())
		}
		keys = append(keys, key)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("round %d: child ended with %v, not by SIGKILL (stderr: %s)", round, err, stderr.String())
	}
	return keys
}

// checkCrashState opens dir as the restarted server would and checks every
// acknowledged key and the counter, then that the store accepts writes.
func checkCrashState(t *testing.T, dir string, acked map[string]bool) {
	t.Helper()
	db := mustOpen(t, dir, Options{CompactAfter: crashCompactAfter, Codecs: testCodecs})
	defer db.Close()
	err := db.View(func(tx *ReadTx) error {
		for key := range acked {
			v, ok := tx.Get("crash", key)
			if !ok {
				return fmt.Errorf("acknowledged key %s lost", key)
			}
			if string(v) != crashValue(key) {
				return fmt.Errorf("key %s = %s, want %s", key, v, crashValue(key))
			}
			pk, pv := crashPacked(key)
			if v, ok := tx.Get("packed", pk); !ok || string(v) != pv {
				return fmt.Errorf("acknowledged packed row %s = %s, %t; want %s", pk, v, ok, pv)
			}
		}
		// Key and counter are written by one Update: they must agree,
		// whether or not the last Update was acknowledged.
		var n int
		if v, ok := tx.Get("counters", "acks"); ok {
			json.Unmarshal(v, &n)
		}
		if n != tx.Count("crash") || n != tx.Count("packed") {
			return fmt.Errorf("counter %d, but %d keys and %d packed rows", n, tx.Count("crash"), tx.Count("packed"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The recovered store keeps working.
	put(t, db, "after", "k", len(acked))
}
