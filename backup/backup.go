package backup

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"slices"
	"time"

	"worldid/internal/leaf/strictjson"
	"worldid/record"
)

// Format is the header's format member.
const Format = "worldid-backup/1"

// Logical tables, in the order they are written and restored.
const (
	TableApps           = "apps"            // record.App
	TableActions        = "actions"         // record.Action
	TableNullifiers     = "nullifiers"      // Nullifier
	TableSigningKeys    = "signing_keys"    // record.SigningKey
	TableRevokedKeys    = "revoked_keys"    // record.RevokedKey
	TableSigninProgress = "signin_progress" // record.SigninProgress
	TableSpentProofs    = "spent_proofs"    // SpentProof
	TableAuthCodes      = "auth_codes"      // AuthCode
	TableRevokedGrants  = "revoked_grants"  // RevokedGrant
	TableDeviceGrants   = "device_grants"   // record.DeviceGrant
	TableLeaves         = "leaves"          // Leaf
	TableExternalRoots  = "external_roots"  // record.ExternalRoot: 3.0 roots of trees kept elsewhere and 4.0 registry roots
	TableTrustAnchors   = "trust_anchors"   // record.TrustAnchor
	TableSettings       = "settings"        // Setting
	TableSignups        = "signups"         // record.Signup
	TableOrbKeys        = "orb_keys"        // OrbKey
	TablePinnedSubs     = "pinned_subs"     // PinnedSub
	TablePCPBindings    = "pcp_bindings"    // PCPBinding
	TableRefreshes      = "refreshes"       // record.Refresh
	TableFiles          = "files"           // File
)

// Tables lists every table in order.
var Tables = []string{TableApps, TableActions, TableNullifiers, TableSigningKeys, TableRevokedKeys, TableSigninProgress,
	TableSpentProofs, TableAuthCodes, TableRevokedGrants, TableDeviceGrants, TableLeaves, TableExternalRoots, TableTrustAnchors, TableSettings,
	TableSignups, TableOrbKeys, TablePinnedSubs, TablePCPBindings, TableRefreshes, TableFiles}

// StoreTables are the tables a backend's Export writes: all but files.
var StoreTables = Tables[:len(Tables)-1]

