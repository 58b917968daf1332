package e2e

import (
	"flag"
	"os"
	"testing"

	"worldid/internal/vectors"
)

// e2eParallel is how many parallel tests run at once unless -test.parallel
// says otherwise: these tests mostly wait for child processes, browsers
// and the sign-in's once-a-second bridge poll, not for the CPU, so the
// default (GOMAXPROCS, 2 on the CI machine) would leave the cores idle.
const e2eParallel = "4"

// TestMain fails the run if a vector file yielded no vector (see package
// vectors).
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		if err := flag.Set("test.parallel", e2eParallel); err != nil {
			panic(err)
		}
	}
	os.Exit(vectors.Main(m))
}
