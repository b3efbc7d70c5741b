package distsync

import "github.com/distsync/distsync/internal/core"

// The errors of distsync: every package of the module returns them,
// wrapped with what failed (the primitive, its name), so test them with
// errors.Is. They are declared once, in internal/core, and documented here.
var (
	// ErrNotHeld: a release or query of an acquisition the caller does not
	// hold (released before, its lease ended or was lost, or the context
	// carries no acquisition of that primitive).
	ErrNotHeld error = core.ErrNotHeld
	// ErrNotAcquired: a wait budget was spent (or was zero) while another
	// owner held the primitive; also a grant whose reply came back after its
	// lease could have ended (it was given back).
	ErrNotAcquired error = core.ErrNotAcquired
	// ErrLeaseLost: the cause of an acquisition's context when its lease was
	// lost (the key was deleted or taken over, or renewal failed until the
	// lease ran out).
	ErrLeaseLost error = core.ErrLeaseLost
	// ErrLeaseExpired: the cause of an acquisition's context when its
	// explicit lease, which the watchdog does not renew, ran out.
	ErrLeaseExpired error = core.ErrLeaseExpired
	// ErrReleased: the cause of an acquisition's context once it was
	// released.
	ErrReleased error = core.ErrReleased
	// ErrInvalidName: an empty, over-long, non-UTF-8 name, or one with a
	// brace or a control character.
	ErrInvalidName error = core.ErrInvalidName
	// ErrInvalidArgument: a negative duration, a count out of range, an
	// option out of range and similar misuse, and any call on a nil or
	// zero-value Client, primitive, Permit, multilock or redlock (one not
	// made by New or by a Client): misuse is an error, never a panic.
	ErrInvalidArgument error = core.ErrInvalidArgument
	// ErrClosed: any call on a Client that was closed or on a handle it
	// made, before any other error (making a handle after Close too), and
	// the cause of the contexts of the holds it had.
	ErrClosed error = core.ErrClosed
	// ErrWrongKind: the name is used by another kind of primitive (names are
	// one namespace across kinds): every script refuses a foreign kind
	// rather than touch its state.
	ErrWrongKind error = core.ErrWrongKind
	// ErrNotSet: wrapped with ErrNotAcquired, or with ctx.Err() when a
	// blocking wait ended by its context, when a semaphore whose permits
	// are not set (never set, or their TTL ended) could not be acquired (it
	// is not full: it has none); and from a Release to such a semaphore,
	// which releases nothing rather than recreate it.
	ErrNotSet error = core.ErrNotSet
	// ErrUpgrade: the holder of a read lock asked for the write lock, which
	// would deadlock.
	ErrUpgrade error = core.ErrUpgrade
	// ErrNotReplicated: too few replicas acknowledged an acquisition in
	// time (Options.ReplicaAck); it was given back.
	ErrNotReplicated error = core.ErrNotReplicated
	// ErrNoLeader: returned by an election's Leader when nobody leads.
	ErrNoLeader error = core.ErrNoLeader
)
