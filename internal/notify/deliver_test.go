package notify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A message addressed to a waiter reaches that waiter's subscriptions
// alone, and nudges the one it names next (every one for "*"); a waiter
// that left gets nothing, and anonymous waiters are left alone.
func TestDeliverAddressesWaiters(t *testing.T) {
	n := &Notifier{chans: map[string]*channel{}}
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

	// nudgedOnly checks that each of subs was nudged, and only that.
	nudgedOnly := func(msg string, subs ...*Sub) {
		for _, s := range subs {
			grant, woken, nudged := take(s)
			assert.Equal(t, "", grant)
			assert.False(t, woken)
			assert.True(t, nudged, msg)
		}
	}
	// Two waiters named next, comma-separated, are both nudged.
	c := sub("c")
	st.add(b)
	n.deliver(st, "g:a acq 6 8 b,c")
	nudgedOnly("both named next are nudged", b, c)
	take(a)
	st.remove(c)

	// "*" as next nudges every waiter on the channel, anonymous ones too.
	n.deliver(st, "w:- *")
	nudgedOnly("every waiter is nudged", a, anon)
}

// A wake-up for one waiter does not go to a waiter woken already that has
// not taken its wake-up yet (it received the signal and is on its way to
// Take): two releases of one permit each, back to back, wake two waiters,
// not one twice. A waiter that leaves passes on a wake-up it did not take,
// not a nudge.
func TestBackToBackWakeUpsWakeTwoWaiters(t *testing.T) {
	n := &Notifier{chans: map[string]*channel{}}
	st := &channel{name: "ch"}
	sub := func() *Sub {
		s := &Sub{n: n, ch: st, c: make(chan struct{}, 1)}
		st.add(s)
		return s
	}
	first, second := sub(), sub()
	n.deliver(st, "n:1")
	<-first.c            // woken: it goes to take what the signal said
	n.deliver(st, "n:1") // the second release, meanwhile
	require.Len(t, second.c, 1, "the second wake-up goes to the second waiter")
	_, woken, _ := first.Take() // it attempts
	require.True(t, woken)
	first.Close() // its attempt acquired: it leaves, with nothing to pass on
	assert.Len(t, second.c, 1)

	// A wake-up not taken is passed on.
	third := sub()
	<-second.c
	second.Take()        // its attempt is on the wire
	n.deliver(st, "n:1") // to the second, which took its last one
	assert.Len(t, third.c, 0)
	second.Close() // acquired without taking it
	assert.Len(t, third.c, 1, "the wake-up it did not take is passed on")
	second = third

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
