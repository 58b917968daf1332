package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"worldid/store/postgres/pgtest"

	"github.com/jackc/pgx/v5/pgxpool"

	"worldid/backup"
	"worldid/record"
)

const secret = "s3cret-pw-9f2c"

// freePort returns a local TCP port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestOpenUnreachable(t *testing.T) {
	port := freePort(t)
	_, err := Open(context.Background(), fmt.Sprintf("postgres://worldid:%s@127.0.0.1:%d/worldid?connect_timeout=5", secret, port))
	want := fmt.Sprintf("store: cannot reach PostgreSQL at 127.0.0.1:%d: ", port)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Open of a closed port: %v; want %q…", err, want)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the error shows the password: %v", err)
	}
}

func TestOpenInvalidConnString(t *testing.T) {
	for _, dsn := range []string{
		"postgres://worldid:" + secret + "@127.0.0.1:notaport/worldid",
		"postgres://worldid:" + secret + "@127.0.0.1/worldid?sslmode=bogus",
		"postgres://worldid:" + secret + "@[::1/worldid",
		"host=127.0.0.1 password=" + secret + " port=x",
		"host=127.0.0.1 password='" + secret + " port=5432",
	} {
		_, err := Open(context.Background(), dsn)
		if err == nil || !strings.HasPrefix(err.Error(), "store: invalid PostgreSQL connection string: ") {
			t.Errorf("Open(%q) = %v; want an invalid connection string error", dsn, err)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("Open(%q): the error shows the password: %v", dsn, err)
		}
	}
}

func TestOpenWrongPassword(t *testing.T) {
	dsn := withPassword(t, pgtest.DSN(t), secret)
	_, err := Open(context.Background(), dsn)
	if err == nil || !strings.Contains(err.Error(), "store: cannot reach PostgreSQL at ") {
		t.Fatalf("Open with a wrong password: %v", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the error shows the password: %v", err)
	}
}

// withPassword replaces the password of a URL connection string.
func withPassword(t *testing.T, dsn, password string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		t.Skipf("%s is not a URL with a user: cannot replace its password", pgtest.EnvVar)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String()
}

// A search_path naming no schema leaves the migrations nowhere to create
// their tables: Open says so.
func TestOpenMisconfiguredSchema(t *testing.T) {
	dsn := pgtest.WithParam(t, pgtest.DSN(t), "search_path", "worldid_test_missing_"+pgtest.RandomHex(t))
	_, err := Open(context.Background(), dsn)
	if err == nil || !strings.Contains(err.Error(), "schema_migrations") || !strings.Contains(err.Error(), "no schema has been selected") {
		t.Fatalf("Open with a missing schema: %v", err)
	}
}

// proxy forwards TCP connections to a PostgreSQL server; stop drops the
// listener and every connection, as a server going away does.
type proxy struct {
	t      *testing.T
	addr   string // where it listens
	target string // where it forwards
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
	gate   pgtest.Gate
	wg     sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, addr: "127.0.0.1:0", target: target}
	p.start(true)
	p.addr = p.ln.Addr().String()
	t.Cleanup(p.stop)
	return p
}

// start listens again; without forward it accepts connections and leaves
// them unanswered, as a network partition does.
func (p *proxy) start(forward bool) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy: %v", err)
	}
	p.mu.Lock()
	p.ln, p.conns = ln, map[net.Conn]bool{}
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			if !forward {
				p.mu.Lock()
				p.conns[client] = true
				p.mu.Unlock()
				continue
			}
			server, err := net.Dial("tcp", p.target)
			if err != nil {
				client.Close()
				continue
			}
			p.mu.Lock()
			p.conns[client], p.conns[server] = true, true
			p.mu.Unlock()
			p.wg.Go(func() { p.gate.Pipe(server, client) })
			p.wg.Go(func() { p.gate.Pipe(client, server) })
		}
	})
}

