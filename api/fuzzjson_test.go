package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// jv is a JSON value kept as written: object members in their order, and
// repeated if they are, so the fuzzer can write what a map cannot hold
// (twins, repeats) and bytes no encoder writes (invalid UTF-8).
type jv struct {
	kind    byte // 'o' object, 'a' array, 's' string, 'r' raw (number, true, false, null)
	members []jmember
	items   []*jv
	str     string // a string's value, written raw: may be invalid UTF-8
	raw     string
}

type jmember struct {
	name string
	val  *jv
}

// parseJV reads one JSON value (the base bodies are valid JSON).
func parseJV(b []byte) *jv {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := readJV(dec)
	if err != nil {
		panic(fmt.Sprintf("base body %s: %v", b, err))
	}
	return v
}

func readJV(dec *json.Decoder) (*jv, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			v := &jv{kind: 'a'}
			for dec.More() {
				it, err := readJV(dec)
				if err != nil {
					return nil, err
				}
				v.items = append(v.items, it)
			}
			_, err := dec.Token()
			return v, err
		}
		v := &jv{kind: 'o'}
		for dec.More() {
			nt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			val, err := readJV(dec)
			if err != nil {
				return nil, err
			}
			v.members = append(v.members, jmember{nt.(string), val})
		}
		_, err := dec.Token()
		return v, err
	case string:
		return &jv{kind: 's', str: t}, nil
	case json.Number:
		return &jv{kind: 'r', raw: t.String()}, nil
	case bool:
		return &jv{kind: 'r', raw: strconv.FormatBool(t)}, nil
	default:
		return &jv{kind: 'r', raw: "null"}, nil
	}
}

func (v *jv) clone() *jv {
	c := *v
	c.members = make([]jmember, len(v.members))
	for i, m := range v.members {
		c.members[i] = jmember{m.name, m.val.clone()}
	}
	c.items = make([]*jv, len(v.items))
	for i, it := range v.items {
		c.items[i] = it.clone()
	}
	return &c
}

// text writes v; reorder writes object members in reverse order and
// escapes non-ASCII letters, the same JSON value written otherwise.
func (v *jv) text(reorder bool) []byte {
	var b bytes.Buffer
	v.write(&b, reorder)
	return b.Bytes()
}

func (v *jv) write(b *bytes.Buffer, reorder bool) {
	switch v.kind {
	case 'o':
		b.WriteByte('{')
		ms := v.members
		if reorder {
			ms = append([]jmember(nil), ms...)
			for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
				ms[i], ms[j] = ms[j], ms[i]
			}
		}
		for i, m := range ms {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(b, m.name, reorder)
			b.WriteString(": ")
			m.val.write(b, reorder)
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for i, it := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.write(b, reorder)
		}
		b.WriteByte(']')
	case 's':
		writeJSONString(b, v.str, reorder)
	default:
		b.WriteString(v.raw)
	}
}

// writeJSONString writes s quoted; bytes that are not UTF-8 go out as they
// are (that is the point), and with escape every non-ASCII rune as \uXXXX.
func writeJSONString(b *bytes.Buffer, s string, escape bool) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteByte(s[i])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || (escape && r > 0x7e):
			if r > 0xffff {
				hi, lo := utf16Pair(r)
				fmt.Fprintf(b, `\u%04x\u%04x`, hi, lo)
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
		i += n
	}
	b.WriteByte('"')
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// A mutation is one of these, applied at a place the fuzz input picks.
const (
	mutCaseTwin  = iota // a member again in another letter case, with another value
	mutRepeat           // a member again with the same name
	mutUnknown          // a member the schema does not have
	mutHuge             // a number far out of any range
	mutNegative         // a negative number
	mutDeep             // a value nested dozens of levels
	mutBadUTF8          // a string (or name) with bytes that are not UTF-8
	mutWrongType        // a value of another type
	mutLong             // a string of thousands of characters
	mutControl          // a string with a line break or another control character
	mutRemove           // a member left out
	mutNull             // null instead of the value
	mutEmpty            // [] or {} instead of the value
	mutQuery            // a query parameter mutated (see mutateQuery)
	mutKinds
)

