package cliflags

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestExpandO(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string // "" with wantErr
		err  bool
	}{
		{"no -o", "g c m", "g c m", false},
		{"at end", "g c m -o passfile=pw,ro,q", "g -passfile=pw -ro -q c m", false},
		{"at start", "g -o ro c m", "g -ro c m", false},
		{"attached", "g c -o=ro,,fg m", "g -ro -fg c m", false},
		{"last wins", "g -o ro c -o fg m", "g -fg c m", false},
		{"empty pieces dropped", "g c m -o ,,", "g c m", false},
		{"standalone -- disables", "g -o ro -- c m", "g -o ro -- c m", false},
		{"piece o fatal", "g c m -o ro,o", "", true},
		{"piece -o fatal", "g c m -o -o", "", true},
		{"trailing -o fatal", "g c m -o", "", true},
		{"dashed piece", "g c m -o -ro", "g --ro c m", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ExpandO(strings.Fields(c.in))
			if c.err {
				if err == nil {
					t.Fatalf("got %q, want error", got)
				}
				return
			}
			if err != nil || strings.Join(got, " ") != c.want {
				t.Fatalf("got %q %v, want %q", got, err, c.want)
			}
		})
	}
}

func TestAddDashes(t *testing.T) {
	cases := []struct{ in, want string }{
		{"g -fg c m", "g --fg c m"},
		{"g --fg c m", "g --fg c m"},
		{"g -h", "g -h"},
		{"g -hh", "g --hh"},
		{"g - x", "g - x"},
		{"g -passfile=x c", "g --passfile=x c"},
		{"g -extpass -X c", "g --extpass --X c"},
		{"g -q -- -c -m", "g --q -- -c -m"},
	}
	for _, c := range cases {
		if got := strings.Join(AddDashes(strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("AddDashes(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestParse: the GNU-style rules of the package comment, each with an
// example, and the errors.
func TestParse(t *testing.T) {
	type vals struct {
		fg, ro bool
		pass   string
		ex     []string
		n      int
		u      uint8
		idle   time.Duration
		help   bool
	}
	newSet := func(v *vals) *Set {
		s := New()
		s.Add(&v.fg, "", "foreground", "fg", "f")
		s.Add(&v.ro, "", "read-only", "ro")
		s.Add(&v.pass, "FILE", "password file", "passfile")
		s.Add(&v.ex, "PATH", "exclude", "exclude", "e")
		s.Add(&v.n, "int", "n", "n")
		s.Add(&v.u, "uint8", "u", "u")
		s.Add(&v.idle, "duration", "idle", "idle", "i")
		s.Add(&v.help, "", "help", "help")
		return s
	}
	cases := []struct {
		name, argv string
		want       vals
		pos        []string
		given      []string
		err        string
	}{
		{"interleaved", "g -fg c --passfile pw m", vals{fg: true, pass: "pw"}, []string{"c", "m"}, []string{"fg", "passfile"}, ""},
		{"alias and attached value", "g -f -passfile=x -i 1m c", vals{fg: true, pass: "x", idle: time.Minute}, []string{"c"}, []string{"fg", "passfile", "idle"}, ""},
		{"bool takes only attached values", "g -ro=false false", vals{}, []string{"false"}, []string{"ro"}, ""},
		{"list repeats", "g -e a --exclude b -e=c", vals{ex: []string{"a", "b", "c"}}, nil, []string{"exclude"}, ""},
		{"-- ends flags", "g -fg -- -ro x", vals{fg: true}, []string{"-ro", "x"}, []string{"fg"}, ""},
		{"-o expands", "g c m -o ro,fg", vals{fg: true, ro: true}, []string{"c", "m"}, []string{"fg", "ro"}, ""},
		{"x- options ignored", "g -x-systemd.automount c", vals{}, []string{"c"}, nil, ""},
		{"lone -h is -help", "g -h", vals{help: true}, nil, []string{"help"}, ""},
		{"lone - is positional", "g -", vals{}, []string{"-"}, nil, ""},
		{"numbers", "g -n 0x10 -u 7", vals{n: 16, u: 7}, nil, []string{"n", "u"}, ""},
		{"unknown", "g -nope", vals{}, nil, nil, "unknown flag: --nope"},
		{"missing value", "g -passfile", vals{}, nil, nil, "flag needs an argument: --passfile"},
		{"bad value", "g -u 300", vals{}, nil, nil, `invalid argument "300" for "--u" flag`},
		{"triple dash", "g ---fg", vals{}, nil, nil, "bad flag syntax: ---fg"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v vals
			res, err := newSet(&v).Parse(strings.Fields(c.argv))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v, c.want) {
				t.Errorf("values %+v, want %+v", v, c.want)
			}
			if !reflect.DeepEqual(res.Positional, c.pos) {
				t.Errorf("positional %q, want %q", res.Positional, c.pos)
			}
			if len(res.Given) != len(c.given) {
				t.Errorf("given %v, want %v", res.Given, c.given)
			}
			for _, g := range c.given {
				if !res.Given[g] {
					t.Errorf("given %v, want %v", res.Given, c.given)
				}
			}
		})
	}
}

// TestDefaults: Defs reports each variable's value at Add as its default.
func TestDefaults(t *testing.T) {
	b, s, n, d := true, "auto", 16, 3*time.Second
	set := New()
	set.Add(&b, "", "", "b")
	set.Add(&s, "X", "", "s")
	set.Add(&n, "int", "", "n")
	set.Add(&d, "duration", "", "d")
	var got []string
	for _, def := range set.Defs() {
		got = append(got, def.Names[0]+"="+def.Default)
	}
	if want := []string{"b=true", "s=auto", "n=16", "d=3s"}; !reflect.DeepEqual(got, want) {
		t.Errorf("defaults %q, want %q", got, want)
	}
}

// TestBadTable: an unsupported variable type or a name given twice is a
// programming error that Parse reports instead of panicking.
func TestBadTable(t *testing.T) {
	var f float64
	s := New()
	s.Add(&f, "", "", "f")
	if _, err := s.Parse([]string{"g"}); err == nil {
		t.Error("float64 flag: no error")
	}
	var a, b bool
	s = New()
	s.Add(&a, "", "", "x")
	s.Add(&b, "", "", "x")
	if _, err := s.Parse([]string{"g"}); err == nil {
		t.Error("name given twice: no error")
	}
}
