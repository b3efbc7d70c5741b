package distsync_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// A name with a control character (a line break, NUL, an escape) is
// refused with ErrInvalidName by every call that takes a name, before any
// I/O: printed, it would fake lines and rows.
func TestNameWithControlCharacter(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	for _, name := range []string{"a\nb", "\x00", "x\rfake", "tab\there", "esc\x1b[2J", "del\x7f", "c1\u0085"} {
		_, err := c.Mutex(name)
		assert.ErrorIs(t, err, distsync.ErrInvalidName, "Mutex(%q)", name)
		_, err = c.Semaphore(name)
		assert.ErrorIs(t, err, distsync.ErrInvalidName, "Semaphore(%q)", name)
		_, err = c.Latch(name)
		assert.ErrorIs(t, err, distsync.ErrInvalidName, "Latch(%q)", name)
		_, err = c.Election(name)
		assert.ErrorIs(t, err, distsync.ErrInvalidName, "Election(%q)", name)
		_, err = c.Inspect(ctx, name)
		assert.ErrorIs(t, err, distsync.ErrInvalidName, "Inspect(%q)", name)
	}
	for _, name := range []string{"orders", "naïve café", "a b", "emoji 👩‍💻", "right\u202eleft"} {
		_, err := c.Mutex(name)
		assert.NoError(t, err, "Mutex(%q)", name)
	}
}
