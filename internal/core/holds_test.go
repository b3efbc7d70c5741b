package core

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/distsync/distsync/observe"
)

// countingWatchdog registers leases without renewing them, and counts them.
type countingWatchdog struct{ live int }

type nopEntry struct{}

func (nopEntry) Lapsed() bool { return false }

func (w *countingWatchdog) Add(Lease, time.Time, time.Duration, time.Duration) Entry {
	w.live++
	return &nopEntry{}
}
func (w *countingWatchdog) Remove(Entry)                        { w.live-- }
func (w *countingWatchdog) Trust(d time.Duration) time.Duration { return d }

// nopLock is a Holdable that is never released or renewed on a server.
type nopLock struct{}

func (nopLock) What() string                 { return "nop" }
func (nopLock) Kind() (observe.Kind, string) { return observe.KindMutex, "" }
func (nopLock) Name() string                 { return "nop" }
func (nopLock) Renewal(string) Renewal       { return Renewal{} }
func (nopLock) Release(context.Context, string, string, time.Duration) (int64, error) {
	return releasedLast, nil
}

// Holds keeps the holds of several owners of one key apart (they share
// its entry of Holds.m) and forgets each with its last acquisition, in
// whatever order they end: the first, the middle or the last one made.
func TestHoldsOfOneKeyByManyOwners(t *testing.T) {
	for _, order := range [][]string{{"o1", "o2", "o3"}, {"o2", "o1", "o3"}, {"o3", "o2", "o1"}} {
		w := &countingWatchdog{}
		c := &Core{Config: Config{Lease: time.Minute}, Watchdog: w}
		c.Init()
		h := c.Holds
		grant := func(key, owner, id string, lease time.Duration) *Acq {
			t.Helper()
			_, a, err := h.Grant(context.Background(), Grant{Key: key, Owner: owner, Lock: nopLock{}, ID: id, Token: 1, SentAt: time.Now(), Lease: lease})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		acqs := map[string][]*Acq{}
		for _, o := range []string{"o1", "o2", "o3"} {
			acqs[o] = []*Acq{grant("k", o, o+"a", 0)}
		}
		acqs["o2"] = append(acqs["o2"], grant("k", "o2", "o2b", time.Minute)) // re-entered, explicit lease
		other := grant("other", "o1", "x", 0)
		if w.live != 4 {
			t.Fatalf("%d leases registered, want one a hold: 4", w.live)
		}
		for i, o := range order {
			for _, a := range acqs[o] {
				if h.Local("k", o, a.ID) != a {
					t.Fatalf("%v: before %s's end, Local(k, %s, %s) does not find it", order, o, o, a.ID)
				}
			}
			h.End("k", o, ErrLeaseLost)
			for _, a := range acqs[o] {
				if a.Held() || h.Local("k", o, a.ID) != nil {
					t.Fatalf("%v: %s's acquisition %s outlived End", order, o, a.ID)
				}
			}
			for _, rest := range order[i+1:] {
				if h.Local("k", rest, rest+"a") != acqs[rest][0] {
					t.Fatalf("%v: ending %s lost %s's hold", order, o, rest)
				}
			}
			if w.live != 4-(i+1) {
				t.Fatalf("%v: after %s's end %d leases registered, want %d", order, o, w.live, 4-(i+1))
			}
		}
		h.mu.Lock()
		keys := slices.Sorted(maps.Keys(h.m))
		h.mu.Unlock()
		if !slices.Equal(keys, []string{"other"}) {
			t.Fatalf("%v: Holds keeps %q, want only [other]", order, keys)
		}
		if h.Local("other", "o1", "x") != other {
			t.Fatalf("%v: the other key's hold was lost", order)
		}
		if !other.end(ErrLeaseLost) || !errors.Is(context.Cause(other), ErrLeaseLost) {
			t.Fatal("the other key's acquisition did not end with its cause")
		}
		if len(h.m) != 0 || w.live != 0 {
			t.Fatalf("%v: %d keys, %d leases left", order, len(h.m), w.live)
		}
	}
}
