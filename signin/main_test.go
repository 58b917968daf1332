package signin

import (
	"os"
	"testing"

	"worldid/internal/vectors"
)

// TestMain fails the run if a vector file yielded no vector (see package vectors).
func TestMain(m *testing.M) { os.Exit(vectors.Main(m)) }
