package nodeid

import "os"

// Facts are the facts about a node that node_id and node topology use. The
// zero value of each function reads the host (WithDefaults).
type Facts struct {
	NodeName string // CSI_NODE_ID
	Hostname func() (string, error)
	ReadFile func(path string) ([]byte, error)
	Getenv   func(string) string
}

// WithDefaults fills the unset functions with the host's: os.Hostname,
// os.ReadFile, os.Getenv.
func (f Facts) WithDefaults() Facts {
	if f.Hostname == nil {
		f.Hostname = os.Hostname
	}
	if f.ReadFile == nil {
		f.ReadFile = os.ReadFile
	}
	if f.Getenv == nil {
		f.Getenv = os.Getenv
	}
	return f
}
