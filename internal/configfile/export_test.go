package configfile

// SetPath changes where WriteFile writes the config (tests only).
func (cf *ConfFile) SetPath(path string) { cf.path = path }