func (p *proxy) stop() {
	p.gate.Thaw()
	p.mu.Lock()
	p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// openThroughProxy opens a store on a fresh schema, connecting through a
// proxy that the test can stop and restart.
func openThroughProxy(t *testing.T) (*DB, *proxy) {
	cfg, err := pgxpool.ParseConfig(pgtest.FreshSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(cfg.ConnConfig.Host, "/") {
		t.Skipf("%s names a Unix socket: the outage test needs TCP", pgtest.EnvVar)
	}
	p := startProxy(t, address(cfg.ConnConfig))
	host, port, _ := net.SplitHostPort(p.addr)
	cfg.ConnConfig.Host = host
	fmt.Sscan(port, &cfg.ConnConfig.Port)
	cfg.ConnConfig.Fallbacks = nil
	cfg.ConnConfig.ConnectTimeout = time.Second
	cfg.MaxConns = 32
	db, err := open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open through proxy: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, p
}

// A server that goes away or stops answering makes every method fail with
// ErrUnavailable; when it is back the store works again, without a restart.
func TestServerGoesAway(t *testing.T) {
	db, p := openThroughProxy(t)
	ctx := context.Background()
	a := record.App{ID: "app_1", RPID: "rp_1", CreatedAt: time.Unix(1, 0)}
	if err := db.CreateApp(ctx, a); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"Health":    func() error { return db.Health(ctx) },
		"App":       func() error { _, err := db.App(ctx, a.ID); return err },
		"CreateApp": func() error { return db.CreateApp(ctx, record.App{ID: "app_2", RPID: "rp_2"}) },
		"RecordVerification": func() error {
			_, err := db.RecordVerification(ctx, "rp_1", "a", "staging", "0x01", time.Now())
			return err
		},
		"AppendLeaf": func() error { _, err := db.AppendLeaf(ctx, "orb/staging", "0x01", time.Now()); return err },
		"RecordRefresh": func() error {
			c := "0x" + strings.Repeat("1", 64)
			return db.RecordRefresh(ctx, record.Refresh{IDCommitment: c, Sub: c, At: time.Unix(1, 0)})
		},
	}
	// Gone: pooled connections break, new ones are refused.
	p.stop()
	for name, call := range calls {
		if err := call(); !errors.Is(err, record.ErrUnavailable) {
			t.Errorf("%s while the server is gone: %v, want ErrUnavailable", name, err)
		}
	}
	// Silent: new connections time out (one call suffices: each waits a
	// connect timeout).
	p.start(false)
	if err := calls["App"](); !errors.Is(err, record.ErrUnavailable) {
		t.Errorf("App while the server does not answer: %v, want ErrUnavailable", err)
	}
	p.stop()
	p.start(true)
	if got, err := db.App(ctx, a.ID); err != nil || got.RPID != a.RPID {
		t.Fatalf("App after the server is back: %+v, %v", got, err)
	}
	if err := db.CreateApp(ctx, record.App{ID: "app_2", RPID: "rp_2"}); err != nil {
		t.Fatalf("CreateApp after the server is back: %v", err)
	}
	if err := db.Health(ctx); err != nil {
		t.Fatalf("Health after the server is back: %v", err)
	}
}

// A server that hangs (frozen, as by SIGSTOP: connections stay open but
// nothing comes back) makes every call fail with ErrUnavailable within its
// deadline, Health included; once it answers again the store works again.
func TestServerHangs(t *testing.T) {
	db, p := openThroughProxy(t)
	ctx := context.Background()
	if err := db.CreateApp(ctx, record.App{ID: "app_1", RPID: "rp_1", CreatedAt: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := db.Health(ctx); err != nil {
		t.Fatalf("Health: %v", err)
	}
	calls := map[string]func() error{
		"Health":    func() error { return db.Health(ctx) },
		"App":       func() error { _, err := db.App(ctx, "app_1"); return err },
		"CreateApp": func() error { return db.CreateApp(ctx, record.App{ID: "app_2", RPID: "rp_2"}) },
		"RecordVerification": func() error {
			_, err := db.RecordVerification(ctx, "rp_1", "a", "staging", "0x01", time.Now())
			return err
		},
		"SigninProgress": func() error { _, err := db.SigninProgress(ctx, "r1"); return err },
		"Leaves":         func() error { _, err := db.Leaves(ctx, "orb/staging", 0); return err },
		"Export":         func() error { return db.Export(ctx, func(string, any) error { return nil }) },
		"Restore": func() error {
			return db.Restore(ctx, true, func(backup.Emit) error { return nil }, nil)
		},
	}
	// The batches a request writes: their deadline grows with the batch,
	// and stays below the HTTP write timeout.
	const batch = 800
	batches := map[string]func() error{
		"AppendLeaves": func() error {
			cs := make([]string, batch)
			for i := range cs {
				cs[i] = fmt.Sprintf("0x%064x", i+1)
			}
			_, err := db.AppendLeaves(ctx, "orb/staging", cs, time.Now())
			return err
		},
		"PutSignups": func() error {
			ss := make([]record.Signup, batch)
			for i := range ss {
				ss[i] = record.Signup{IDCommitment: fmt.Sprintf("0x%064x", i+1), SignupID: "s", VerifiedAt: time.Now()}
			}
			return db.PutSignups(ctx, ss)
		},
		"ImportApps": func() error {
			apps := make([]record.App, batch)
			for i := range apps {
				apps[i] = record.App{ID: fmt.Sprintf("app_%032x", i+2), RPID: fmt.Sprintf("rp_%016x", i+2)}
			}
			return db.ImportApps(ctx, apps, false)
		},
	}
	if batchTimeout(batch) >= 30*time.Second || batchTimeout(1<<20) >= 30*time.Second {
		t.Fatalf("a batch deadline reaches the HTTP write timeout: %v, %v", batchTimeout(batch), batchTimeout(1<<20))
	}
	// Every call is to hang on an open connection, as when the server
	// freezes under load; a new connection fails at connect_timeout.
	openConns(t, db, len(calls)+len(batches)+1)
	p.gate.Freeze()
	var wg sync.WaitGroup
	hangs := func(calls map[string]func() error, bound time.Duration) {
		for name, call := range calls {
			wg.Go(func() {
				start := time.Now()
				err := call()
				if took := time.Since(start); !errors.Is(err, record.ErrUnavailable) || took > bound+2*time.Second {
					t.Errorf("%s on a hung server: %v after %v, want ErrUnavailable within %v", name, err, took, bound)
				}
			})
		}
	}
	hangs(calls, callTimeout)
	hangs(batches, batchTimeout(batch))
	hangs(map[string]func() error{"SharedFile": func() error { _, _, err := db.SharedFile(ctx, "f"); return err }}, maxRequestTimeout)
	wg.Wait()
	p.gate.Thaw()
	if got, err := db.App(ctx, "app_1"); err != nil || got.RPID != "rp_1" {
		t.Fatalf("App after the server answers again: %+v, %v", got, err)
	}
	if err := db.Health(ctx); err != nil {
		t.Fatalf("Health after the server answers again: %v", err)
	}
}

// openConns leaves n idle connections in db's pool.
func openConns(t *testing.T, db *DB, n int) {
	conns := make([]*pgxpool.Conn, n)
	for i := range conns {
		c, err := db.pool.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		c.Release()
	}
}

// stepClock replaces time.AfterFunc under step deadlines: expire does
// what callTimeout passing would, firing every timer armed at that moment.
type stepClock struct {
	mu     sync.Mutex
	timers []*stepClockTimer
}

type stepClockTimer struct {
	clock *stepClock
	fire  func()
	armed bool
}

func (c *stepClock) afterFunc(_ time.Duration, fire func()) stepTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &stepClockTimer{clock: c, fire: fire, armed: true}
	c.timers = append(c.timers, tm)
	return tm
}

func (tm *stepClockTimer) set(armed bool) bool {
	tm.clock.mu.Lock()
	defer tm.clock.mu.Unlock()
	was := tm.armed
	tm.armed = armed
	return was
}

func (tm *stepClockTimer) Reset(time.Duration) bool { return tm.set(true) }
func (tm *stepClockTimer) Stop() bool               { return tm.set(false) }

// expire fires the armed timers and returns how many there were.
func (c *stepClock) expire() int {
	c.mu.Lock()
	var due []*stepClockTimer
	for _, tm := range c.timers {
		if tm.armed {
			tm.armed = false
			due = append(due, tm)
		}
	}
	c.mu.Unlock()
	for _, tm := range due {
		tm.fire()
	}
	return len(due)
}

// A backup's deadline bounds each wait for the database, not the time its
// consumer or producer takes: callTimeout passing while an Export's emit or
// a Restore's load works fires no deadline, and both succeed.
func TestBackupStepDeadline(t *testing.T) {
	db, _ := openFresh(t)
	ctx := context.Background()
	if err := db.CreateApp(ctx, record.App{ID: "app_1", RPID: "rp_1", RedirectURIs: []string{}, CreatedAt: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	target, _ := openFresh(t)
	var clock stepClock
	db.afterFunc, target.afterFunc = clock.afterFunc, clock.afterFunc
	fired := 0
	if err := db.Export(ctx, func(string, any) error { fired += clock.expire(); return nil }); err != nil {
		t.Errorf("Export with a slow consumer: %v", err)
	}
	err := target.Restore(ctx, false, func(emit backup.Emit) error {
		fired += clock.expire()
		return emit(backup.TableApps, record.App{ID: "app_2", RPID: "rp_2", RedirectURIs: []string{}})
	}, nil)
	if err != nil {
		t.Errorf("Restore with a slow producer: %v", err)
	}
	if fired != 0 {
		t.Errorf("%d step deadlines were running while the consumer or producer worked", fired)
	}
	if len(clock.timers) < 2 {
		t.Fatalf("%d step deadlines armed: the test clock is not in use", len(clock.timers))
	}
}

// A caller's own deadline still passes through as the context's error.
func TestCallerDeadlinePassesThrough(t *testing.T) {
	db, p := openThroughProxy(t)
	p.gate.Freeze()
	defer p.gate.Thaw()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := db.App(ctx, "app_1"); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("App with an expired caller deadline: %v, want context.DeadlineExceeded", err)
	}
}

// Keys PostgreSQL text cannot hold were never stored: reads find nothing,
// writes fail without claiming anything.
func TestUnstorableText(t *testing.T) {
	db, _ := openFresh(t)
	ctx := context.Background()
	for _, key := range []string{"a\x00b", "a\xffb"} {
		reads := map[string]func() error{
			"App":              func() error { _, err := db.App(ctx, key); return err },
			"AppByRP":          func() error { _, err := db.AppByRP(ctx, key); return err },
			"SigninProgress":   func() error { _, err := db.SigninProgress(ctx, key); return err },
			"RedeemCode":       func() error { _, err := db.RedeemCode(ctx, key, record.CodeBinding{}, time.Now()); return err },
			"DeleteSigningKey": func() error { return db.DeleteSigningKey(ctx, key) },
			"Signup":           func() error { _, err := db.Signup(ctx, key); return err },
			"PinnedSub":        func() error { _, err := db.PinnedSub(ctx, key); return err },
		}
		for name, read := range reads {
			if err := read(); !errors.Is(err, record.ErrNotFound) {
				t.Errorf("%s(%q): %v, want ErrNotFound", name, key, err)
			}
		}
		// A redirect_uri it cannot hold is bound to no stored code: the
		// code is refused, not unknown.
		c := record.AuthCode{ID: fmt.Sprintf("code %q", key), ClientID: "app_1", RedirectURI: "https://rp.example/cb",
			ExpiresAt: time.Now().Add(time.Hour), RetainUntil: time.Now().Add(2 * time.Hour)}
		if err := db.SaveCode(ctx, c); err != nil {
			t.Fatal(err)
		}
		if _, err := db.RedeemCode(ctx, c.ID, record.CodeBinding{ClientID: c.ClientID, RedirectURI: key}, time.Now()); !errors.Is(err, record.ErrCodeBinding) {
			t.Errorf("RedeemCode with redirect_uri %q: %v, want ErrCodeBinding", key, err)
		}
		err := db.CreateApp(ctx, record.App{ID: key, RPID: "rp_" + key})
		if err == nil || errors.Is(err, record.ErrExists) || errors.Is(err, record.ErrUnavailable) {
			t.Errorf("CreateApp(%q): %v, want a plain error", key, err)
		}
	}
	if apps, err := db.Apps(ctx); err != nil || len(apps) != 0 {
		t.Errorf("Apps = %v, %v; want none", apps, err)
	}
}

// Stored times cover 1677-2262 to the nanosecond; a time outside is
// refused, and comparisons with any time are exact.
func TestTimeRange(t *testing.T) {
	db, _ := openFresh(t)
	ctx := context.Background()
	far := time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := db.CreateApp(ctx, record.App{ID: "app_far", RPID: "rp_far", CreatedAt: far}); err == nil || errors.Is(err, record.ErrUnavailable) {
		t.Errorf("CreateApp at year 3000: %v, want a plain error", err)
	}
	for _, at := range []time.Time{minTime, maxTime, time.Unix(-1, 999999999)} {
		id := fmt.Sprint("app_", at.UnixNano())
		if err := db.CreateApp(ctx, record.App{ID: id, RPID: id, CreatedAt: at}); err != nil {
			t.Fatalf("CreateApp at %v: %v", at, err)
		}
		if a, err := db.App(ctx, id); err != nil || !a.CreatedAt.Equal(at) {
			t.Errorf("App at %v = %v, %v", at, a.CreatedAt, err)
		}
	}
	// The zero time and the far future as bounds: before and after every key.
	k := record.SigningKey{ID: "k1", PrivateKey: []byte{1}, CreatedAt: maxTime, ActivateAt: maxTime}
	if err := db.AddSigningKey(ctx, k, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := db.AddSigningKey(ctx, record.SigningKey{ID: "k2"}, time.Time{}); !errors.Is(err, record.ErrExists) {
		t.Errorf("a key activating at the latest time is not after the zero time: %v", err)
	}
	if err := db.AddSigningKey(ctx, record.SigningKey{ID: "k3", ActivateAt: minTime}, far); err != nil {
		t.Errorf("no key activates after year 3000, yet: %v", err)
	}
}

func TestBound(t *testing.T) {
	for _, tt := range []struct {
		t    time.Time
		want int64
	}{
		{time.Time{}, -1 << 63},
		{minTime.Add(-1), -1 << 63},
		{minTime, -1<<63 + 1},
		{time.Unix(0, 0), 0},
		{maxTime, 1<<63 - 1},
		{maxTime.Add(1), 1<<63 - 1},
		{time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), 1<<63 - 1},
	} {
		if got := bound(tt.t); got != tt.want {
			t.Errorf("bound(%v) = %d, want %d", tt.t, got, tt.want)
		}
	}
}
