package oidc

import (
	"net/http"
	"strings"

	"worldid/internal/oauth"
	"worldid/record"
)

// Authentication context class references (OIDC Core §2 acr), one per
// verification level, in the form World's own provider publishes
// (https://world.org/oidc/acr/orb-v3, as a third party recorded
// auth.world.org's discovery document on 2026-09-26; the device value
// follows the same pattern). doc/interfaces.md §2.4.1 lists them.
const (
	acrOrb    = "https://world.org/oidc/acr/orb-v3"
	acrDevice = "https://world.org/oidc/acr/device-v3"
	// amrPoP: the wallet proved possession of its World ID key with a
	// zero-knowledge proof (RFC 8176 §2 "pop").
	amrPoP = "pop"
)

// acrLevels maps each acr to its verification level, strongest first.
var acrLevels = [...]struct{ acr, level string }{{acrOrb, oauth.LevelOrb}, {acrDevice, oauth.LevelDevice}}

func acrValuesSupported() []string { return []string{acrOrb, acrDevice} }

// acrOf is the acr of a verification level.
func acrOf(level string) string {
	for _, a := range acrLevels {
		if a.level == level {
			return a.acr
		}
	}
	return ""
}

// levelRank orders verification levels: orb proves more than device.
func levelRank(level string) int {
	for i, a := range acrLevels {
		if a.level == level {
			return len(acrLevels) - i
		}
	}
	return 0
}

// parseACRValues reads acr_values (OIDC Core §3.1.2.1: space-separated,
// in order of preference) and returns the weakest verification level any
// of the known values accepts: a proof at that level or a stronger one
// satisfies the request. Unknown values are ignored (the parameter is a
// voluntary request); with no known value nothing is required ("").
func parseACRValues(s string) (string, *oauth.Error) {
	if s == "" {
		return "", nil
	}
	if len(s) > maxEchoBytes {
		return "", oauth.ErrInvalid("acr_values", "acr_values must be at most 512 characters")
	}
	weakest := ""
	for v := range strings.SplitSeq(s, " ") {
		for _, a := range acrLevels {
			if v == a.acr && (weakest == "" || levelRank(a.level) < levelRank(weakest)) {
				weakest = a.level
			}
		}
	}
	return weakest, nil
}

// errACRUnmet: the proof is weaker than every acr the request accepts.
func errACRUnmet(proven, required string) *oauth.Error {
	return oauth.NewError(http.StatusForbidden, "acr_unmet", "access_denied", "acr_values",
		"the wallet proved verification level "+proven+", and acr_values asked for "+acrOf(required)+" or stronger")
}

// satisfies reports whether a proof at level meets the required level
// ("" requires nothing).
func satisfies(level, required string) bool {
	return required == "" || levelRank(level) >= levelRank(required)
}

// currentProfile reports whether an app gets the current profile rather
// than the v1 contract (doc/interfaces.md §2.4.1).
func currentProfile(profile string) bool { return profile == record.ProfileCurrent }
