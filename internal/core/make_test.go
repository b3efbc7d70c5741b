package core

import (
	"errors"
	"testing"
)

type testHandle struct{ name string }

func init() {
	Register("testkind", func(c *Core, name string) (*testHandle, error) { return &testHandle{name}, nil })
}

// Make returns the handle its kind's Maker made, and an error, not a panic,
// for a kind nobody registered, a handle type the kind does not make, and a
// Core that was closed.
func TestMakeIsTyped(t *testing.T) {
	c := &Core{}
	h, err := Make[*testHandle](c, "testkind", "a")
	if err != nil || h == nil || h.name != "a" {
		t.Fatalf("Make = %v, %v; want the handle called a", h, err)
	}
	if _, err := Make[*testHandle](c, "nokind", "a"); err == nil {
		t.Fatal("Make of a kind nobody registered: no error")
	}
	if _, err := Make[string](c, "testkind", "a"); err == nil {
		t.Fatal("Make with a handle type the kind does not make: no error")
	}
	c.SetClosed()
	if _, err := Make[*testHandle](c, "testkind", "a"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Make after Close = %v, want ErrClosed", err)
	}
}
