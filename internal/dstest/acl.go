package dstest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/distsync/distsync/internal/redistest"
)

// ACLUser makes a user of server s, named from prefix, with password "pw",
// every key, every channel and every command, deleted when the test ends.
// It returns the user's name and set, which applies ACL SETUSER rules to it
// (for instance "resetchannels": the server closes the subscriptions of its
// connections, and refuses new ones).
func ACLUser(tb testing.TB, s *redistest.Server, prefix string) (user string, set func(rules ...string)) {
	tb.Helper()
	admin := s.Client(tb)
	ctx := context.Background()
	user = prefix + strconv.FormatInt(time.Now().UnixNano(), 36)
	set = func(rules ...string) {
		tb.Helper()
		if err := admin.Do(ctx, admin.B().Arbitrary(append([]string{"ACL", "SETUSER", user}, rules...)...).Build()).Error(); err != nil {
			tb.Fatalf("ACL SETUSER %s %v: %v", user, rules, err)
		}
	}
	set("on", ">pw", "allkeys", "allchannels", "+@all")
	tb.Cleanup(func() { admin.Do(ctx, admin.B().AclDeluser().Username(user).Build()) })
	return user, set
}
