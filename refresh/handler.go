package refresh

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/secp256k1/ecdsa"

	"worldid/babyjub"
	"worldid/credential"
	"worldid/internal/httpapi"
	"worldid/internal/leaf/ratelimit"
	"worldid/record"
	"worldid/semaphore"
)

// Path is where Register serves the endpoint.
const Path = "/api/v1/refresh"

// proofKeyPrefix marks this endpoint's keys in Store.UseProofOnce.
const proofKeyPrefix = "refresh:"

// Defaults for the zero values of Options.
const (
	defaultSchemaID    = 1
	defaultValidity    = 3 * 365 * 24 * time.Hour
	defaultProofWindow = 300 * time.Second
	defaultMaxRateKeys = 100_000
	// maxReplicaSkew is the largest clock difference between replicas
	// sharing a store that the replay protection tolerates: a spent proof
	// is remembered for the window plus this much, so a replica whose
	// clock runs behind the one that recorded it, and therefore still
	// finds the timestamp inside its window, cannot accept it again.
	// Replicas kept by NTP differ by milliseconds; a minute is generous.
	maxReplicaSkew = 60 * time.Second
)

var (
	defaultPerIP     = Rate{Burst: 30, Every: 2 * time.Second}
	defaultPerIDComm = Rate{Burst: 5, Every: 12 * time.Minute}
)

// Rate is a token bucket (internal/leaf/ratelimit): Burst requests at
// once, refilled at one token every Every. A zero Burst disables it.
type Rate = ratelimit.Rate

// Store is the storage the endpoint needs. Identity commitments and subs
// are canonical "0x" + 64 lowercase hex strings.
type Store interface {
	// RefreshEnabled reports whether the operator has enabled refresh.
	RefreshEnabled(ctx context.Context) (bool, error)
	// Signup returns the enrollment record of idComm, or record.ErrNotFound.
	Signup(ctx context.Context, idComm string) (record.Signup, error)
	// PinnedSub returns the sub pinned to idComm by its first refresh, or
	// record.ErrNotFound.
	PinnedSub(ctx context.Context, idComm string) (string, error)
	// OrbKeys returns the trusted PEM keys of an Orb (none when unknown).
	OrbKeys(ctx context.Context, orbID string) ([]string, error)
	// UseProofOnce atomically remembers a proof key until expiresAt;
	// record.ErrExists if it is already remembered (a replay). Keys of
	// this endpoint start with "refresh:", so the store may share the
	// table with other proofs used once. The handler calls it only for a
	// repeat refresh that returns the credential already held.
	UseProofOnce(ctx context.Context, key string, expiresAt time.Time) error
	// RecordRefresh atomically stores r, pinning r.Sub to r.IDCommitment
	// if none is pinned, binding r.PCPDigest (when set) to it and
	// remembering r.ProofKey as UseProofOnce does. It fails with
	// record.ErrSubMismatch if another sub is pinned,
	// record.ErrPCPReused if the digest is bound to another commitment and
	// record.ErrExists if the proof key was used; then nothing is written.
	RecordRefresh(ctx context.Context, r record.Refresh) error
	// Refreshes returns the refreshes recorded for idComm, oldest first.
	Refreshes(ctx context.Context, idComm string) ([]record.Refresh, error)
}

// Options configures the endpoint. Zero values take the defaults noted.
type Options struct {
	Store Store
	// VerifyingKey is the local Semaphore key (doc/design.md §6) that verifies
	// x-zkp-proof; it must be for a depth-30 tree.
	VerifyingKey *semaphore.VerifyingKey
	IssuerKey    *babyjub.PrivateKey
	SchemaID     uint64        // issuer_schema_id; default 1
	Validity     time.Duration // expires_at − issuance; default 3 years
	ProofWindow  time.Duration // accepted x-zkp-proof timestamp skew; default 300 s
	// PerIP and PerIDComm are the token buckets of the rate limits; a zero
	// Rate takes the default (30 burst, 1 per 2 s per IP; 5 burst, 1 per
	// 12 min per idComm), a negative Burst disables the limit.
	PerIP, PerIDComm Rate
	MaxRateKeys      int // keys each limiter (and the one-leaf root cache) tracks; default 100 000
	// ProofChecks bounds the x-zkp-proof checks running at once (default:
	// GOMAXPROCS−1, at least 1); a proof that cannot start within
	// ProofWait (default 2 s) is answered 503 with Retry-After (lane.go).
	ProofChecks int
	ProofWait   time.Duration
	// Reissue lets an identity that holds a credential get a new one on
	// every refresh. Off (the default), a repeat refresh returns the
	// credential issued first (doc/interfaces.md: not a general re-issuance
	// endpoint).
	Reissue bool
	Now     func() time.Time // default time.Now
	Rand    io.Reader        // credential ids, safe for concurrent use; default crypto/rand.Reader
	Log     *slog.Logger     // default: discard
	// Observe, if set, is called once per request with its outcome:
	// "success" or the answer's error code.
	Observe func(outcome string)
}

