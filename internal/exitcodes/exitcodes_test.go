package exitcodes

import (
	"errors"
	"fmt"
	"testing"
)

func TestFrom(t *testing.T) {
	base := errors.New("boom")
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, Success},
		{"plain", base, Other},
		{"new", New(PasswordIncorrect, base), PasswordIncorrect},
		{"wrapped by fmt", fmt.Errorf("ctx: %w", New(MountPoint, base)), MountPoint},
		{"errorf", Errorf(Usage, "bad %s", "flag"), Usage},
		{"bare code", New(SigInt, nil), SigInt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := From(c.err); got != c.want {
				t.Errorf("From = %d, want %d", got, c.want)
			}
		})
	}
	if !errors.Is(New(Usage, base), base) {
		t.Error("Unwrap broken")
	}
	if !Silent(New(SigInt, nil)) || Silent(New(SigInt, base)) {
		t.Error("Silent broken")
	}
}
