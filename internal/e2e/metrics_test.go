package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scrape reads /metrics into series → value ("name{labels}" as written).
func scrape(t *testing.T, p *serverProc) map[string]float64 {
	t.Helper()
	r := call(http.MethodGet, p.public+"/metrics", "", "")(t)
	if r.status != http.StatusOK {
		t.Fatalf("/metrics: %d %s", r.status, r.body)
	}
	series := map[string]float64{}
	for _, line := range strings.Split(string(r.body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		series[line[:i]] = v
	}
	return series
}

// checkOnCallMetrics: after a sign-in, verifications and refreshes, the
// families an on-call engineer reads exist with values that fit. The
// store's readings are refreshed every few seconds: poll until they are.
func checkOnCallMetrics(t *testing.T, p *serverProc) {
	var problems []string
	if !eventually(20*time.Second, 250*time.Millisecond, func() bool {
		problems = onCallProblems(scrape(t, p))
		return len(problems) == 0
	}) {
		t.Error(strings.Join(problems, "\n"))
	}
}

// onCallProblems lists what is missing or off in one scrape.
func onCallProblems(s map[string]float64) []string {
	now := float64(time.Now().Unix())
	var problems []string
	for _, c := range []struct {
		series string
		ok     func(v float64) bool
		want   string
	}{
		{`worldid_verifications_total{interface="verify",protocol="3.0",outcome="success"}`, positive, "> 0"},
		{`worldid_refresh_requests_total{outcome="success"}`, positive, "> 0"},
		{`worldid_signin_events_total{event="started"}`, positive, "> 0"},
		{`worldid_signin_events_total{event="finished"}`, positive, "> 0"},
		{`worldid_signin_events_total{event="bridge_create_ok"}`, positive, "> 0"},
		{`worldid_tree_size{tree="orb/production"}`, positive, "> 0"},
		{`worldid_tree_root_changed_timestamp_seconds{tree="orb/production"}`, func(v float64) bool { return v > now-3600 && v <= now+1 }, "within the last hour"},
		{`worldid_nullifiers`, positive, "> 0"},
		{`worldid_oidc_signing_key_age_seconds`, func(v float64) bool { return v >= 0 && v < 3600 }, "a fresh key"},
		{`worldid_oidc_signing_key_next_rotation_timestamp_seconds`, func(v float64) bool { return v > now }, "in the future"},
		{`worldid_refresh_proof_checks{state="waiting"}`, func(v float64) bool { return v == 0 }, "0 when idle"},
		{`worldid_proof_batch_size_count`, positive, "> 0: sign-in and verify proofs went through the batcher"},
		{`worldid_proof_checks_alone`, func(v float64) bool { return v == 0 }, "0 without invalid proofs"},
		{`worldid_http_requests_total{server="public",route="/api/v4/verify/{rp_id}",code="200"}`, positive, "> 0, the route as its path pattern"},
		{`process_open_fds`, positive, "> 0"},
	} {
		v, ok := s[c.series]
		if !ok {
			problems = append(problems, c.series+" missing")
		} else if !c.ok(v) {
			problems = append(problems, fmt.Sprintf("%s = %v, want %s", c.series, v, c.want))
		}
	}
	buildInfo := false
	for series := range s {
		buildInfo = buildInfo || strings.HasPrefix(series, "worldid_build_info{")
		if strings.Contains(series, `route="GET `) || strings.Contains(series, `route="POST `) {
			problems = append(problems, "a route label in another style: "+series)
		}
	}
	if !buildInfo {
		problems = append(problems, "worldid_build_info missing")
	}
	return problems
}

func positive(v float64) bool { return v > 0 }
