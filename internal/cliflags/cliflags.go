// Package cliflags parses a command line the way gocryptfs does
// (docs/cli.md section 2), which neither Go's flag package nor a GNU
// getopt library does in full:
//
//   - one and two leading dashes are the same ("-fg" is "--fg"), so
//     there are no clusters of one-letter flags;
//   - flags and positional arguments may be interleaved; "--" ends the
//     flags;
//   - a boolean flag takes a value only attached ("-ro=false"), any other
//     flag its value attached or as the next argument;
//   - "-o a,b=c" (mount(8) and fstab style) is expanded to "-a -b=c";
//   - options of fstab and systemd that start with "x-" are ignored;
//   - a lone "-h" is "-help".
//
// A Set is the table of flags of one parse: Add registers each flag with
// the variable its value goes to (the variable's value at that moment is
// the default that Defs reports), Parse fills them. A Set is not safe for
// concurrent use; the package holds no state, so separate Sets are
// independent.
package cliflags

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kind is the value type of a flag, given by the variable it fills.
type Kind int

const (
	// Bool fills a *bool.
	Bool Kind = iota
	// String fills a *string.
	String
	// List fills a *[]string: the flag may repeat, values accumulate.
	List
	// Int fills an *int (decimal, or 0x/0o/0b prefixed).
	Int
	// Uint8 fills a *uint8.
	Uint8
	// Duration fills a *time.Duration (time.ParseDuration).
	Duration
)

// Def describes one flag. Names[0] is its canonical name, the rest are
// aliases ("f" for "fg"); names are given without dashes.
type Def struct {
	Names []string
	Kind  Kind
	// ArgName names the value in help texts ("FILE"); empty for booleans.
	ArgName string
	Usage   string
	// Default is the variable's value when the flag was added, as text.
	Default string
	ptr     any
}

// Set is the flag table of one parse.
type Set struct {
	defs   []*Def
	byName map[string]*Def
}

// New returns an empty Set.
func New() *Set { return &Set{byName: map[string]*Def{}} }

// Add registers a flag that fills ptr, one of *bool, *string, *[]string,
// *int, *uint8 and *time.Duration; other types, a name given twice and a
// flag without a name are programming errors, reported by Parse. argName
// names the value in help texts.
func (s *Set) Add(ptr any, argName, usage string, names ...string) {
	d := &Def{Names: names, ArgName: argName, Usage: usage, ptr: ptr, Kind: -1}
	switch p := ptr.(type) {
	case *bool:
		d.Kind, d.Default = Bool, strconv.FormatBool(*p)
	case *string:
		d.Kind, d.Default = String, *p
	case *[]string:
		d.Kind = List
	case *int:
		d.Kind, d.Default = Int, strconv.Itoa(*p)
	case *uint8:
		d.Kind, d.Default = Uint8, strconv.Itoa(int(*p))
	case *time.Duration:
		d.Kind, d.Default = Duration, p.String()
	}
	s.defs = append(s.defs, d)
	for _, n := range names {
		if _, dup := s.byName[n]; dup {
			d.Kind = -1
		}
		s.byName[n] = d
	}
}

// Defs returns the flags in the order they were added.
func (s *Set) Defs() []*Def { return append([]*Def(nil), s.defs...) }

// Result is what Parse found besides the flag values.
type Result struct {
	// Positional are the arguments that are not flags, in order.
	Positional []string
	// Given holds the canonical names of the flags that were given.
	Given map[string]bool
}

