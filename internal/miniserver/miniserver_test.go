package miniserver_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/distsync/distsync/internal/miniserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestClockFollowsRealTime checks that keys expire and TIME advances without
// anyone calling FastForward: what the demo relies on.
func TestClockFollowsRealTime(t *testing.T) {
	s, err := miniserver.Start()
	require.NoError(t, err)
	defer s.Close()
	defer s.Close() // idempotent

	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{s.Addr()}, AlwaysRESP2: true, DisableCache: true, ForceSingleClient: true,
	})
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()

	before, err := c.Do(ctx, c.B().Time().Build()).AsStrSlice()
	require.NoError(t, err)
	require.NoError(t, c.Do(ctx, c.B().Set().Key("k").Value("v").Px(30*time.Millisecond).Build()).Error())

	// Wait (bounded) for the key to expire by itself.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := c.Do(ctx, c.B().Exists().Key("k").Build()).AsInt64()
		require.NoError(t, err)
		if n == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "key did not expire")
		time.Sleep(5 * time.Millisecond) // the condition is the key expiring on the wall clock
	}
	after, err := c.Do(ctx, c.B().Time().Build()).AsStrSlice()
	require.NoError(t, err)
	assert.Greater(t, micros(t, after), micros(t, before), "TIME did not advance")
}

func micros(t *testing.T, time []string) int64 {
	t.Helper()
	require.Len(t, time, 2)
	s, err := strconv.ParseInt(time[0], 10, 64)
	require.NoError(t, err)
	us, err := strconv.ParseInt(time[1], 10, 64)
	require.NoError(t, err)
	return s*1_000_000 + us
}
