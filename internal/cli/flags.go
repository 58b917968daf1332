package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
)

// UsageError marks errors caused by the command line; main exits 2 for them.
// Shown is set when the flag package has already printed the error (with
// the usage), so that main does not print it a second time.
type UsageError struct {
	Err   error
	Shown bool
}

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// NewFlagSet is a flag set for "worldid name" that reports to out.
func NewFlagSet(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("worldid "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
}

// ParseFlags parses args into fs, then fills every flag not given on the
// command line from its WORLDID_* environment variable.
func ParseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return UsageError{Err: fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))}
	}
	return FillFromEnv(fs, getenv)
}

// FillFromEnv sets every flag not given on the command line from its
// WORLDID_* environment variable.
func FillFromEnv(fs *flag.FlagSet, getenv func(string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", envName(f.Name), err))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return UsageError{Err: err}
	}
	return nil
}

// parseFlagsWithArgs is parseFlags for commands taking exactly n
// positional arguments after the flags, or any number if n < 0.
func parseFlagsWithArgs(fs *flag.FlagSet, args []string, n int) error {
	if err := Parse(fs, args); err != nil {
		return err
	}
	if n >= 0 && fs.NArg() != n {
		return UsageError{Err: fmt.Errorf("%s takes %d argument(s), got %d", fs.Name(), n, fs.NArg())}
	}
	return FillFromEnv(fs, os.Getenv)
}

// Parse runs fs.Parse. For -h it returns flag.ErrHelp (the usage has been
// printed: a success, exit 0); any other error the flag package has
// printed already, with the usage.
func Parse(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return UsageError{Err: err, Shown: true}
}

// IsHelp reports whether args ask for help: -h, -help, --help or help.
func IsHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// serverURL is the default URL of one of the server's listeners for the
// CLI: the server's own setting of it from the environment (the variable
// urlVar holding a URL, else addrVar a listen address, as `worldid serve`
// reads them), so that a server moved with WORLDID_ADDR or
// WORLDID_ADMIN_ADDR is found by the CLI run with the same environment;
// else fallback.
func serverURL(getenv func(string) string, urlVar, addrVar, fallback string) string {
	if u := getenv(urlVar); u != "" {
		return u
	}
	addr := getenv(addrVar)
	if addr == "" {
		return fallback
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fallback // the server refuses it too
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // listening on every address: reach it on loopback
	}
	return "http://" + net.JoinHostPort(host, port)
}

func envName(flagName string) string {
	return "WORLDID_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}
