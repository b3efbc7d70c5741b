package core

import (
	"context"
	"fmt"
	"net"
	"testing"
)

// A dial cancelled by a context another request shared the connection with
// is a connection failure, which trying again cures; a request's own
// cancelled context is not.
func TestTransientCancelledDial(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: context.Canceled}
	if !Transient(fmt.Errorf("eval: %w", dial)) {
		t.Error("a cancelled dial is not transient")
	}
	if Transient(context.Canceled) {
		t.Error("a cancelled context is transient")
	}
	if Transient(&net.OpError{Op: "read", Net: "tcp", Err: context.Canceled}) {
		t.Error("a read cancelled by its own context is transient")
	}
}
