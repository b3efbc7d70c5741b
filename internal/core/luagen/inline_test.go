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
	hs := map[string]helper{}
	if err := readHelpers(hs, string(lib), libFile.names); err != nil {
		t.Fatal(err)
	}
	// A helper that returns a name it assigned (as ds_tell does).
	tell := `local function xx_tell(pub, channel, id, msg, listens)
  local told = redis.call(pub, channel .. ':' .. id, msg) > 0 or not listens
  return told
end
`
	if err := readHelpers(hs, tell, []string{"xx_tell"}); err != nil {
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
		// A parameter without an argument is nil; a value returned by name
		// that a statement call does not read is left out (xx_tell, below).
		{src: "    xx_tell(ARGV[2], ARGV[1], id, 'g:' .. id .. ' ' .. ds_int(now))", want: `    do
      local pub, channel, msg, listens = ARGV[2], ARGV[1], 'g:' .. id .. ' ' .. string.format('%d', now), nil
      local told = redis.call(pub, channel .. ':' .. id, msg) > 0 or not listens
    end`},
		{src: "local ok = xx_tell(pub, channel, id, m, l)", want: `local ok
do
  local msg, listens = m, l
  local told = redis.call(pub, channel .. ':' .. id, msg) > 0 or not listens
  ok = told
end`},
		{src: "xx_tell(pub, channel, id, m, l, x)", err: "6 arguments for 5 parameters"},
		{src: "local x = ds_done(d, id, now, life)", err: "does not end with a return"},
	} {
		got, err := Inline(hs, tc.src)
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

// A folder's X.in.lua inlines its primitive's own helpers (ownHelpers) as it
// does lib.lua's, their calls of lib.lua's helpers too; a parameter the body
// assigns is bound afresh even when its argument is the same name, so that
// the caller's variable keeps its value; a comment in the body is copied as
// it is (an apostrophe in it opens no string).
func TestInlineOwn(t *testing.T) {
	lib, err := os.ReadFile("../lib.lua")
	if err != nil {
		t.Fatal(err)
	}
	own := `local function xx_wait(q, id, ttl, t)
  -- n counts the server's adds
  if ttl < 0 then ttl = 0 end
  local n = redis.call('ZADD', q, ds_int(ds_us(t) + ttl), id)
  return n
end

local function xx_other()
  return 1
end
`
	hs := map[string]helper{}
	if err := readHelpers(hs, string(lib), libFile.names); err != nil {
		t.Fatal(err)
	}
	if err := readHelpers(hs, own, []string{"xx_wait"}); err != nil {
		t.Fatal(err)
	}
	got, err := Inline(hs, "  local n = xx_wait(KEYS[3], ARGV[3], ttl, t)\n  return {n, ttl}")
	want := `  local n
  do
    local q, id, ttl = KEYS[3], ARGV[3], ttl
    -- n counts the server's adds
    if ttl < 0 then ttl = 0 end
    local n_ = redis.call('ZADD', q, string.format('%d', (tonumber(t[1]) * 1000000 + tonumber(t[2])) + ttl), id)
    n = n_
  end
  return {n, ttl}`
	if err != nil || got != want {
		t.Errorf("Inline =\n%s\n(%v), want\n%s", got, err, want)
	}
	if err := readHelpers(hs, own, []string{"xx_gone"}); err == nil {
		t.Error("readHelpers of a helper the file does not define: no error")
	}
	for _, f := range ownHelpers {
		text, err := os.ReadFile("../../../" + f.path)
		if err == nil {
			err = readHelpers(map[string]helper{}, string(text), f.names)
		}
		if err != nil {
			t.Errorf("%s: %v", f.path, err)
		}
	}
}
