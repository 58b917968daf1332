package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"worldid/record"
)

// defaultConnectTimeout bounds each connection attempt when the connection
// string sets no connect_timeout, so that an unreachable server fails Open
// and requests instead of hanging.
const defaultConnectTimeout = 10 * time.Second

// Every call has a deadline, so that a server that stops answering on an
// open connection (frozen, partitioned) costs a request a few seconds and
// a 503, never a hang, and always before the HTTP write timeout (30 s,
// doc/design.md §8) cuts the answer off. A connection attempt inside a call
// counts against it.
const (
	// callTimeout bounds a call a request makes.
	callTimeout = 5 * time.Second
	// A batch a request writes in one statement or transaction
	// (AppendLeaves, PutSignups, ImportApps: at most 1000 rows) gets
	// callTimeout and rowTimeout a row, at most maxRequestTimeout; so
	// does reading a shared file (a few MiB) for a backup.
	rowTimeout        = 5 * time.Millisecond
	maxRequestTimeout = 20 * time.Second
	// bulkTimeout bounds what no request waits for: Open and its
	// migrations, storing a shared file at start, and the background
	// PruneExpired, which after a long outage may have much to delete.
	bulkTimeout = time.Minute
	// healthTimeout bounds Health's round trip.
	healthTimeout = 2 * time.Second
)

// batchTimeout is the deadline of a call that writes n rows.
func batchTimeout(n int) time.Duration {
	return min(callTimeout+time.Duration(n)*rowTimeout, maxRequestTimeout)
}

// errCallTimeout is the cause of a call's own deadline, which classify
// tells from the caller's.
var errCallTimeout = errors.New("store: PostgreSQL did not answer in time")

// DB is an open PostgreSQL store. Its methods are safe for concurrent use.
type DB struct {
	pool *pgxpool.Pool
	// afterFunc arms the timer of a step deadline: time.AfterFunc, or a
	// test's clock.
	afterFunc func(time.Duration, func()) stepTimer
}

// stepTimer is what a stepDeadline needs of a *time.Timer.
type stepTimer interface {
	Reset(time.Duration) bool
	Stop() bool
}

func afterFunc(d time.Duration, f func()) stepTimer { return time.AfterFunc(d, f) }

// Open connects to the database the connection string names (a
// postgres:// URL or key=value pairs, as libpq), checks that it answers,
// and applies the embedded schema migrations it lacks. Pool settings such
// as pool_max_conns may be given in the connection string. Errors name the
// server's address but never the password.
func Open(ctx context.Context, connString string) (*DB, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, bulkTimeout, errCallTimeout)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("store: invalid PostgreSQL connection string: %s", parseErrorText(err))
	}
	return open(ctx, cfg)
}

func open(ctx context.Context, cfg *pgxpool.Config) (*DB, error) {
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	// The constraint patterns (ON CONFLICT, then a fresh statement that sees
	// the winner) rely on a new snapshot per statement.
	cfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "read committed"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: PostgreSQL at %s: %w", address(cfg.ConnConfig), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: cannot reach PostgreSQL at %s: %w", address(cfg.ConnConfig), err)
	}
	if err := migrate(ctx, cfg.ConnConfig); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: PostgreSQL at %s: %w", address(cfg.ConnConfig), err)
	}
	return &DB{pool: pool, afterFunc: afterFunc}, nil
}

// Close closes every connection, waiting for those in use to be released.
// It returns nil; the error result matches the JSON store's Close.
func (db *DB) Close() error {
	db.pool.Close()
	return nil
}

// deadline bounds ctx by d, with errCallTimeout as the cause.
func (db *DB) deadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, errCallTimeout)
}

// stepDeadline bounds each wait for the database within an operation of
// any length (Leaves, Export, Restore) by callTimeout, rather than the
// whole operation: it proceeds while PostgreSQL answers and fails within
// callTimeout, with errCallTimeout as the cause, once it stops. Time spent
// between waits (emitting rows to a slow client, reading a backup file)
// does not count.
type stepDeadline struct {
	timer stepTimer
}

// withStepDeadline returns ctx under a stepDeadline that is waiting: an
// operation begins with a call.
func (db *DB) withStepDeadline(ctx context.Context) (context.Context, *stepDeadline, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	d := &stepDeadline{timer: db.afterFunc(callTimeout, func() { cancel(errCallTimeout) })}
	return ctx, d, func() { d.timer.Stop(); cancel(nil) }
}

// waiting starts a wait for the database, or restarts it after progress.
func (d *stepDeadline) waiting() { d.timer.Reset(callTimeout) }

// idle ends a wait: the operation works on its own until waiting.
func (d *stepDeadline) idle() { d.timer.Stop() }

// Health reports whether the server answers a round trip within
// healthTimeout: nil, or an error wrapping record.ErrUnavailable.
func (db *DB) Health(ctx context.Context) error {
	ctx, cancel := db.deadline(ctx, healthTimeout)
	defer cancel()
	return db.fail(ctx, db.pool.Ping(ctx))
}

// query runs sql; an error is reported by the rows (pgx.CollectRows and
// pgx.CollectOneRow return it).
func (db *DB) query(ctx context.Context, sql string, args ...any) pgx.Rows {
	rows, _ := db.pool.Query(ctx, sql, args...)
	return rows
}

// address is host:port of the first server the configuration names.
func address(c *pgx.ConnConfig) string {
	return net.JoinHostPort(c.Host, fmt.Sprint(c.Port))
}

