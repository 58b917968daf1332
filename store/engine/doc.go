// Package engine is the crash-safe core of worldid's JSON store
// (doc/design.md §3): tables mapping string keys to JSON values, kept in
// memory and made durable by a checksummed journal, a snapshot and a mark,
// in one directory owned by one process. It knows nothing of apps, sign-ins
// or nullifiers: package store puts the domain on top of it.
//
// # Interface
//
// Open (or OpenContext, which a done context stops) returns a DB; its
// Options may give tables a Codec that packs their rows into fixed-width
// records ("Packed tables"). DB.View runs a function on a ReadTx, a read-only view
// of the durable state; DB.Update runs one on a Tx (Get, Put, Delete, Scan,
// Count and the atomic helpers Insert, CompareAndSet and Increment, each
// documenting its SQL equivalent, which store/postgres implements) and
// returns once its changes are durable. Reader is what ReadTx and Tx share.
// ReadTx.Records lists a group's packed records, for callers that decode
// them directly; Tx.Lookup and State.Lookup find a row by its second key
// (SecondKeyCodec). Options.Obsolete names rows that Open drops from
// what it loads, for data a newer version no longer stores. ReadTx.LSN is the generation of the state a view holds, for files
// derived from the state. DB.Copy, ReadDir and WriteDir copy a whole state
// out of an open store, out of a stopped store's files, and into a
// directory, for backups and restores. Errors wrap the sentinels of package
// record (record.ErrUnavailable, record.ErrExists, record.ErrNotFound) or
// ErrDataLoss, ErrNotEmpty, ErrConflict and ErrLimit.
//
// # Crash-safety contract
//
// An Update that returned nil is on disk and survives a crash of the
// process or the machine at any instant (its journal line was fsynced
// before it returned). An Update that returned an error was either not
// written, or, after a storage error, may or may not be; it is never half
// written. A View never shows a write that a crash could still undo. Open
// after a crash recovers exactly the acknowledged writes (plus, possibly,
// writes whose Update had not returned yet), and refuses, rather than
// silently resetting, when the files hold less than the store had
// acknowledged. The rest of this comment says how.
//
// # Files
//
// The store owns four files in its directory (created 0700; files 0600);
// everything else in the directory is someone else's:
//
//	state.json     the snapshot
//	journal.jsonl  changes since the snapshot
//	store.mark     the newest acknowledged LSN, as far as known
//	LOCK           held with flock(2) while the store is open
//
// Snapshot: one indented JSON object with the members format
// ("worldid-store/2"), lsn (the last journal entry it contains), tables
// (table → key → value, sorted, one record per line), packed (the packed
// tables, below) and crc, in this order, then the packed tables' records:
//
//	{
//	  "format": "worldid-store/2",
//	  "lsn": 3,
//	  "tables": {
//	    "apps": {
//	      "app_1": {"id":"app_1","name":"A"}
//	    }
//	  },
//	  "packed": {},
//	  "crc": "4dc12663"
//	}
//
// crc is the CRC-32C (Castagnoli) of every byte before the final
// `,\n  "crc": "`, as 8 lowercase hex digits; a hand-edited snapshot
// therefore fails to load. Empty tables are not written. The object ends
// at the first line that starts with "}" (no earlier line does).
//
// A snapshot of format "worldid-store/1", which earlier versions wrote, has
// no packed member and nothing after the object; Open reads it (packing
// the rows of tables with a codec as it goes) and rewrites it in the
// current format.
//
// # Packed tables
//
// The caller of Open may give a table a Codec (Options.Codecs): the
// table's rows whose key the codec splits into a group (a prefix many
// keys share, such as a tree's name) and a rest, and whose rest and value
// it packs into a fixed-width record, are kept as records, in memory and
// in the snapshot, instead of as strings. The engine packs a row only if
// unpacking the record gives back the key and the value byte for byte;
// any other row of the table stays a JSON row. Reads, writes and the
// journal see JSON values either way: Get unpacks.
//
// In memory a packed table is one byte slice of records, each a 4-byte
// group number (little-endian) and the codec's record, with an
// open-addressing index of their key parts (4 bytes a slot, at most 3/4
// full); a delete moves the last record into the hole. A codec may also
// declare a second key, bytes of its record that identify a row within its
// group (SecondKeyCodec: a leaf's commitment in its tree): the engine then
// keeps a second index of the same kind over (group, second key), so that
// Lookup finds a row by it for another 4 bytes a slot instead of a table
// of its own. The index does not refuse a second key that repeats (a
// caller that wants it unique looks it up before it writes, in the same
// Update); Tx.Lookup also sees the Tx's own writes and the queued ones,
// through maps of their second keys that last until they are durable. A
// table packs at most 2^26 - 2 rows; the rows beyond stay JSON rows, which
// Lookup reads one by one. A group, once seen, stays in the table's list (and its snapshot) even when its last
// row is deleted: packed tables suit rows that are rarely deleted. In the snapshot,
// packed maps each packed table to its codec's name, its groups (the
// group number indexes this list), its row count and the CRC-32C of its
// records, which follow the object, table after table in name order, as
// they are in memory:
//
//	"packed": {
//	  "leaves": {"codec":"leaf/2","groups":["orb/production/"],"rows":2,"crc":"…"}
//	},
//
// A snapshot loads only with a codec of the name it records for each
// packed table. Loading reads the file whole, checks the checksums, and
// keeps the records where they were read (no decoding): its cost is the
// index, tens of nanoseconds a row.
//
// Journal: one line per Update, the JSON object of its LSN and its changes
// (op "put" with a value, or "del"), then a member crc holding the CRC-32C of
// every byte before `,"crc":"`:
//
//	{"lsn":42,"ops":[{"op":"put","t":"apps","k":"app_1","v":{"id":"app_1"}},{"op":"del","t":"codes","k":"c1"}],"crc":"0873869c"}
//
// LSNs increase by one from line to line. Table names and keys are
// non-empty valid UTF-8; values are the compact output of encoding/json.
//
// Mark: one line like a journal line, holding an LSN the store had made
// durable when it wrote the mark and the store's identity, 16 random bytes
// in hex chosen when the store got its first mark (Options.Rand):
//
//	{"lsn":42,"id":"00112233445566778899aabbccddeeff","crc":"b118d69e"}
//
// A mark from before identities has no id (`{"lsn":42,"crc":"3081ac24"}`);
// Open gives it one.
//
// It is replaced atomically (temporary file, fsync, rename, directory
// fsync) at Open, at Close, after a repair, and by the committer within a
// second of each write but at most once a second, since each costs two
// fsyncs (no measurable change in BenchmarkDurableWrites). After each, the
// store saves the same mark in Options.Witness, if set: a second record
// kept outside the store's files (package server keeps it in the data
// dir's first-start.done).
//
// # Durability and visibility
//
// Update runs fn under a write lock, turns its changes into one journal
// line, queues it, and returns only after the line has been written and
// fsynced. A single committer goroutine writes everything queued with one
// write and one fsync (group commit), so concurrent Updates share fsyncs;
// it yields briefly while writers released by the previous fsync are still
// queueing, so that they join the next one, and not once as many are
// queued as that fsync released (a lone writer never waits a scheduler
// round for company). UpdatePatient is the exception a writer opts into
// when its answer is not latency-critical (a /token redemption, next to
// an RSA signature): while only such writes are queued, the committer
// yields once before it writes, so that on a saturated server the writers
// the CPU is busy with join the same fsync; on an idle one nothing waits.
//
// Reads never show a write before it is durable. The state is kept in two
// layers: base, the durable state, and an overlay of queued changes. A
// View reads only base, so it never waits and never sees a write (or a
// delete) that a crash could still undo. An Update reads its own changes,
// then the overlay, then base, so that unique constraints hold between
// concurrent writers; because journal order is fsync order, an Update that
// wrote cannot be acknowledged before what it read, and an Update that wrote
// nothing (or failed, say with ErrExists) waits until the newest queued
// change it read is durable before it returns. The committer applies a
// batch to base and removes it from the overlay after its fsync and before
// waking its writers, so a returned Update is visible to every later View.
//
// # Recovery
//
// Open takes the lock (a second Open of the directory, from any process,
// fails with an error saying it is locked), loads the snapshot, and replays
// the journal lines whose LSN is above the snapshot's (lines at or below it
// are what a crash between snapshot and truncation leaves, and are skipped).
// Only the journal's last line may be bad: an incomplete line without
// newline, or a final line whose checksum does not verify, is a torn write
// (an Update that was never acknowledged) and is dropped, with a warning
// naming the file, the line, its size and the one dropped record. Any other
// bad line, a break in the LSN sequence, or a bad snapshot is an error
// naming the file and the line, and Open changes nothing on disk. Open then
// compacts, which also removes a torn tail, and writes the mark.
// OpenContext stops when its context is done: it looks at it every 4096
// snapshot rows, every 65,536 packed records, before each journal line and
// before it compacts, and returns the context's error having changed
// nothing on disk.
//
// # Never a silent reset
//
// Open compares the files with the mark and refuses, with an error wrapping
// ErrDataLoss that names the file, when they hold less than the store had
// acknowledged: state.json or journal.jsonl missing while a mark exists, a
// journal whose lines all precede the snapshot but end below its LSN (an
// older copy), snapshot and journal together ending below the mark's LSN
// (either file truncated, emptied or replaced by an older copy; this is how
// a cut that drops more than the torn tail is told from one), or a damaged
// mark. With a witness, Open also refuses when the files hold less than
// the witness says (which catches the files deleted or replaced together
// with the mark), when the mark names another store than the witness (a
// whole set of another store's files), or when the witness is damaged;
// the error names the witness. It changes nothing on disk.
// Options.AcceptLoss opens such a store with what the files hold, logs the
// loss at Warn and rewrites the mark and the witness. A directory without
// a mark (a new store, or one from before marks) opens as before and gets
// one; a witness without a record gets one.
//
// The mark and the witness trail the journal by at most a second of
// writes, so a file replaced or cut within the last second of writes
// before a crash can go unnoticed; so can a whole set of files swapped for
// an older set together with the witness (restoring a backup is exactly
// that), and, without a witness, any set of files swapped with the mark.
//
// Compaction writes base to state.json.tmp, fsyncs it, renames it over
// state.json, fsyncs the directory, and only then truncates and fsyncs the
// journal. It runs on the committer when the journal holds more changes
// (puts and deletes, whatever the number of lines) than
// Options.CompactAfter and than there are live records, so its cost is
// proportional to the number of writes and a start never replays more
// changes than that. Views continue meanwhile; Updates
// wait for their acknowledgement until it ends (about as long as Open takes
// to write the snapshot: about a second for a million JSON rows; packed
// records are written as they are held).
//
// # Failure
//
// After any error writing or fsyncing the journal, a snapshot, the mark or
// the witness (ENOSPC, EROFS, EIO), the file state is unknown, so the
// store stops accepting writes: that Update and every later one return an
// error wrapping record.ErrUnavailable (and the cause), Health returns it,
// and the error is logged. Reads keep working on what was acknowledged.
//
// The store never trusts the journal past its acknowledged lines: after a
// failed fsync, Linux may keep the unwritten lines in the page cache,
// marked clean, so that a later fsync succeeds without writing them (the
// "fsyncgate" case); retrying the fsync would acknowledge what the disk
// does not hold. So the committer at once truncates the journal to the
// end of its last acknowledged line and fsyncs it: a restart of the
// process, which reads the page cache, then finds none of the failed
// Updates (if this fails too, it is only logged, and the repair does it
// first).
//
// The store repairs itself: after 1 s, then at growing intervals up to
// 10 s, it truncates the journal as above and compacts: it writes base,
// the acknowledged state in memory, as a new snapshot (removing a partial
// one that fails) and empties the journal; then it writes the mark. Once
// that succeeds, the files hold exactly the acknowledged writes, Updates
// are accepted again and an Info line says so; the Updates that had failed
// are not on disk. A restart (Close, Open) recovers the acknowledged
// writes as well; once the truncation has succeeded, exactly them.
//
// # What it does not do
//
// One process owns a directory at a time: there is no sharing between
// processes and no replication; several replicas use store/postgres. The
// whole state lives in memory: a JSON row costs its key and value strings
// and a map slot (about 230 bytes for a nullifier-sized record), a packed
// row its record and about 8 bytes of index (16 with a second key). Scan costs time proportional to its table.
// Update's context is checked only before fn runs; reads never block on
// I/O. File locking uses flock(2), so the package builds on Linux, macOS
// and the BSDs only.
package engine