var mutNames = [mutKinds]string{"case twin", "repeat", "unknown", "huge", "negative", "deep", "bad utf-8", "wrong type",
	"long", "control", "remove", "null", "empty", "query"}

var (
	hugeNumbers  = []string{"9223372036854775808", "-9223372036854775809", "1e400", "123456789012345678901234567890", "1e20", "4294967296", "2147483648"}
	smallNumbers = []string{"-1", "-3", "-2147483648", "0", "-0", "1.5", "-9223372036854775808"}
	badUTF8      = []string{"\xff", "\xc3\x28", "\xed\xa0\x80", "\xf0\x28\x8c\x28", "\xc0\xaf"}
	controls     = []string{"\r\nBcc: x@example.com", "\n", "\t", "\u0007", "\u2028", "\u0085"}
	wrongTypes   = []string{`"1"`, `1`, `true`, `[1]`, `{"a": 1}`, `"x"`, `1.0`}
)

// place is a value in a body, and the object member holding it (if any).
type place struct {
	val    *jv
	parent *jv // the object or array holding val (nil: the body)
	member int // its index in parent.members (-1: an array item or the body)
}

func places(v *jv, parent *jv, member int, out []place) []place {
	out = append(out, place{v, parent, member})
	for i, m := range v.members {
		out = places(m.val, v, i, out)
	}
	for _, it := range v.items {
		out = places(it, v, -1, out)
	}
	return out
}

// mutate applies one mutation of kind at the place where picks.
func mutate(body *jv, kind int, where, arg byte) {
	ps := places(body, nil, -1, nil)
	p := ps[int(where)%len(ps)]
	// Mutations of a member need one: the nearest object's member.
	memberPlace := func() (obj *jv, i int) {
		if p.member >= 0 {
			return p.parent, p.member
		}
		for _, q := range ps {
			if q.member >= 0 {
				return q.parent, q.member
			}
		}
		return nil, -1
	}
	pick := func(list []string) string { return list[int(arg)%len(list)] }
	switch kind {
	case mutCaseTwin:
		if obj, i := memberPlace(); obj != nil {
			name := obj.members[i].name
			twin := flipCase(name, arg)
			if twin == name {
				twin = strings.ToUpper(name[:1]) + name[1:]
			}
			val := obj.members[i].val.clone()
			bump(val, arg)
			obj.members = append(obj.members, jmember{twin, val})
		}
	case mutRepeat:
		if obj, i := memberPlace(); obj != nil {
			val := obj.members[i].val.clone()
			bump(val, arg)
			obj.members = append(obj.members, jmember{obj.members[i].name, val})
		}
	case mutUnknown:
		obj := body
		if p.val.kind == 'o' {
			obj = p.val
		}
		if obj.kind == 'o' {
			obj.members = append(obj.members, jmember{pick([]string{"colour", "__proto__", "$ref", "amount", "is_test", "status", "id"}),
				&jv{kind: 'r', raw: pick(wrongTypes)}})
		}
	case mutHuge:
		*p.val = jv{kind: 'r', raw: pick(hugeNumbers)}
	case mutNegative:
		*p.val = jv{kind: 'r', raw: pick(smallNumbers)}
	case mutDeep:
		depth := 20 + int(arg)%200
		inner := *p.val
		nested := &inner
		for range depth {
			nested = &jv{kind: 'a', items: []*jv{nested}}
		}
		*p.val = *nested
	case mutBadUTF8:
		if p.val.kind == 's' || p.member < 0 {
			*p.val = jv{kind: 's', str: p.val.str + pick(badUTF8)}
		} else {
			p.parent.members[p.member].name += pick(badUTF8)
		}
	case mutWrongType:
		*p.val = jv{kind: 'r', raw: pick(wrongTypes)}
	case mutLong:
		n := 100 + int(arg)*40
		if arg > 240 {
			n = 200 << 10
		}
		*p.val = jv{kind: 's', str: strings.Repeat(pick([]string{"я", "7", "a", "🎫"}), n)}
	case mutControl:
		*p.val = jv{kind: 's', str: p.val.str + pick(controls)}
	case mutRemove:
		if obj, i := memberPlace(); obj != nil {
			obj.members = append(obj.members[:i], obj.members[i+1:]...)
		}
	case mutNull:
		*p.val = jv{kind: 'r', raw: "null"}
	case mutEmpty:
		if arg%2 == 0 {
			*p.val = jv{kind: 'a'}
		} else {
			*p.val = jv{kind: 'o'}
		}
	}
}

