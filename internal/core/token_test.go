package core

import (
	"context"
	"strconv"
	"testing"

	"github.com/distsync/distsync/internal/redistest"
)

var tokenScript = NewScript(`
local tok, s = ds_token(KEYS[1], {ARGV[1], ARGV[2]})
return {tok, s}
`)

// ds_token's token is the TIME reply in microseconds (its microseconds
// padded to six digits), or the counter's last token + 1 when that is not
// smaller: ahead of the clock, equal to it, or of more digits.
func TestTokenFromClock(t *testing.T) {
	c, rc := testCore(t, redistest.Shared(t))
	ctx := context.Background()
	key := "token:{" + t.Name() + "}"
	defer rc.Do(ctx, rc.B().Del().Key(key).Build())
	for _, tc := range []struct {
		name, set, sec, usec string
		want                 int64
	}{
		{"no counter", "", "1700000000", "5", 1700000000000005},
		{"clock moved on", "", "1700000000", "999999", 1700000000999999},
		{"same microsecond", "", "1700000000", "999999", 1700000001000000},
		{"counter ahead", "1800000000000000", "1700000000", "120", 1800000000000001},
		{"counter of more digits", "1000000000000000", "999999999", "0", 1000000000000001},
		{"counter of fewer digits", "999999999999999", "1700000000", "42", 1700000000000042},
	} {
		if tc.set != "" {
			if err := rc.Do(ctx, rc.B().Set().Key(key).Value(tc.set).Build()).Error(); err != nil {
				t.Fatal(err)
			}
		}
		r, err := c.Eval(ctx, tokenScript, []string{key}, []string{tc.sec, tc.usec}).ToArray()
		if err != nil || len(r) != 2 {
			t.Fatalf("%s: %v, %v", tc.name, r, err)
		}
		tok, _ := r[0].AsInt64()
		str, _ := r[1].ToString()
		stored, _ := rc.Do(ctx, rc.B().Get().Key(key).Build()).ToString()
		if tok != tc.want || str != stored || stored != strconv.FormatInt(tc.want, 10) {
			t.Errorf("%s: token %d, string %q, stored %q; want %d", tc.name, tok, str, stored, tc.want)
		}
	}
}
