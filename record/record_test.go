package record

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestClientGone(t *testing.T) {
	for err, want := range map[error]bool{
		context.Canceled:                      true,
		fmt.Errorf("x: %w", context.Canceled): true,
		// A backend's deadline cancels its own context; that is unavailability.
		fmt.Errorf("store: %w: timeout (%w)", ErrUnavailable, context.Canceled): false,
		context.DeadlineExceeded: false,
		ErrUnavailable:           false,
		errors.New("other"):      false,
	} {
		if got := ClientGone(err); got != want {
			t.Errorf("ClientGone(%v) = %v", err, got)
		}
	}
}