// outOfBounds are numbers a field's type holds but its bounds do not: a
// year in seconds, more tickets than an order holds, negative quantities.
var outOfBounds = []string{"31536000", "24", "22", "-3", "-1", "0", "100000", "2147483647"}

// bump makes a value differ from the one it was cloned from.
func bump(v *jv, arg byte) {
	switch v.kind {
	case 'r':
		v.raw = outOfBounds[int(arg)%len(outOfBounds)]
	case 's':
		v.str += "-" + strconv.Itoa(int(arg))
	case 'a':
		v.items = append(v.items, v.items...)
	case 'o':
		v.members = nil
	}
}

// flipCase changes the case of the letters arg's bits pick.
func flipCase(s string, arg byte) string {
	rs := []rune(s)
	for i, r := range rs {
		if arg&(1<<(i%8)) != 0 || i == 0 {
			if unicode.IsUpper(r) {
				rs[i] = unicode.ToLower(r)
			} else {
				rs[i] = unicode.ToUpper(r)
			}
		}
	}
	return string(rs)
}

// mutateQuery mutates an operation's query string: case twins and repeats
// of its parameters, out-of-range and malformed values, bytes that are not
// UTF-8, unknown parameters.
func mutateQuery(q []string, params []string, where, arg byte) []string {
	name := "page"
	if len(params) > 0 {
		name = params[int(where)%len(params)]
	}
	vals := []string{"-1", "0", "9223372036854775808", "1e3", "abc", "%FF", "%C3%28", "1%00", strings.Repeat("9", 400),
		"2026-02-30", "2026-11-28T25:00:00Z", "published,draft", "%0D%0A", "1&1"}
	v := vals[int(arg)%len(vals)]
	switch arg % 4 {
	case 0:
		q = append(q, url.QueryEscape(flipCase(name, arg))+"="+v)
	case 1:
		q = append(q, url.QueryEscape(name)+"=1", url.QueryEscape(name)+"="+v)
	case 2:
		q = append(q, url.QueryEscape(name)+"="+v)
	default:
		q = append(q, "x"+strconv.Itoa(int(arg))+"="+v)
	}
	return q
}

// sameRequest reports whether two bodies are the same request as the API
// reads them: the same bytes, or both strict (UTF-8, no member twice in any
// case) and equal as JSON values (members by exact name, numbers as
// written).
func sameRequest(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	ca, okA := strictCanonical(a)
	cb, okB := strictCanonical(b)
	return okA && okB && ca == cb
}

func strictCanonical(body []byte) (string, bool) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "", true
	}
	if !utf8.Valid(body) {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := readJV(dec)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	ok := canonicalOf(v, &b)
	return b.String(), ok
}

func canonicalOf(v *jv, b *strings.Builder) bool {
	switch v.kind {
	case 'o':
		seen := map[string]bool{}
		ms := append([]jmember(nil), v.members...)
		for _, m := range ms {
			if seen[strings.ToLower(m.name)] {
				return false
			}
			seen[strings.ToLower(m.name)] = true
		}
		sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
		b.WriteByte('{')
		for _, m := range ms {
			b.WriteString(strconv.Quote(m.name) + ":")
			if !canonicalOf(m.val, b) {
				return false
			}
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case 'a':
		b.WriteByte('[')
		for _, it := range v.items {
			if !canonicalOf(it, b) {
				return false
			}
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case 's':
		b.WriteString(strconv.Quote(v.str))
	default:
		b.WriteString(v.raw)
	}
	return true
}