// Parse parses argv, whose first element is the program name, into the
// variables of the Set. The error says which argument is wrong.
func (s *Set) Parse(argv []string) (Result, error) {
	res := Result{Given: map[string]bool{}}
	for _, d := range s.defs {
		if d.Kind < 0 || len(d.Names) == 0 {
			return res, fmt.Errorf("internal error: flag %v: type %T or a name given twice", d.Names, d.ptr)
		}
	}
	if len(argv) == 0 {
		return res, nil
	}
	args, err := ExpandO(argv)
	if err != nil {
		return res, err
	}
	args = AddDashes(args)[1:]
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			res.Positional = append(res.Positional, args[i+1:]...)
			return res, nil
		}
		if arg == "-h" {
			arg = "--help"
		}
		if len(arg) < 2 || arg[0] != '-' {
			res.Positional = append(res.Positional, arg)
			continue
		}
		if !strings.HasPrefix(arg, "--") || strings.HasPrefix(arg, "---") {
			return res, fmt.Errorf("bad flag syntax: %s", arg)
		}
		name, value, hasValue := strings.Cut(arg[2:], "=")
		d, ok := s.byName[name]
		if !ok && strings.HasPrefix(name, "x-") {
			continue // fstab/systemd options (x-systemd.automount, ...) (docs/cli.md 5.4)
		}
		if !ok {
			return res, fmt.Errorf("unknown flag: --%s", name)
		}
		if !hasValue {
			if d.Kind == Bool {
				value = "true"
			} else {
				if i+1 >= len(args) {
					return res, fmt.Errorf("flag needs an argument: --%s", name)
				}
				i++
				value = args[i]
			}
		}
		if err := d.set(value); err != nil {
			return res, fmt.Errorf("invalid argument %q for \"--%s\" flag: %w", value, name, err)
		}
		res.Given[d.Names[0]] = true
	}
	return res, nil
}

// set parses value into the flag's variable.
func (d *Def) set(value string) error {
	switch p := d.ptr.(type) {
	case *bool:
		v, err := strconv.ParseBool(value)
		if err != nil {
			return err
		}
		*p = v
	case *string:
		*p = value
	case *[]string:
		*p = append(*p, value)
	case *int:
		v, err := strconv.ParseInt(value, 0, strconv.IntSize)
		if err != nil {
			return err
		}
		*p = int(v)
	case *uint8:
		v, err := strconv.ParseUint(value, 0, 8)
		if err != nil {
			return err
		}
		*p = uint8(v)
	case *time.Duration:
		v, err := time.ParseDuration(value)
		if err != nil {
			return err
		}
		*p = v
	}
	return nil
}

// ExpandO implements docs/cli.md 2.1: the last "-o VALUE" / "-o=VALUE"
// (anywhere in args) is removed and its comma-separated pieces are
// inserted as "-piece" arguments right after the program name. A
// standalone "--" anywhere disables the step. args[0] is the program name.
func ExpandO(args []string) ([]string, error) {
	for _, a := range args[1:] {
		if a == "--" {
			return args, nil
		}
	}
	rest := []string{}
	var oValue string
	found := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o":
			if i+1 >= len(args) {
				return nil, errors.New("the \"-o\" option requires an argument")
			}
			oValue, found = args[i+1], true
			i++
		case strings.HasPrefix(a, "-o="):
			oValue, found = a[len("-o="):], true
		default:
			rest = append(rest, a)
		}
	}
	if !found {
		return args, nil
	}
	out := []string{args[0]}
	for _, p := range strings.Split(oValue, ",") {
		if p == "" {
			continue
		}
		if p == "o" || p == "-o" {
			return nil, fmt.Errorf("you can't pass %q to -o", p)
		}
		out = append(out, "-"+p)
	}
	return append(out, rest...), nil
}

// AddDashes makes single and double dash equivalent (docs/cli.md 2): every
// argument after args[0] that starts with exactly one '-' gets a second
// one, except the lone "-h", a lone "-", and everything after a
// standalone "--". Separate values that start with one dash are rewritten
// too; this quirk of the reference is kept.
func AddDashes(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if len(a) >= 2 && a[0] == '-' && a[1] != '-' && a != "-h" {
			out[i] = "-" + a
		}
	}
	return out
}

// Quote renders argv as space-separated quoted strings, for messages.
func Quote(argv []string) string {
	q := make([]string, len(argv))
	for i, s := range argv {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, " ")
}
