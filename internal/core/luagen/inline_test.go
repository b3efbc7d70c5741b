package main

import (
	"os"
	"strings"
	"testing"
)

// Every generated X.lua is its X.in.lua with the inline helpers expanded
// (run go generate ./internal/core after changing either or lib.lua).
func TestGeneratedLua(t *testing.T) {
	files, err := Generated("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no .in.lua file found")
	}
	for path, want := range files {
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s is not current: run go generate ./internal/core", path)
		}
	}
}

func TestInline(t *testing.T) {
	lib, err := os.ReadFile("../lib.lua")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ src, want, err string }{
		{src: "local e = ds_int(ds_ms(t) + tonumber(ARGV[2]))",
			want: "local e = string.format('%d', (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) + tonumber(ARGV[2]))"},
		{src: "local x = ds_ms(t) * 2", want: "local x = (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) * 2"},
		{src: "x = 'ds_ms(t)' -- ds_ms(t)", want: "x = 'ds_ms(t)' -- ds_ms(t)"},
		{src: "-- ds_ms(redis.call('TIME'))", want: "-- ds_ms(redis.call('TIME'))"},
		{src: "local n = ds_ms(redis.call('TIME'))", err: "would run 2 times"},
		{src: "if ds_token(k, t) then", err: "as a statement of its own"},
		{src: "  local tok, s = ds_token(KEYS[2], t)", want: `  local tok, s
  do
    local key = KEYS[2]
    local s_ = t[1] .. string.rep('0', 6 - #t[2]) .. t[2]
    local last = redis.call('SET', key, s_, 'GET')
    if last and (#last > #s_ or #last == #s_ and last >= s_) then
      s_ = string.format('%d', tonumber(last) + 1)
      redis.call('SET', key, s_)
    end
    tok, s = tonumber(s_), s_
  end`},
		{src: "local t, s = ds_token(t, x)", err: "uses a variable it assigns"},
		{src: "ds_done(KEYS[5], 'g:' .. id, ds_ms(t), ARGV[7])", want: `do
  local d, id, now, life = KEYS[5], 'g:' .. id, (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)), ARGV[7]
  redis.call('ZREMRANGEBYSCORE', d, '-inf', now)
  redis.call('ZADD', d, now + tonumber(life), id)
  do
    local key, ms = d, life
    if redis.call('PTTL', key) < tonumber(ms) then redis.call('PEXPIRE', key, ms) end
  end
end`},
		{src: "    ds_tell(ARGV[2], ARGV[1], id, next, 'g:' .. id .. ' ' .. ds_int(now))", want: `    do
      local pub, channel, msg = ARGV[2], ARGV[1], 'g:' .. id .. ' ' .. string.format('%d', now)
      local cid = string.match(id, '^[^:]*')
      redis.call(pub, channel .. ':' .. cid, msg)
      if next ~= '-' and string.match(next, '^[^:]*') ~= cid then
        redis.call(pub, channel .. ':' .. string.match(next, '^[^:]*'), 'w:- ' .. next)
      end
    end`},
		{src: "local x = ds_tell(pub, ch, id, '-', m)", err: "does not end with a return"},
	} {
		got, err := Inline(string(lib), tc.src)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Inline(%q) error %v, want %q", tc.src, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Inline(%q) =\n%s\n(%v), want\n%s", tc.src, got, err, tc.want)
		}
	}
}
