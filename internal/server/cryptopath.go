package server

import (
	"log/slog"
	"time"

	"worldid/babyjub"
	"worldid/field"
	"worldid/poseidon"
)

// chooseCryptoPaths applies -crypto-path, then calibrates every operation
// that has a scalar and a vector (AVX-512 IFMA) implementation, a few
// milliseconds each, and logs the path each one runs on.
func chooseCryptoPaths(cfg Config, log *slog.Logger) error {
	if err := field.ForcePath(cfg.cryptoPath); err != nil {
		return err
	}
	start := time.Now()
	choices := append(poseidon.Paths(), babyjub.Paths()...)
	log.Info("crypto paths calibrated", "took", time.Since(start), "forced", cfg.cryptoPath.String())
	for _, c := range choices {
		log.Info("crypto path", "op", c.Op, "path", field.Effective(c.Path).String(),
			"calibrated", c.Path.String(), "measured", c.Measured,
			"scalar_time", c.ScalarTime, "vector_time", c.VectorTime)
	}
	return nil
}
