package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"worldid/internal/cli"
)

// Asking for help is a success with the usage printed; a wrong flag is a
// usage error the flag package has already shown (main prints it once).
func TestHelpAndUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in stdout or stderr
	}{
		{[]string{"-h"}, "usage: worldid <command>"},
		{[]string{"--help"}, "usage: worldid <command>"},
		{[]string{"help"}, "usage: worldid <command>"},
		{[]string{"serve", "-h"}, "-base-url"},
		{[]string{"app", "-h"}, "usage: worldid app create|"},
		{[]string{"app", "create", "-h"}, "-redirect-uri"},
		{[]string{"wallet", "-h"}, "usage: worldid wallet"},
		{[]string{"wallet", "prove", "-h"}, "-signal"},
		{[]string{"backup", "-h"}, "-o"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), tc.args, &stdout, &stderr); err != nil {
			t.Errorf("%q: %v, want success", tc.args, err)
		}
		if !strings.Contains(stdout.String()+stderr.String(), tc.want) {
			t.Errorf("%q: output lacks %q:\n%s%s", tc.args, tc.want, stdout.String(), stderr.String())
		}
	}
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"serve", "-bogus"}, new(bytes.Buffer), &stderr)
	var usage cli.UsageError
	if !errors.As(err, &usage) || !usage.Shown {
		t.Fatalf("serve -bogus: %v, want a usage error already shown", err)
	}
	if n := strings.Count(stderr.String(), "-bogus"); n != 1 {
		t.Errorf("the flag error is printed %d times, want once:\n%s", n, stderr.String())
	}
	if err := run(context.Background(), []string{"app"}, new(bytes.Buffer), new(bytes.Buffer)); !errors.As(err, &usage) || usage.Shown {
		t.Errorf("app without a subcommand: %v, want a usage error for main to print", err)
	}
}
