package server

import (
	"strings"
	"testing"

	"worldid/babyjub"
)

// TestRequireConstantTime: a build whose signing is not constant time is
// refused with the reason; this build (CI runs amd64) is accepted.
func TestRequireConstantTime(t *testing.T) {
	if err := requireConstantTime(false); err == nil || !strings.Contains(err.Error(), "purego") {
		t.Errorf("a variable-time build: %v", err)
	}
	if err := requireConstantTime(babyjub.ConstantTime()); err != nil {
		t.Errorf("this build: %v", err)
	}
}
