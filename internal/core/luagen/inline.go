package main

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// A script's common case runs before the shared library is defined, so that
// a run that returns early pays nothing for defining its helpers. The few
// helpers a common case needs are written once, in internal/core/lib.lua or
// in its primitive's own helper file (ownHelpers), and a common case's
// source (a file X.in.lua) calls them by name; luagen (go generate
// ./internal/core) writes X.lua with each call replaced by the helper's
// body, and TestGeneratedLua checks that every X.lua is current. Inline
// does the replacing:
//
//   - a helper whose body is one `return <expression>` (ds_ms, ds_int) is
//     replaced where it is called, by the expression with its arguments in
//     place of its parameters; an argument used more than once must be a
//     name or a literal (an expression would run twice);
//   - any other helper (ds_token, ds_done, ds_tell) may be called only as a statement
//     of its own, `local a, b = h(args)` or `h(args)`, and becomes a
//     do-block that binds the parameters, runs the body and assigns its
//     final `return` (a helper called as `h(args)` has none, or returns a
//     name, left unread). A parameter whose argument is the same name is
//     bound only when the body assigns it; one without an argument is nil.

// A helperFile is a file of Lua helpers and those of them Inline replaces.
type helperFile struct {
	path  string // from the module's root
	names []string
}

// libFile is the shared library and the helpers of it that Inline replaces
// in every X.in.lua.
var libFile = helperFile{"internal/core/lib.lua", []string{"ds_int", "ds_ms", "ds_us", "ds_token", "ds_extend", "ds_done", "ds_tell", "ds_handed", "ds_listening"}}

// ownHelpers are, by folder, a primitive's own helper file and the helpers
// of it that Inline replaces too in that folder's X.in.lua (their bodies
// may call lib.lua's).
var ownHelpers = map[string]helperFile{
	"mutex":     {"mutex/mx.lua", []string{"mx_wait"}},
	"semaphore": {"semaphore/lib.lua", []string{"sem_wait", "sem_punwait", "sem_pwait", "sem_phold", "sem_ptell"}},
}

type helper struct {
	params []string
	body   []string // the body's lines, without the function's indentation
	expr   string   // the expression of a one-line `return` body
}

var (
	helperDef  = regexp.MustCompile(`(?m)^local function (\w+)\(([\w, ]*)\)\n((?:  .*\n|\n)*?)end\n`)
	simpleArg  = regexp.MustCompile(`^(?:[\w.]+(?:\[[^\[\]]*\])?|'[^']*'|-?\d+)$`)
	callStmt   = regexp.MustCompile(`^(\s*)(?:local ([\w, ]+) = )?(\w+)(\(.*\))\s*$`)
	identifier = regexp.MustCompile(`[A-Za-z_]\w*`)
)

