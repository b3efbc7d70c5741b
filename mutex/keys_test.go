package mutex

import (
	"slices"
	"testing"

	"github.com/distsync/distsync/internal/core"
)

// The keys a mutex builds for its scripts are those core.SubKeys derives
// from its key, in lock.lua's order for Keys.
func TestSubKeysAreCores(t *testing.T) {
	c := &core.Core{Config: core.Config{Prefix: "distsync:", ID: "host/1"}}
	c.Init()
	m, err := newMutex(c, "orders")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a1", "ffb744e2abf25m"} {
		want := core.SubKeys(m.Key(), "", "", waiters, done+id, entries)
		want[1] = m.fence
		if got := (*handle)(m).Keys([]string{"before"}, id); !slices.Equal(got, append([]string{"before"}, want...)) {
			t.Fatalf("Keys(%s) = %q, want %q after the slice's own", id, got, want)
		}
	}
}
