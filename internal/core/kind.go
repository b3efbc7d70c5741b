package core

import (
	"fmt"
	"strings"
)

// The kinds of primitive, one word each: the marker each stores with its
// state (so that a name never holds two kinds), what Inspect reports and
// what the observer is told. distsync.Kind exports them; a new primitive
// adds its word here and there.
const (
	KindMutex           = "mutex"
	KindRWLock          = "rwlock"
	KindFairLock        = "fairlock"
	KindSemaphore       = "semaphore"       // the counting semaphore
	KindPermitSemaphore = "permitsemaphore" // the permit-expiring semaphore
	KindLatch           = "latch"
	KindElection        = "election"
)

// Kind is a kind of primitive, one of the constants above (untyped, so that
// a script argument takes them as they are): the key of the registry of
// makers (Register, Make).
type Kind string

// The sides of a read-write lock, as the observer is told them ("" for
// other kinds).
const (
	SideRead  = "read"
	SideWrite = "write"
)

// A returns word (a kind, say) after its indefinite article: "a mutex",
// "an election".
func A(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}

// WrongKind is the error of a name whose key holds kind found where kind
// want was asked for: it wraps ErrWrongKind.
func WrongKind(key, found, want string) error {
	return fmt.Errorf("%w: %s holds %s, not %s", ErrWrongKind, key, A(found), A(want))
}