// readHelpers adds to hs the helpers names of text, the text of a helper
// file.
func readHelpers(hs map[string]helper, text string, names []string) error {
	for _, m := range helperDef.FindAllStringSubmatch(text, -1) {
		name := m[1]
		if !contains(names, name) {
			continue
		}
		h := helper{}
		for _, p := range strings.Split(m[2], ",") {
			if p = strings.TrimSpace(p); p != "" {
				h.params = append(h.params, p)
			}
		}
		for _, l := range strings.Split(strings.TrimSuffix(m[3], "\n"), "\n") {
			h.body = append(h.body, strings.TrimPrefix(l, "  "))
		}
		if len(h.body) == 1 && strings.HasPrefix(h.body[0], "return ") {
			h.expr = strings.TrimPrefix(h.body[0], "return ")
		}
		hs[name] = h
	}
	for _, name := range names {
		if _, ok := hs[name]; !ok {
			return fmt.Errorf("no helper %s", name)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Inline returns src with the calls of the helpers hs replaced by their
// bodies (see above).
func Inline(hs map[string]helper, src string) (string, error) {
	var out []string
	for _, line := range strings.Split(src, "\n") {
		lines, err := inlineLine(hs, line)
		if err != nil {
			return "", fmt.Errorf("%q: %w", strings.TrimSpace(line), err)
		}
		out = append(out, lines...)
	}
	// What runs before the library must call none of its helpers.
	for _, l := range out {
		for name := range hs {
			if callAt(l, name) >= 0 {
				return "", fmt.Errorf("%q: %s is left uninlined", strings.TrimSpace(l), name)
			}
		}
	}
	return strings.Join(out, "\n"), nil
}

// inlineLine expands one line of source.
func inlineLine(hs map[string]helper, line string) ([]string, error) {
	if strings.HasPrefix(strings.TrimSpace(line), "--") {
		return []string{line}, nil
	}
	if m := callStmt.FindStringSubmatch(line); m != nil {
		if end, err := closing(m[4], 0); err == nil && end == len(m[4])-1 {
			if h, ok := hs[m[3]]; ok && h.expr == "" {
				return inlineStmt(hs, h, m[1], m[2], m[4][1:end])
			}
		}
	}
	s, err := inlineExpr(hs, line)
	return []string{s}, err
}

// inlineStmt expands `local <vars> = h(<args>)`, or `h(<args>)` (vars "")
// when h returns nothing, at indentation ind.
func inlineStmt(hs map[string]helper, h helper, ind, vars, args string) ([]string, error) {
	as, err := splitArgs(args)
	if err != nil {
		return nil, err
	}
	if len(as) > len(h.params) {
		return nil, fmt.Errorf("%d arguments for %d parameters", len(as), len(h.params))
	}
	for len(as) < len(h.params) {
		as = append(as, "nil") // as Lua passes a missing argument
	}
	// The body's names that are also the variables assigned get a '_', so
	// that its final assignment reaches the variables outside the block.
	targets := map[string]bool{}
	for _, v := range strings.Split(vars, ",") {
		if v = strings.TrimSpace(v); v != "" {
			targets[v] = true
		}
	}
	rename := func(l string) string {
		return replaceParams(l, func(id string, _ bool) string {
			if targets[id] {
				return id + "_"
			}
			return id
		})
	}
	out := []string{ind + "do"}
	if vars != "" {
		out = []string{ind + "local " + vars, ind + "do"}
	}
	var ps, vs []string
	for i, p := range h.params {
		for _, id := range identifier.FindAllString(as[i], -1) {
			if targets[id] {
				return nil, fmt.Errorf("argument %q uses a variable it assigns", as[i])
			}
		}
		if as[i] != p || assigns(h.body, p) {
			ps, vs = append(ps, rename(p)), append(vs, as[i])
		}
	}
	if len(ps) > 0 {
		bind, err := inlineExpr(hs, ind+"  local "+strings.Join(ps, ", ")+" = "+strings.Join(vs, ", "))
		if err != nil {
			return nil, err
		}
		out = append(out, bind)
	}
	last := len(h.body) - 1
	body := h.body
	if vars == "" {
		last = -1 // no return to assign
		if l := strings.TrimSpace(body[len(body)-1]); strings.HasPrefix(l, "return ") && identifier.FindString(l[7:]) == l[7:] {
			body = body[:len(body)-1] // a value nobody reads, of a name: nothing runs
		}
	} else if !strings.HasPrefix(h.body[last], "return ") {
		return nil, fmt.Errorf("the helper's body does not end with a return")
	}
	for i, l := range body {
		l = rename(l)
		if i == last {
			l = vars + " = " + strings.TrimPrefix(l, "return ")
		} else if strings.Contains(l, "return") {
			return nil, fmt.Errorf("the helper returns before its end")
		}
		exp, err := inlineLine(hs, ind+"  "+l)
		if err != nil {
			return nil, err
		}
		out = append(out, exp...)
	}
	return append(out, ind+"end"), nil
}

// assigns reports whether a line of body may assign the name p (`p = x`,
// `a, p = x, y`, or a local p of its own), so that the inlined body binds p
// afresh rather than assign the caller's variable of that name.
func assigns(body []string, p string) bool {
	re := regexp.MustCompile(`(?:^|[^\w.])` + regexp.QuoteMeta(p) + `(?:\s*,\s*[\w.\[\]]+)*\s*=(?:[^=]|$)`)
	for _, l := range body {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// inlineExpr replaces the calls of expression helpers in s.
func inlineExpr(hs map[string]helper, s string) (string, error) {
	for {
		name, at := "", -1
		for n, h := range hs {
			if h.expr == "" {
				continue
			}
			if i := callAt(s, n); i >= 0 && (at < 0 || i < at) {
				name, at = n, i
			}
		}
		if at < 0 {
			if i := firstCall(s, hs); i != "" {
				return "", fmt.Errorf("%s must be called as a statement of its own", i)
			}
			return s, nil
		}
		open := at + len(name)
		end, err := closing(s, open)
		if err != nil {
			return "", err
		}
		as, err := splitArgs(s[open+1 : end])
		if err != nil {
			return "", err
		}
		h := hs[name]
		if len(as) != len(h.params) {
			return "", fmt.Errorf("%s: %d arguments for %d parameters", name, len(as), len(h.params))
		}
		for i := range as {
			if as[i], err = inlineExpr(hs, as[i]); err != nil {
				return "", err
			}
		}
		uses := map[string]int{}
		for _, id := range identifier.FindAllString(h.expr, -1) {
			uses[id]++
		}
		var bad error
		expr := replaceParams(h.expr, func(id string, whole bool) string {
			for i, p := range h.params {
				if id == p {
					a := as[i]
					if !simpleArg.MatchString(a) {
						if uses[p] > 1 {
							bad = fmt.Errorf("%s: argument %q would run %d times: pass a name", name, a, uses[p])
						}
						if !whole {
							a = "(" + a + ")"
						}
					}
					return a
				}
			}
			return id
		})
		if bad != nil {
			return "", bad
		}
		if !isCall(expr) {
			expr = "(" + expr + ")"
		}
		s = s[:at] + expr + s[end+1:]
	}
}

// callAt returns the index of the first call of name in s, outside strings
// and comments and not part of a longer name; -1 when none.
func callAt(s, name string) int {
	for i := 0; i+len(name) < len(s); i++ {
		switch s[i] {
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], s[i])
			if j < 0 {
				return -1
			}
			i += j + 1
			continue
		}
		if strings.HasPrefix(s[i:], "--") {
			return -1 // a comment
		}
		if strings.HasPrefix(s[i:], name+"(") && (i == 0 || !isWord(s[i-1])) {
			return i
		}
	}
	return -1
}

// firstCall names a statement helper called in s, if any.
func firstCall(s string, hs map[string]helper) string {
	for n, h := range hs {
		if h.expr == "" && callAt(s, n) >= 0 {
			return n
		}
	}
	return ""
}

func isWord(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// closing returns the index of the parenthesis closing the one at open.
func closing(s string, open int) (int, error) {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], s[i])
			if j < 0 {
				return 0, fmt.Errorf("unterminated string")
			}
			i += j + 1
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced parentheses")
}

// splitArgs splits a call's arguments at the commas outside parentheses,
// brackets and strings.
func splitArgs(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], s[i])
			if j < 0 {
				return nil, fmt.Errorf("unterminated string")
			}
			i += j + 1
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" || len(out) > 0 {
		out = append(out, rest)
	}
	return out, nil
}

