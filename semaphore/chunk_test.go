package semaphore

import "testing"

// TestChunkSize: a small batch is spread over the cores, a large one is
// cut into chunks of pairsPerChunk, and no chunk is below the minimum.
func TestChunkSize(t *testing.T) {
	for _, c := range []struct{ n, procs, want int }{
		{1, 2, 4}, {8, 2, 4}, {9, 2, 5}, {20, 2, 10}, {32, 2, 16}, {64, 2, 16}, {12, 4, 4}, {30, 1, 16},
	} {
		if got := chunkSize(c.n, c.procs); got != c.want {
			t.Errorf("chunkSize(%d, %d) = %d, want %d", c.n, c.procs, got, c.want)
		}
	}
}