// parseErrorText describes why a connection string did not parse without
// echoing it: pgx redacts passwords only on a best-effort basis, so only
// the innermost cause (which names the offending part) is kept.
func parseErrorText(err error) string {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return err.Error()
	}
	cause := errors.Unwrap(pe)
	if cause == nil {
		// No cause: the string parsed, and its redaction is reliable.
		return pe.Error()
	}
	for inner := errors.Unwrap(cause); inner != nil; inner = errors.Unwrap(inner) {
		cause = inner
	}
	return cause.Error()
}

// SQLSTATE codes the store interprets.
const (
	uniqueViolation      = "23505"
	readOnlyTransaction  = "25006" // a hot standby: writes cannot be accepted
	invalidByteSequence  = "22021" // text PostgreSQL cannot hold (U+0000, bad UTF-8)
	adminShutdown        = "57P01"
	crashShutdown        = "57P02"
	cannotConnectNow     = "57P03"
	connectionException  = "08" // class
	insufficientResource = "53" // class: disk full, out of memory, too many connections
	systemError          = "58" // class: I/O errors
)

// classify maps an error of pgx to the store's vocabulary: a unique
// violation wraps record.ErrExists; a lost, refused or read-only server
// wraps record.ErrUnavailable (and the cause), so that handlers answer 503.
// The caller's context error passes through once it is done; the call's
// own deadline (errCallTimeout) and, before, a context error, which is
// pgx's connect timeout, mean an unreachable server. Anything else passes
// through.
func classify(ctx context.Context, err error) error {
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pgErr) && pgErr.Code == uniqueViolation:
		return fmt.Errorf("store: %s: %s: %w", pgErr.TableName, strings.TrimSuffix(pgErr.Detail, "."), record.ErrExists)
	case ctx.Err() != nil && context.Cause(ctx) == errCallTimeout:
		return fmt.Errorf("store: %w: %w (%w)", record.ErrUnavailable, errCallTimeout, err)
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	case unavailable(err):
		return fmt.Errorf("store: %w: %w", record.ErrUnavailable, err)
	}
	return err
}

// fail is classify for the methods. After an unavailable error it also
// closes every idle connection, which would most likely fail the same way:
// once the server is back, the next call connects afresh instead of
// failing on another stale connection.
func (db *DB) fail(ctx context.Context, err error) error {
	err = classify(ctx, err)
	if errors.Is(err, record.ErrUnavailable) {
		db.pool.Reset()
	}
	return err
}

// unavailable reports whether err means that the server cannot be used
// right now: the connection failed or broke, or the server refuses work it
// would normally do.
func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case readOnlyTransaction, adminShutdown, crashShutdown, cannotConnectNow:
			return true
		}
		switch pgErr.Code[:2] {
		case connectionException, insufficientResource, systemError:
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		pgconn.SafeToRetry(err) // never sent: the connection was already broken
}

// failRead is fail for a read of one record by key: no row, or a key that
// PostgreSQL text cannot hold and that therefore was never stored, wraps
// record.ErrNotFound.
func (db *DB) failRead(ctx context.Context, what string, err error) error {
	if errors.Is(err, pgx.ErrNoRows) || unstorable(err) {
		return fmt.Errorf("store: %s: %w", what, record.ErrNotFound)
	}
	return db.fail(ctx, err)
}

// unstorable reports whether err says a parameter is text PostgreSQL
// cannot hold, which therefore equals nothing stored.
func unstorable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == invalidByteSequence
}

// The range of a stored time other than the zero time: int64 nanoseconds
// since the Unix epoch, except math.MinInt64, which stands for the zero
// time.
var (
	minTime = time.Unix(0, math.MinInt64+1)
	maxTime = time.Unix(0, math.MaxInt64)
)

// zeroTime stores the zero time.Time (Go's "unset"): outside the range of
// the other times and below them all, as in Go.
const zeroTime = math.MinInt64

// unixNano is a time as stored: bigint nanoseconds since the Unix epoch.
// It keeps the instant exactly, as the JSON store's RFC 3339 text does;
// reads return UTC.
type unixNano time.Time

// Int64Value encodes t for pgx, refusing a time outside 1677-2262 other
// than the zero time.
func (t unixNano) Int64Value() (pgtype.Int8, error) {
	tt := time.Time(t)
	switch {
	case tt.IsZero():
		return pgtype.Int8{Int64: zeroTime, Valid: true}, nil
	case tt.Before(minTime) || tt.After(maxTime):
		return pgtype.Int8{}, fmt.Errorf("store: time %v is outside the PostgreSQL store's range (%v to %v)", tt, minTime.UTC(), maxTime.UTC())
	}
	return pgtype.Int8{Int64: tt.UnixNano(), Valid: true}, nil
}

// ScanInt64 decodes a stored time.
func (t *unixNano) ScanInt64(v pgtype.Int8) error {
	switch {
	case !v.Valid:
		return errors.New("store: NULL time")
	case v.Int64 == zeroTime:
		*t = unixNano{}
	default:
		*t = unixNano(time.Unix(0, v.Int64).UTC())
	}
	return nil
}

// bound is t as a comparison bound: clamped to the stored range, which
// keeps every comparison with a stored time exact (the zero time included,
// for any t from year 1 on).
func bound(t time.Time) int64 {
	switch {
	case t.Before(minTime):
		return math.MinInt64
	case t.After(maxTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}
