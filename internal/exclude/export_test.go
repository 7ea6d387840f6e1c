package exclude

// Empty reports whether m excludes nothing at all (tests only).
func (m *Matcher) Empty() bool {
	return m == nil || (len(m.literal) == 0 && m.globs == nil)
}
