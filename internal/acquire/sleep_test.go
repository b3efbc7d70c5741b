package acquire

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stale is a subscription with one signal pending whose news an earlier
// Take took already: Take says nothing.
type stale struct{ c chan struct{} }

func (s stale) C() <-chan struct{}                       { return s.c }
func (s stale) Take() (grant string, woken, nudged bool) { return "", false, false }
func (s stale) Done() <-chan struct{}                    { return nil }
func (s stale) Close()                                   {}

// A signal left over from news taken with an earlier signal (a waiter
// nudged twice, as third and then second in line, takes both nudges with
// one Take) does not end the sleep: it would be an attempt for nothing,
// and one that may run after a grant to this waiter was made but before
// its message came, taking the lock by attempt.
func TestStaleSignalDoesNotEndSleep(t *testing.T) {
	sub := stale{c: make(chan struct{}, 1)}
	sub.c <- struct{}{}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	notified, timed := stats.Notified.Load(), stats.Timer.Load()
	require.NoError(t, sleepFor(context.Background(), Wait{}, sub, nil, timer, 20*time.Millisecond))
	assert.Equal(t, notified, stats.Notified.Load(), "not woken by the stale signal")
	assert.Equal(t, timed+1, stats.Timer.Load(), "the sleep ran to its end")
}

// rejoined is a subscription of Presence that came back after a reconnect:
// the notifier woke it.
type rejoined struct {
	c     chan struct{}
	taken *bool
}

func (s rejoined) C() <-chan struct{} { return s.c }
func (s rejoined) Take() (grant string, woken, nudged bool) {
	*s.taken = true
	return "", true, false
}
func (s rejoined) Done() <-chan struct{} { return nil }
func (s rejoined) Close()                {}

// A waiter whose Presence subscription comes back after a reconnect tries
// again at once: a release may have passed over it while its Client seemed
// dead, and the attempt registers it anew. Without it, it would sleep until
// its retry time (here an hour).
func TestPresenceBackEndsSleep(t *testing.T) {
	var taken bool
	here := rejoined{c: make(chan struct{}, 1), taken: &taken}
	here.c <- struct{}{}
	sub := stale{c: make(chan struct{}, 1)}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	notified := stats.Notified.Load()
	require.NoError(t, sleepFor(context.Background(), Wait{}, sub, here, timer, time.Hour))
	assert.True(t, taken, "the wake-up taken")
	assert.Equal(t, notified+1, stats.Notified.Load(), "woken to try again")
}