// Handler serves POST /api/v1/refresh.
type Handler struct {
	o            Options
	issuer       *babyjub.PublicKey
	extNullifier fr.Element
	perIP        *ratelimit.Limiter
	perIDComm    *ratelimit.Limiter
	roots        *rootCache
	lane         *proofLane
}

// New checks o and fills its defaults.
func New(o Options) (*Handler, error) {
	switch {
	case o.Store == nil:
		return nil, errors.New("refresh: Options.Store is nil")
	case o.VerifyingKey == nil:
		return nil, errors.New("refresh: Options.VerifyingKey is nil")
	case o.IssuerKey == nil:
		return nil, errors.New("refresh: Options.IssuerKey is nil")
	}
	o.SchemaID = cmp.Or(o.SchemaID, defaultSchemaID)
	o.Validity = cmp.Or(o.Validity, defaultValidity)
	o.ProofWindow = cmp.Or(o.ProofWindow, defaultProofWindow)
	o.MaxRateKeys = cmp.Or(o.MaxRateKeys, defaultMaxRateKeys)
	o.PerIP = cmp.Or(o.PerIP, defaultPerIP)
	o.PerIDComm = cmp.Or(o.PerIDComm, defaultPerIDComm)
	o.ProofChecks = cmp.Or(o.ProofChecks, defaultProofChecks())
	o.ProofWait = cmp.Or(o.ProofWait, defaultProofWait)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Observe == nil {
		o.Observe = func(string) {}
	}
	if o.Validity < 0 || o.ProofWindow < 0 || o.ProofChecks < 0 || o.ProofWait < 0 {
		return nil, errors.New("refresh: Validity, ProofWindow, ProofChecks and ProofWait must not be negative")
	}
	for _, r := range []Rate{o.PerIP, o.PerIDComm} {
		if r.Burst > 0 && r.Every <= 0 {
			return nil, errors.New("refresh: a rate limit needs a positive Every")
		}
	}
	return &Handler{
		o:            o,
		issuer:       o.IssuerKey.Public(),
		extNullifier: semaphore.ExternalNullifier(record.RefreshProofAppID, record.RefreshProofAction),
		perIP:        ratelimit.New(o.PerIP, o.MaxRateKeys),
		perIDComm:    ratelimit.New(o.PerIDComm, o.MaxRateKeys),
		roots:        newRootCache(o.MaxRateKeys),
		lane:         newProofLane(o.ProofChecks, o.ProofWait),
	}, nil
}

// ProofLane reports the x-zkp-proof checks running now and the requests
// waiting for one to finish (Options.ProofChecks).
func (h *Handler) ProofLane() (checking, waiting int) {
	return len(h.lane.slots), int(h.lane.waiting.Load())
}

// Register serves the endpoint on mux at Path, for every method so that
// a wrong one gets the JSON error body.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.Handle(Path, h)
	mux.Handle("GET "+IssuerPath, h.serveIssuer(h.issuerDocument()))
}

// response is the success body (doc/interfaces.md §4.2).
type response struct {
	Success    bool   `json:"success"`
	Credential string `json:"credential"`
	Message    string `json:"message"`
}

// ServeHTTP runs the checks of doc/design.md §7 in order.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp, err := h.refresh(w, r)
	if err != nil {
		h.o.Observe(writeError(w, r, h.o.Log, err))
		return
	}
	h.o.Observe("success")
	httpapi.WriteJSON(w, http.StatusOK, resp)
}

func (h *Handler) refresh(w http.ResponseWriter, r *http.Request) (*response, error) {
	ctx := r.Context()
	if err := h.checkEnabled(ctx); err != nil {
		return nil, err
	}
	env, perr := parseEnvelope(w, r)
	if perr != nil {
		return nil, perr
	}
	now := h.o.Now()
	// Everyone spends their source's budget; only a verified proof spends
	// the identity's, so strangers naming a public idComm cannot lock its
	// holder out. The proof is in the header and is checked before the
	// body is read.
	if err := limited(h.perIP, env.client, now); err != nil {
		return nil, err
	}
	z, key, err := h.checkProof(ctx, env, now)
	if err != nil {
		return nil, err
	}
	if err := limited(h.perIDComm, env.idCommID, now); err != nil {
		return nil, err
	}
	f, perr := parseForm(w, r, env.boundary)
	if perr != nil {
		return nil, perr
	}
	if perr := z.matchForm(f); perr != nil {
		return nil, perr
	}
	signup, err := h.o.Store.Signup(ctx, env.idCommID)
	if errors.Is(err, record.ErrNotFound) {
		return nil, newError(http.StatusNotFound, CodeNoSignupRecord, "no enrollment record for idComm: enroll again at an Orb")
	} else if err != nil {
		return nil, err
	}
	if err := h.checkPinnedSub(ctx, env, f); err != nil {
		return nil, err
	}
	claim0, err := h.claim0(ctx, env, f, signup, now)
	if err != nil {
		return nil, err
	}
	spent := spentProof{key: proofKeyPrefix + key, expires: h.spentUntil(z.timestamp)}
	return h.issue(ctx, env, f, claim0, spent, now)
}

