package core

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Holds is a Client's record of what its owners hold: one Hold per (key, owner),
// with the contexts handed out for each acquisition. It ties acquisitions to
// the watchdog and cancels their contexts when a lease is lost or released.
type Holds struct {
	core *Core
	mu   sync.Mutex
	m    map[holdKey]*Hold
}

type holdKey struct{ key, owner string }

// Hold is one owner's hold on one key, across its reentrant acquisitions.
type Hold struct {
	holds *Holds
	key   holdKey
	what  string
	count int    // acquisitions not yet released
	acqs  []*Acq // their contexts, to cancel on loss (mostly one: a slice, not a map)
	entry Entry  // watchdog registration, nil when nothing renews it
	renew *Renewal
}

// Acq is one acquisition: what Lock returned a context for.
type Acq struct {
	hold   *Hold
	cancel context.CancelCauseFunc
	stop   context.CancelFunc
	// Token is the fencing token of the hold.
	Token int64
	// Extra carries primitive-specific data (e.g. a permit id).
	Extra any

	mu    sync.Mutex
	reqID string // request id of this acquisition's release, reused on retries
	tried bool   // a release was sent whose outcome is unknown
	done  bool   // released
}

type acqKey struct {
	holds *Holds
	key   string
}

// NewHolds returns the registry of core's holds.
func NewHolds(c *Core) *Holds { return &Holds{core: c, m: map[holdKey]*Hold{}} }

// Grant records a granted acquisition of key by owner and returns the context
// for it: derived from ctx, carrying the acquisition, cancelled with
// ErrLeaseLost if the lease is lost, with ErrReleased when this acquisition is
// released, and with ErrLeaseExpired at sentAt+lease when lease > 0 (an
// explicit lease, not renewed). With lease == 0, r is registered with the
// watchdog unless the hold already is; sentAt is when the granting request was
// sent, a lower bound for the server's lease start.
func (h *Holds) Grant(ctx context.Context, key, owner, what string, token int64, sentAt time.Time, lease time.Duration, r *Renewal) (context.Context, *Acq) {
	acq := &Acq{Token: token}
	ctx, acq.cancel = context.WithCancelCause(ctx)
	if lease > 0 {
		ctx, acq.stop = context.WithDeadlineCause(ctx, sentAt.Add(lease), ErrLeaseExpired)
	}
	ctx = context.WithValue(ctx, acqKey{h, key}, acq)

	h.mu.Lock()
	k := holdKey{key, owner}
	hd := h.m[k]
	if hd == nil {
		hd = &Hold{holds: h, key: k, what: what}
		h.m[k] = hd
	}
	hd.count++
	hd.acqs = append(hd.acqs, acq)
	acq.hold = hd
	if lease == 0 && hd.entry == nil && r != nil {
		hd.renew = r
		hd.entry = h.core.Watchdog.Add(r, sentAt, hd.lost)
	}
	h.mu.Unlock()
	return ctx, acq
}

// Lookup returns the acquisition of key that ctx carries, or nil.
func (h *Holds) Lookup(ctx context.Context, key string) *Acq {
	a, _ := ctx.Value(acqKey{h, key}).(*Acq)
	return a
}

// Count returns how many acquisitions of key by owner this process has not released.
func (h *Holds) Count(key, owner string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if hd := h.m[holdKey{key, owner}]; hd != nil {
		return hd.count
	}
	return 0
}

// BeginRelease prepares acq's release and returns its request id, the same on
// every retry, for the script to recognise a release it already applied. When
// this is the hold's last acquisition, the watchdog stops renewing it first, so
// a released lease is never renewed again. It returns ErrNotHeld when acq was
// already released.
func (a *Acq) BeginRelease() (reqID string, retried bool, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return "", false, ErrNotHeld
	}
	if a.reqID == "" {
		a.reqID = uuid.NewString()
	}
	retried = a.tried
	a.tried = true
	hd := a.hold
	h := hd.holds
	h.mu.Lock()
	if hd.count == 1 && hd.entry != nil {
		h.core.Watchdog.Remove(hd.entry)
		hd.entry = nil
	}
	h.mu.Unlock()
	return a.reqID, retried, nil
}

// Released records that the server applied acq's release. final says the
// owner no longer holds the key at all (the last hold count was released, or
// the key is gone): every context of the hold is cancelled. Otherwise only
// acq's context is, and if the hold still wants renewal, the watchdog resumes.
func (a *Acq) Released(final bool) {
	a.mu.Lock()
	a.done = true
	a.mu.Unlock()
	hd := a.hold
	h := hd.holds
	h.mu.Lock()
	var cancel []*Acq
	if i := slices.Index(hd.acqs, a); i >= 0 {
		hd.acqs = slices.Delete(hd.acqs, i, i+1)
		hd.count--
		cancel = append(cancel, a)
	}
	if final || hd.count <= 0 {
		for _, o := range hd.acqs {
			cancel = append(cancel, o)
		}
		hd.acqs = nil
		hd.count = 0
		if hd.entry != nil {
			h.core.Watchdog.Remove(hd.entry)
			hd.entry = nil
		}
		if h.m[hd.key] == hd {
			delete(h.m, hd.key)
		}
	} else if hd.entry == nil && hd.renew != nil {
		// The server still holds a count this process thought was the last
		// (the owner is shared by goroutines): keep renewing, starting now,
		// since when the lease was last extended is no longer known.
		hd.entry = h.core.Watchdog.Add(hd.renew, time.Now().Add(-h.core.Lease/3), hd.lost)
	}
	h.mu.Unlock()
	for _, o := range cancel {
		o.end(ErrReleased)
	}
}

// Failed records that a release attempt failed before it was sent, so the
// outcome is known: nothing changed on the server.
func (a *Acq) Failed() {
	a.mu.Lock()
	a.tried = false
	a.mu.Unlock()
}

// Held reports whether acq is not yet released.
func (a *Acq) Held() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.done
}

func (a *Acq) end(cause error) {
	a.cancel(cause)
	if a.stop != nil {
		a.stop()
	}
}

// lost is the watchdog's callback: the hold's lease is gone.
func (hd *Hold) lost(cause error) {
	h := hd.holds
	h.mu.Lock()
	if h.m[hd.key] != hd || hd.entry == nil {
		h.mu.Unlock()
		return
	}
	hd.entry = nil
	delete(h.m, hd.key)
	acqs := hd.acqs
	hd.acqs = nil
	hd.count = 0
	h.mu.Unlock()
	h.core.Log.Warn("distsync: lease lost", "lock", hd.what, "key", hd.key.key, "owner", hd.key.owner, "cause", cause)
	for _, a := range acqs {
		a.end(cause)
	}
}

// Abandon ends every hold of a Client being closed: their leases are no
// longer renewed, so their contexts are cancelled with cause (wrapping
// ErrClosed) rather than outliving what the server will keep. The holds stay
// on the server until their leases run out or they are released.
func (h *Holds) Abandon(cause error) {
	h.mu.Lock()
	var acqs []*Acq
	for k, hd := range h.m {
		acqs = append(acqs, hd.acqs...)
		hd.acqs = nil
		hd.count = 0
		hd.entry = nil
		delete(h.m, k)
	}
	h.mu.Unlock()
	for _, a := range acqs {
		a.end(cause)
	}
}
