package notify

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
