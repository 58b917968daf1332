package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"worldid/internal/cli"
	"worldid/internal/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var usage cli.UsageError
	switch {
	case err == nil:
	case errors.As(err, &usage):
		if !usage.Shown {
			fmt.Fprintln(os.Stderr, "worldid:", err)
		}
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "worldid:", err)
		os.Exit(1)
	}
}

// run dispatches a subcommand; "serve" is the default. Asking for help
// (worldid -h, worldid CMD -h) prints the usage and is a success.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || cli.IsHelp(args[0])) {
		cmd, args = args[0], args[1:]
	}
	if cli.IsHelp(cmd) {
		cmd = "help"
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stdout, stderr)
	case "wallet":
		return cli.Wallet(ctx, args, stdout, stderr)
	case "demo":
		return cli.Demo(ctx, args, stdout, stderr)
	case "bench":
		return cli.UsageError{Err: errors.New("the load tools are a command of their own, kept out of this binary: worldid-bench (go build ./cmd/worldid-bench)")}
	case "backup":
		return cli.Backup(ctx, args, stdout, stderr)
	case "restore":
		return cli.Restore(ctx, args, stdout, stderr)
	case "migrate":
		return cli.Migrate(ctx, args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usageText)
		return nil
	case "version":
		fmt.Fprintln(stdout, server.Version())
		return nil
	case "app", "identity", "roots", "anchor", "action", "keys", "signup", "orbkey", "refresh":
		return cli.Admin(ctx, cmd, args, stdout, stderr)
	default:
		return cli.UsageError{Err: fmt.Errorf("unknown command %q (try 'worldid help')", cmd)}
	}
}

const usageText = `usage: worldid <command> [flags]

  serve                 run the server (default); flags: worldid serve -h
  demo                  run every flow against a throwaway in-process server
  app create|list|import|update|rotate-secret|disable|enable|delete
                        manage relying-party apps (admin API)
  identity add C...     insert identity commitments (or -file F) into a tree (admin API)
  roots add R           accept a root of a tree kept elsewhere, or of World ID 4.0 (-protocol 4.0) (admin API)
  anchor set|list       World ID 4.0 trust anchors: issuer key per schema, OPRF key per rp_id (admin API)
  action limit          set an action's max_verifications (admin API)
  keys list|rotate|revoke  list, schedule the next, or revoke an OIDC signing key (admin API)
  signup import FILE    import signup records, JSON lines (admin API)
  orbkey add -orb O PEM trust an Orb's PCP signing key (admin API)
  refresh enable|disable  turn credential refresh on or off (admin API)
  backup -o FILE        consistent, checksummed backup of the running server (admin API)
  restore [-store URL] [-force] FILE  restore a backup into an empty data dir or database
  migrate -from DIR -to URL  copy a stopped JSON-store deployment into PostgreSQL, verified
  wallet new|prove|signin|approve|pcp|refresh  the development wallet
  version               module version and VCS revision
  help                  this text

Every flag also reads WORLDID_<FLAG> from the environment (e.g. WORLDID_ADDR).
`

// serve runs the server until ctx is cancelled (SIGINT, SIGTERM), then
// drains for a bounded time.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg server.Config
	fs := cli.NewFlagSet("serve", stderr)
	cfg.RegisterFlags(fs)
	if err := cli.ParseFlags(fs, args, os.Getenv); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return cli.UsageError{Err: err}
	}
	level, _ := cfg.SlogLevel()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	srv, err := server.Start(ctx, cfg, stdout, log)
	if err != nil && ctx.Err() != nil {
		log.Info("stopped while starting", "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	return srv.Wait(ctx)
}