// isCall reports whether e is one call, f(...), which needs no parentheses
// to be an operand.
func isCall(e string) bool {
	i := strings.IndexByte(e, '(')
	if i <= 0 || !identifier.MatchString(e[:i]) {
		return false
	}
	for _, c := range []byte(e[:i]) {
		if !isWord(c) {
			return false
		}
	}
	end, err := closing(e, i)
	return err == nil && end == len(e)-1
}

// generatedHeader starts every generated file.
const generatedHeader = "-- Code generated by luagen from %s; DO NOT EDIT.\n"

// Generated returns, for every X.in.lua below root, the module's root (but
// in bench/), the path of X.lua and the text it must have.
func Generated(root string) (map[string]string, error) {
	read := func(hs map[string]helper, f helperFile) error {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.path)))
		if err == nil {
			err = readHelpers(hs, string(b), f.names)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		return nil
	}
	lib := map[string]helper{}
	if err := read(lib, libFile); err != nil {
		return nil, err
	}
	folders := map[string]map[string]helper{} // the helpers of a folder's X.in.lua
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "bench" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".in.lua") {
			return nil
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dir = filepath.ToSlash(dir)
		hs, ok := folders[dir]
		if !ok {
			hs = lib
			if f, own := ownHelpers[dir]; own {
				hs = maps.Clone(lib)
				if err := read(hs, f); err != nil {
					return err
				}
			}
			folders[dir] = hs
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text, err := Inline(hs, string(src))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out[strings.TrimSuffix(path, ".in.lua")+".lua"] = fmt.Sprintf(generatedHeader, filepath.Base(path)) + text
		return nil
	})
	return out, err
}

// replaceParams replaces every identifier of e outside strings and comments
// by f's result; whole tells f that the identifier is a whole argument of a
// call (between '(' or ', ' and ',' or ')'), where any expression fits.
func replaceParams(e string, f func(id string, whole bool) string) string {
	var b strings.Builder
	for i := 0; i < len(e); {
		c := e[i]
		switch {
		case strings.HasPrefix(e[i:], "--"):
			b.WriteString(e[i:]) // a comment, to the end of the line
			i = len(e)
		case c == '\'' || c == '"':
			j := strings.IndexByte(e[i+1:], c)
			if j < 0 {
				j = len(e) - i - 2 // unterminated: to the end
			}
			b.WriteString(e[i : i+j+2])
			i += j + 2
		case isWord(c) && c != '.' && (i == 0 || !isWord(e[i-1])):
			j := i
			for j < len(e) && isWord(e[j]) && e[j] != '.' {
				j++
			}
			id := e[i:j]
			before := strings.TrimRight(e[:i], " ")
			after := strings.TrimLeft(e[j:], " ")
			whole := (strings.HasSuffix(before, "(") || strings.HasSuffix(before, ",")) &&
				(strings.HasPrefix(after, ")") || strings.HasPrefix(after, ","))
			if c >= '0' && c <= '9' {
				b.WriteString(id)
			} else {
				b.WriteString(f(id, whole))
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}