// Row types of the tables that have no record type.
type (
	// Nullifier is one nullifier's verifications for an action.
	Nullifier struct {
		RPID        string    `json:"rp_id"`
		Environment string    `json:"environment"`
		Action      string    `json:"action"`
		Nullifier   string    `json:"nullifier"`
		CreatedAt   time.Time `json:"created_at"`
		Count       int       `json:"count"`
	}
	// SpentProof is a sign-in or refresh proof used once.
	SpentProof struct {
		Key       string    `json:"key"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	// AuthCode is an authorization code and whether it was redeemed.
	AuthCode struct {
		Code     record.AuthCode `json:"code"`
		Redeemed bool            `json:"redeemed"`
	}
	// RevokedGrant is a grant revoked by a code replay.
	RevokedGrant struct {
		GrantID     string    `json:"grant_id"`
		RetainUntil time.Time `json:"retain_until"`
	}
	// Leaf is one leaf of an identity tree.
	Leaf struct {
		Tree string      `json:"tree"`
		Leaf record.Leaf `json:"leaf"`
	}
	// Setting is an on/off switch (refresh_enabled).
	Setting struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
	}
	// OrbKey is a trusted Orb key; Position orders an orb's keys.
	OrbKey struct {
		OrbID    string `json:"orb_id"`
		PEM      string `json:"pem"`
		Position int    `json:"position"`
	}
	// PinnedSub pins a sub to an identity commitment.
	PinnedSub struct {
		IDCommitment string `json:"id_commitment"`
		Sub          string `json:"sub"`
	}
	// PCPBinding binds a hashes.json digest to an identity commitment.
	PCPBinding struct {
		PCPDigest    string `json:"pcp_digest"`
		IDCommitment string `json:"id_commitment"`
	}
	// File is a file of the data directory (or its shared copy).
	File struct {
		Name    string `json:"name"`
		Content []byte `json:"content"`
	}
)

// Emit receives the rows of an export, table by table in Tables order.
type Emit func(table string, row any) error

// Header is the first line.
type Header struct {
	Format    string    `json:"format"`
	CreatedAt time.Time `json:"created_at"`
	Source    string    `json:"source"`
}

// Summary is what the trailer says about the rows: per table, how many and
// their digest. Tables without rows are absent.
type Summary struct {
	Counts  map[string]int    `json:"counts"`
	Digests map[string]string `json:"digests"`
}

type trailer struct {
	End    Summary `json:"end"`
	SHA256 string  `json:"sha256"`
}

// Digester computes a Summary from rows in any order.
type Digester struct {
	sums map[string][][sha256.Size]byte
}

// Add records one row, encoded canonically (encoding/json of its type).
func (d *Digester) Add(table string, canonical []byte) {
	if d.sums == nil {
		d.sums = map[string][][sha256.Size]byte{}
	}
	d.sums[table] = append(d.sums[table], sha256.Sum256(canonical))
}

// Summary returns the counts and digests.
func (d *Digester) Summary() Summary {
	s := Summary{Counts: map[string]int{}, Digests: map[string]string{}}
	for _, table := range slices.Sorted(maps.Keys(d.sums)) {
		sums := d.sums[table]
		slices.SortFunc(sums, func(a, b [sha256.Size]byte) int { return bytes.Compare(a[:], b[:]) })
		h := sha256.New()
		for _, sum := range sums {
			h.Write(sum[:])
		}
		s.Counts[table] = len(sums)
		s.Digests[table] = hex.EncodeToString(h.Sum(nil))
	}
	return s
}

// Collect returns an Emit that digests the rows; for verifying copies.
func (d *Digester) Collect() Emit {
	return func(table string, row any) error {
		b, err := json.Marshal(row)
		if err != nil {
			return err
		}
		d.Add(table, b)
		return nil
	}
}

// Diff names the tables whose counts or digests differ, or returns nil.
func (s Summary) Diff(other Summary) error {
	var errs []error
	for _, table := range Tables {
		if s.Counts[table] != other.Counts[table] {
			errs = append(errs, fmt.Errorf("table %s: %d rows, copy has %d", table, s.Counts[table], other.Counts[table]))
		} else if s.Digests[table] != other.Digests[table] {
			errs = append(errs, fmt.Errorf("table %s: digest %.16s…, copy has %.16s…", table, s.Digests[table], other.Digests[table]))
		}
	}
	return errors.Join(errs...)
}

// Writer writes a backup.
type Writer struct {
	w      *bufio.Writer
	h      hash.Hash
	digest Digester
	table  int // index in Tables of the last table written
}

// NewWriter writes the header to w.
func NewWriter(w io.Writer, source string, now time.Time) (*Writer, error) {
	bw := &Writer{w: bufio.NewWriterSize(w, 1<<16), h: sha256.New()}
	return bw, bw.writeLine(Header{Format: Format, CreatedAt: now.UTC(), Source: source})
}

func (w *Writer) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	w.h.Write(b)
	_, err = w.w.Write(b)
	return err
}

// Row writes one row. Tables must come in Tables order.
func (w *Writer) Row(table string, row any) error {
	i := slices.Index(Tables, table)
	if i < w.table {
		return fmt.Errorf("backup: table %q out of order", table)
	}
	w.table = i
	r, err := json.Marshal(row)
	if err != nil {
		return fmt.Errorf("backup: %s row: %w", table, err)
	}
	w.digest.Add(table, r)
	// The line {"t":…,"r":…} built directly: table names need no escaping,
	// and marshalling r a second time would only re-scan it.
	b := make([]byte, 0, len(r)+len(table)+16)
	b = append(append(append(b, `{"t":"`...), table...), `","r":`...)
	b = append(append(b, r...), "}\n"...)
	w.h.Write(b)
	_, err = w.w.Write(b)
	return err
}

// Close writes the trailer and flushes.
func (w *Writer) Close() error {
	t := trailer{End: w.digest.Summary(), SHA256: hex.EncodeToString(w.h.Sum(nil))}
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if _, err := w.w.Write(append(b, '\n')); err != nil {
		return err
	}
	return w.w.Flush()
}

// maxLine bounds one line: the proving key file is the largest row.
const maxLine = 256 << 20

// anyLine is a row or the trailer.
type anyLine struct {
	T      string          `json:"t"`
	R      json.RawMessage `json:"r"`
	End    *Summary        `json:"end"`
	SHA256 string          `json:"sha256"`
}

// Read parses the backup in r, calling fn (if not nil) with each row,
// typed, in file order, and returns its header and summary. It checks the
// structure, the checksum and the trailer's counts and digests; because
// those are known only at the end, a restore reads the file twice: once
// with fn nil to check it, then to load it. Errors name the line.
func Read(r io.Reader, fn Emit) (Header, Summary, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	h := sha256.New()
	var (
		hdr    Header
		digest Digester
		lineNo int
		table  int
		end    *anyLine
	)
	for {
		b, err := readLine(br)
		if err == io.EOF {
			break
		}
		lineNo++
		if err != nil {
			return hdr, Summary{}, fmt.Errorf("backup: line %d: %w", lineNo, err)
		}
		if end != nil {
			return hdr, Summary{}, fmt.Errorf("backup: line %d: data after the trailer", lineNo)
		}
		if lineNo == 1 {
			if err := strictjson.Decode(b, &hdr); err != nil || hdr.Format != Format {
				return hdr, Summary{}, fmt.Errorf("backup: line 1: not a %s header", Format)
			}
			h.Write(b)
			continue
		}
		var l anyLine
		if err := strictjson.Decode(b, &l); err != nil {
			return hdr, Summary{}, fmt.Errorf("backup: line %d: %w", lineNo, err)
		}
		if l.End != nil {
			end = &l
			continue
		}
		h.Write(b)
		i := slices.Index(Tables, l.T)
		if i < 0 || i < table || l.SHA256 != "" {
			return hdr, Summary{}, fmt.Errorf("backup: line %d: unknown or out-of-order table %q", lineNo, l.T)
		}
		table = i
		row, err := decodeRow(l.T, l.R)
		if err != nil {
			return hdr, Summary{}, fmt.Errorf("backup: line %d: %s row: %w", lineNo, l.T, err)
		}
		canonical, _ := json.Marshal(row)
		digest.Add(l.T, canonical)
		if fn != nil {
			if err := fn(l.T, row); err != nil {
				return hdr, Summary{}, fmt.Errorf("backup: line %d: %w", lineNo, err)
			}
		}
	}
	switch {
	case lineNo == 0:
		return hdr, Summary{}, errors.New("backup: empty file")
	case end == nil:
		return hdr, Summary{}, fmt.Errorf("backup: no trailer after line %d: the file is truncated", lineNo)
	case end.SHA256 != hex.EncodeToString(h.Sum(nil)):
		return hdr, Summary{}, errors.New("backup: checksum mismatch: the file was altered or damaged")
	}
	sum := digest.Summary()
	if err := end.End.Diff(sum); err != nil {
		return hdr, Summary{}, fmt.Errorf("backup: rows differ from the trailer: %w", err)
	}
	return hdr, sum, nil
}

// readLine returns one line including its newline; a final line without
// newline is a truncation.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			if len(buf) > maxLine {
				return nil, fmt.Errorf("longer than %d bytes", maxLine)
			}
			continue
		case err == io.EOF && len(buf) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, errors.New("incomplete line: the file is truncated")
		case err != nil:
			return nil, err
		}
		return buf, nil
	}
}

// decodeRow decodes a row into its table's type.
func decodeRow(table string, raw json.RawMessage) (any, error) {
	var row any
	switch table {
	case TableApps:
		row = &record.App{}
	case TableActions:
		row = &record.Action{}
	case TableNullifiers:
		row = &Nullifier{}
	case TableSigningKeys:
		row = &record.SigningKey{}
	case TableRevokedKeys:
		row = &record.RevokedKey{}
	case TableSigninProgress:
		row = &record.SigninProgress{}
	case TableSpentProofs:
		row = &SpentProof{}
	case TableAuthCodes:
		row = &AuthCode{}
	case TableRevokedGrants:
		row = &RevokedGrant{}
	case TableDeviceGrants:
		row = &record.DeviceGrant{}
	case TableLeaves:
		row = &Leaf{}
	case TableExternalRoots:
		row = &record.ExternalRoot{}
	case TableTrustAnchors:
		row = &record.TrustAnchor{}
	case TableSettings:
		row = &Setting{}
	case TableSignups:
		row = &record.Signup{}
	case TableOrbKeys:
		row = &OrbKey{}
	case TablePinnedSubs:
		row = &PinnedSub{}
	case TablePCPBindings:
		row = &PCPBinding{}
	case TableRefreshes:
		row = &record.Refresh{}
	case TableFiles:
		row = &File{}
	default:
		return nil, fmt.Errorf("unknown table %q", table)
	}
	if err := strictjson.Decode(raw, row); err != nil {
		return nil, err
	}
	return deref(row), nil
}

// deref returns the value a decodeRow pointer points to, so that rows
// have the same dynamic types as those a backend exports.
func deref(p any) any {
	switch v := p.(type) {
	case *record.App:
		return *v
	case *record.Action:
		return *v
	case *Nullifier:
		return *v
	case *record.SigningKey:
		return *v
	case *record.RevokedKey:
		return *v
	case *record.SigninProgress:
		return *v
	case *SpentProof:
		return *v
	case *AuthCode:
		return *v
	case *RevokedGrant:
		return *v
	case *record.DeviceGrant:
		return *v
	case *Leaf:
		return *v
	case *record.ExternalRoot:
		return *v
	case *record.TrustAnchor:
		return *v
	case *Setting:
		return *v
	case *record.Signup:
		return *v
	case *OrbKey:
		return *v
	case *PinnedSub:
		return *v
	case *PCPBinding:
		return *v
	case *record.Refresh:
		return *v
	case *File:
		return *v
	}
	panic("backup: deref of an unknown row type")
}