// spentUntil is how long a proof with the given timestamp is remembered
// as spent: until it leaves the window on every replica (maxReplicaSkew).
func (h *Handler) spentUntil(timestamp int64) time.Time {
	return time.Unix(timestamp, 0).Add(h.o.ProofWindow + maxReplicaSkew)
}

func (h *Handler) checkEnabled(ctx context.Context) error {
	on, err := h.o.Store.RefreshEnabled(ctx)
	if err != nil {
		return err
	}
	if !on {
		return newError(http.StatusServiceUnavailable, "", "credential refresh is disabled")
	}
	return nil
}

// limited takes a token from key's bucket of l.
func limited(l *ratelimit.Limiter, key string, now time.Time) error {
	if wait, ok := l.Allow(key, now); !ok {
		return &Error{Status: http.StatusTooManyRequests, Code: CodeRateLimitExceeded,
			Message: "refresh rate limit exceeded; retry later", RetryAfter: ratelimit.RetryAfter(wait)}
	}
	return nil
}

// checkProof decodes and verifies x-zkp-proof, in the proof lane, and
// returns it with its replay key. Nothing is written: the key is
// remembered only with the success it authorizes (issue.go), so a failed
// request costs no write.
func (h *Handler) checkProof(ctx context.Context, env *envelope, now time.Time) (*zkpProof, string, error) {
	z, perr := decodeZKPProof(env.proof)
	if perr != nil {
		return nil, "", perr
	}
	release, err := h.lane.enter(ctx)
	if err != nil {
		return nil, "", err
	}
	defer release()
	pc := proofCheck{vk: h.o.VerifyingKey, extNullifier: h.extNullifier, window: h.o.ProofWindow, now: now, roots: h.roots}
	key, perr := pc.verify(z, env)
	if perr != nil {
		return nil, "", perr
	}
	return z, key, nil
}

// checkPinnedSub answers SUB_MISMATCH early; RecordRefresh enforces the
// pin atomically.
func (h *Handler) checkPinnedSub(ctx context.Context, env *envelope, f *form) error {
	pinned, err := h.o.Store.PinnedSub(ctx, env.idCommID)
	switch {
	case errors.Is(err, record.ErrNotFound):
		return nil
	case err != nil:
		return err
	case pinned != f.subID:
		return subMismatch()
	}
	return nil
}

func subMismatch() *Error {
	return newError(http.StatusBadRequest, CodeSubMismatch, "sub differs from the one used in previous refreshes")
}

// claim0 validates the PCP, if any, and returns claims[0] (doc/crypto.md §h).
func (h *Handler) claim0(ctx context.Context, env *envelope, f *form, signup record.Signup, now time.Time) (fr.Element, error) {
	if len(f.pcp) == 0 {
		return credential.RefreshClaim(env.idComm, f.sub, uint64(now.Unix())), nil
	}
	if len(f.pcp) != len(pcpParts) {
		return fr.Element{}, pcpFailed("partial", "a PCP refresh needs all of its fields; missing: "+f.pcp.missing())
	}
	keys, err := h.orbKeys(ctx, f.pcp.orbID())
	if err != nil {
		return fr.Element{}, err
	}
	if perr := validatePCP(f.pcp, keys); perr != nil {
		return fr.Element{}, perr
	}
	if string(f.pcp["signup_id"]) != signup.SignupID {
		return fr.Element{}, pcpFailed("signup_id", "signup_id is not the enrollment record's")
	}
	return credential.ClaimFromBytes(f.pcp[partHashesJSON])
}

// orbKeys parses the trusted keys of an Orb. A stored key that does not
// parse is skipped and logged: it can verify nothing.
func (h *Handler) orbKeys(ctx context.Context, orbID string) ([]*ecdsa.PublicKey, error) {
	pems, err := h.o.Store.OrbKeys(ctx, orbID)
	if err != nil {
		return nil, err
	}
	keys := make([]*ecdsa.PublicKey, 0, len(pems))
	for _, p := range pems {
		k, err := ParseOrbKeyPEM([]byte(p))
		if err != nil {
			h.o.Log.Error("refresh: stored orb key does not parse", "orb_id", orbID, "err", err)
			continue
		}
		keys = append(keys, k)
	}
	return keys, nil
}
