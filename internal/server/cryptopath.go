package server

import (
	"errors"
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

// requireConstantTime refuses a build whose issuer signing is not
// constant time (babyjub.ConstantTime): the credential issuer signs with
// a long-lived key on every refresh.
func requireConstantTime(constantTime bool) error {
	if !constantTime {
		return errors.New("this build's BabyJubJub signing is not constant time (a purego build, or an architecture other than amd64 and arm64): the credential issuer's key would leak through timing; build for amd64 or arm64 without the purego tag")
	}
	return nil
}
