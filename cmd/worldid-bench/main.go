package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"worldid/internal/bench"
	"worldid/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := bench.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "worldid-bench:", err)
		if errors.As(err, new(cli.UsageError)) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
