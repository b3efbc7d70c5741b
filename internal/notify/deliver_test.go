package notify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A message addressed to a waiter reaches that waiter's subscriptions
// alone, and nudges the one it names next; a waiter that left gets
// nothing, and anonymous waiters are left alone.
func TestDeliverAddressesWaiters(t *testing.T) {
	n := &Notifier{chans: map[string]*channel{}, done: make(chan struct{})}
	st := &channel{name: "ch"}
	sub := func(waiter string) *Sub {
		s := &Sub{n: n, ch: st, waiter: waiter, c: make(chan struct{}, 1)}
		st.add(s)
		return s
	}
	// take is what a waiter does with a signal (acquire.sleepFor).
	take := func(s *Sub) (string, bool, bool) {
		select {
		case <-s.c:
		default:
		}
		return s.Take()
	}
	a, b, anon := sub("a"), sub("b"), sub("")
	n.deliver(st, "g:a acq 5 7 b")
	grant, woken, nudged := take(a)
	assert.Equal(t, "acq 5 7", grant)
	assert.False(t, woken || nudged)
	grant, woken, nudged = take(b)
	assert.Equal(t, "", grant)
	assert.False(t, woken)
	assert.True(t, nudged, "the next waiter is nudged")
	_, woken, nudged = take(anon)
	assert.False(t, woken || nudged, "an anonymous waiter is left alone")
	assert.Equal(t, int64(1), n.stats.Wakes.Load())

	st.remove(b)
	n.deliver(st, "w:b -")
	assert.Len(t, b.c, 0, "a waiter that left gets nothing")
	assert.Empty(t, st.named["b"])
	n.deliver(st, "w:a -")
	_, woken, _ = take(a)
	assert.True(t, woken)
}

// A wake-up that reaches a waiter after it took the last one (its attempt
// is on the wire) and that it then does not take (the attempt acquired) is
// passed on when it leaves: two releases of one permit each, back to back,
// wake two waiters, not one twice. A pending grant or nudge is not.
func TestLeavingPassesOnAWakeUpItDidNotTake(t *testing.T) {
	n := &Notifier{chans: map[string]*channel{}, done: make(chan struct{})}
	st := &channel{name: "ch"}
	sub := func() *Sub {
		s := &Sub{n: n, ch: st, c: make(chan struct{}, 1)}
		st.add(s)
		return s
	}
	first, second := sub(), sub()
	n.deliver(st, "n:1")
	<-first.c            // woken: it goes to take what the signal said
	n.deliver(st, "n:1") // the second release wakes it again meanwhile
	assert.Len(t, second.c, 0, "the first waiter took the second wake-up too")
	_, woken, _ := first.Take() // one Take for both; it attempts
	require.True(t, woken)
	first.Close() // its attempt acquired: it leaves
	assert.Len(t, second.c, 1, "the wake-up it did not take is passed on")

	// A nudge pending when a waiter leaves is not passed on.
	a, b := &Sub{n: n, ch: st, waiter: "a", c: make(chan struct{}, 1)}, sub()
	st.add(a)
	select {
	case <-second.c:
	default:
	}
	second.Take()
	n.deliver(st, "w:x a")
	a.Close()
	assert.Len(t, b.c, 0, "a nudge is not a wake-up to pass on")
}
