package core

import (
	"fmt"
	"strings"
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
