package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// list prints every name on one row of its own: a name no Client accepts
// (a key with a line break in its name, written by hand) is reported on
// stderr, quoted, not printed as a row, and a name with characters that
// do not print as themselves (a bidirectional override) is quoted.
func TestListQuotesNames(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	base := dstest.Name(t)

	forged := base + "-x\n" + base + "-fake\tmutex\t1\t0\t9s"
	rc := redistest.Shared(t).Client(t)
	key := "distsync:{" + forged + "}"
	require.NoError(t, rc.Do(ctx, rc.B().Hset().Key(key).FieldValue().FieldValue("#k", "mutex").Build()).Error())
	t.Cleanup(func() { rc.Do(context.Background(), rc.B().Del().Key(key).Build()) })
	odd := base + "-r\u202eleft"
	lockIn(t, c, odd)

	code, out, errOut := invoke(t, "", "list", "--all", base+"-*")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2, "a header and one row:\n%s", out)
	assert.Equal(t, strconv.Quote(odd), strings.Fields(lines[1])[0], "quoted")
	assert.NotContains(t, out, base+"-fake", "no forged row")
	assert.Contains(t, errOut, strconv.Quote(forged), "the refused name, quoted")
}
