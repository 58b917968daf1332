package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/semaphore"
)

// Checkpoints keeps one checkpoint per tree: derived data (the tree's
// nodes and its recent roots) that lets a start read a tree instead of
// hashing every stored leaf again. A checkpoint may be missing, older than
// the store or damaged: the registry checks each against the stored leaves
// and rebuilds what does not match, so it is never backed up.
type Checkpoints interface {
	// ReadCheckpoint returns the checkpoint last written for tree, or an
	// error wrapping record.ErrNotFound.
	ReadCheckpoint(ctx context.Context, tree string) ([]byte, error)
	// WriteCheckpoint replaces the checkpoint of tree atomically: after a
	// crash the old one or the new one is read back, whole.
	WriteCheckpoint(ctx context.Context, tree string, data []byte) error
}

// checkpointMagic starts a checkpoint; the digit is its version.
const checkpointMagic = "worldid tree checkpoint 1\n"

// A checkpoint is checkpointMagic; the tree's name (2-byte length, bytes);
// its roots (4-byte count, then each as 32 bytes big-endian and its time
// in Unix nanoseconds, 8 bytes), oldest first, the current root last; the
// semaphore.TreeSnapshot encoding (8-byte length, bytes); and the SHA-256
// of everything before it. Lengths and counts are big-endian.
type checkpoint struct {
	name  string
	roots []semaphore.RootEntry
	tree  []byte
}

// rootEntrySize is one encoded root: the root and its time.
const rootEntrySize = fr.Bytes + 8

func (c checkpoint) encode() []byte {
	b := make([]byte, 0, len(checkpointMagic)+2+len(c.name)+4+rootEntrySize*len(c.roots)+8+len(c.tree)+sha256.Size)
	b = append(b, checkpointMagic...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(c.name)))
	b = append(b, c.name...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(c.roots)))
	for _, e := range c.roots {
		root := e.Root.Bytes()
		b = append(b, root[:]...)
		b = binary.BigEndian.AppendUint64(b, uint64(e.At.UnixNano()))
	}
	b = binary.BigEndian.AppendUint64(b, uint64(len(c.tree)))
	b = append(b, c.tree...)
	digest := sha256.Sum256(b)
	return append(b, digest[:]...)
}

// errBadCheckpoint: the bytes are not a whole checkpoint this version wrote.
var errBadCheckpoint = errors.New("not a whole checkpoint")

// decodeCheckpoint checks the digest and the framing; the tree bytes are
// left to semaphore.ParseTree.
func decodeCheckpoint(b []byte) (checkpoint, error) {
	if len(b) < len(checkpointMagic)+sha256.Size || !bytes.HasPrefix(b, []byte(checkpointMagic)) {
		return checkpoint{}, errBadCheckpoint
	}
	body, digest := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], digest) {
		return checkpoint{}, fmt.Errorf("%w: digest mismatch", errBadCheckpoint)
	}
	d := decoder{b: body[len(checkpointMagic):]}
	var c checkpoint
	c.name = string(d.next(int(d.uint(2))))
	n := d.uint(4)
	if n > uint64(len(d.b)/rootEntrySize) {
		n, d.err = 0, errors.New("truncated roots")
	}
	c.roots = make([]semaphore.RootEntry, n)
	for i := range c.roots {
		if err := c.roots[i].Root.SetBytesCanonical(d.next(fr.Bytes)); err != nil && d.err == nil {
			d.err = err
		}
		c.roots[i].At = time.Unix(0, int64(d.uint(8))).UTC()
	}
	c.tree = d.next(int(min(d.uint(8), uint64(len(d.b)))))
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return checkpoint{}, fmt.Errorf("%w: %w", errBadCheckpoint, d.err)
	}
	return c, nil
}

// decoder reads a checkpoint's fields; the first short read sticks in err.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) next(n int) []byte {
	if d.err != nil || len(d.b) < n {
		if d.err == nil {
			d.err = errors.New("truncated")
		}
		return make([]byte, n)
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint(n int) uint64 {
	var v [8]byte
	copy(v[8-n:], d.next(n))
	return binary.BigEndian.Uint64(v[:])
}
