package infinia

import (
	"fmt"
	"slices"
)

// state is the object tree; it is persisted whole as JSON (state.json),
// so every field is exported to encoding/json.
type state struct {
	Clusters map[string]*cluster `json:"clusters"`
	Accounts []Account           `json:"accounts"`
	// NextVolumeID numbers volumes (volumeid) across the simulator.
	NextVolumeID int `json:"next_volume_id"`
}

type cluster struct {
	Capacity  int64              `json:"capacity"`
	Instances []Instance         `json:"instances"`
	Tenants   map[string]*tenant `json:"tenants"`
}

type tenant struct {
	Quota      int64                 `json:"bulk_quota"`
	Subtenants map[string]*subtenant `json:"subtenants"`
}

type subtenant struct {
	Quota      int64                 `json:"bulk_quota"`
	Services   map[string]*service   `json:"services"`
	Datasets   map[string]*dataset   `json:"datasets"`
	Subsystems map[string]*subsystem `json:"subsystems"`
}

type service struct {
	Dataset   string `json:"dataset"`
	Instances []int  `json:"instances,omitempty"` // nil: every instance of the cluster
}

type dataset struct {
	Quota   int64              `json:"bulk_quota"`
	Volumes map[string]*volume `json:"volumes"`
}

type volume struct {
	UUID      string         `json:"uuid"`
	Name      string         `json:"name"`
	VolumeID  int            `json:"volumeid"`
	WWN       string         `json:"wwn"`
	SN        string         `json:"sn"`
	BlockSize int64          `json:"block_size"`
	NBlocks   int64          `json:"nblocks"`
	LCore     int            `json:"lcore"`
	Xattrs    map[string]any `json:"xattrs"`
	Subsystem string         `json:"subsystem"` // "" when it is no namespace
	NSID      int            `json:"nsid"`
}

func (v *volume) size() int64 { return v.BlockSize * v.NBlocks }

type subsystem struct {
	NQN          string      `json:"nqn"`
	Serial       string      `json:"serial_number"`
	AllowAnyHost bool        `json:"allow_any_host"`
	Port         int         `json:"port"`
	ReqInstances []int       `json:"req_instances"`
	Hosts        []string    `json:"hosts"`
	Namespaces   []namespace `json:"namespaces"`
	Listeners    []listener  `json:"listeners"`
}

type namespace struct {
	NSID    int    `json:"nsid"`
	Dataset string `json:"dataset"`
	Volume  string `json:"volume"`
	UUID    string `json:"uuid"`
}

// listener is one instance's listener; ExposedBy are the volumes
// ("<dataset>/<volume>") whose expose asked for it: unexpose removes a
// volume's claim and the listener goes with the last claim.
type listener struct {
	InstanceID int      `json:"instance_id"`
	ExposedBy  []string `json:"exposed_by"`
}

// newState builds the tree of a seed.
func newState(seed *Seed) (*state, error) {
	st := &state{Clusters: map[string]*cluster{}, NextVolumeID: 1}
	for _, cs := range seed.Clusters {
		if err := st.addCluster(cs); err != nil {
			return nil, err
		}
	}
	for _, a := range seed.Accounts {
		if err := st.addAccount(a); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (st *state) addCluster(cs ClusterSeed) error {
	if !validName(cs.Name) {
		return fmt.Errorf("infinia: seed: bad cluster name %q", cs.Name)
	}
	if _, ok := st.Clusters[cs.Name]; ok {
		return fmt.Errorf("infinia: seed: cluster %s twice", cs.Name)
	}
	c := &cluster{Capacity: cs.Capacity, Tenants: map[string]*tenant{}}
	if err := c.setInstances(cs.Instances); err != nil {
		return fmt.Errorf("infinia: seed: cluster %s: %w", cs.Name, err)
	}
	st.Clusters[cs.Name] = c
	for _, ts := range cs.Tenants {
		if err := st.addTenant(cs.Name, ts); err != nil {
			return err
		}
	}
	return nil
}

func (c *cluster) setInstances(in []Instance) error {
	seen := map[int]bool{}
	for _, i := range in {
		if i.ID <= 0 || seen[i.ID] {
			return fmt.Errorf("instance id %d must be positive and unique", i.ID)
		}
		if i.DataIP == "" {
			return fmt.Errorf("instance %d needs a data_ip", i.ID)
		}
		seen[i.ID] = true
	}
	c.Instances = slices.Clone(in)
	slices.SortFunc(c.Instances, func(a, b Instance) int { return a.ID - b.ID })
	return nil
}

func (c *cluster) instance(id int) (Instance, bool) {
	for _, i := range c.Instances {
		if i.ID == id {
			return i, true
		}
	}
	return Instance{}, false
}

func (st *state) addTenant(c string, ts TenantSeed) error {
	cl, ok := st.Clusters[c]
	if !ok {
		return fmt.Errorf("infinia: cluster %s not found", c)
	}
	if !validName(ts.Name) {
		return fmt.Errorf("infinia: bad tenant name %q", ts.Name)
	}
	if _, ok := cl.Tenants[ts.Name]; ok {
		return fmt.Errorf("infinia: tenant %s/%s already exists", c, ts.Name)
	}
	cl.Tenants[ts.Name] = &tenant{Quota: ts.Quota, Subtenants: map[string]*subtenant{}}
	for _, ss := range ts.Subtenants {
		if err := st.addSubtenant(c, ts.Name, ss); err != nil {
			return err
		}
	}
	return nil
}

func (st *state) addSubtenant(c, t string, ss SubtenantSeed) error {
	tn := st.tenant(c, t)
	if tn == nil {
		return fmt.Errorf("infinia: tenant %s/%s not found", c, t)
	}
	if !validName(ss.Name) {
		return fmt.Errorf("infinia: bad subtenant name %q", ss.Name)
	}
	if _, ok := tn.Subtenants[ss.Name]; ok {
		return fmt.Errorf("infinia: subtenant %s/%s/%s already exists", c, t, ss.Name)
	}
	tn.Subtenants[ss.Name] = &subtenant{Quota: ss.Quota, Services: map[string]*service{},
		Datasets: map[string]*dataset{}, Subsystems: map[string]*subsystem{}}
	for _, sv := range ss.Services {
		if err := st.addService(c, t, ss.Name, sv); err != nil {
			return err
		}
	}
	return nil
}

func (st *state) addService(c, t, s string, sv ServiceSeed) error {
	sub := st.subtenant(c, t, s)
	if sub == nil {
		return fmt.Errorf("infinia: subtenant %s/%s/%s not found", c, t, s)
	}
	if !validName(sv.Name) {
		return fmt.Errorf("infinia: bad service name %q", sv.Name)
	}
	if _, ok := sub.Services[sv.Name]; ok {
		return fmt.Errorf("infinia: service %s/%s/%s/%s already exists", c, t, s, sv.Name)
	}
	cl := st.Clusters[c]
	for _, id := range sv.Instances {
		if _, ok := cl.instance(id); !ok {
			return fmt.Errorf("infinia: service %s: cluster %s has no instance %d", sv.Name, c, id)
		}
	}
	sub.Services[sv.Name] = &service{Dataset: sv.Name, Instances: slices.Clone(sv.Instances)}
	if _, ok := sub.Datasets[sv.Name]; !ok {
		sub.Datasets[sv.Name] = &dataset{Quota: sv.Quota, Volumes: map[string]*volume{}}
	}
	return nil
}

func (st *state) addAccount(a Account) error {
	if a.User == "" || a.Password == "" {
		return fmt.Errorf("infinia: account %q needs a user and a password", a.Key())
	}
	if a.Level != "" && !st.levelExists(a.Level) {
		return fmt.Errorf("infinia: account %s: level %q does not exist", a.Key(), a.Level)
	}
	for _, b := range st.Accounts {
		if b.Level == a.Level && b.User == a.User {
			return fmt.Errorf("infinia: account %s already exists", a.Key())
		}
	}
	st.Accounts = append(st.Accounts, a)
	return nil
}

// levelExists: "c", "c/t" or "c/t/s" names an existing object.
func (st *state) levelExists(level string) bool {
	p := splitLevel(level)
	switch len(p) {
	case 1:
		return st.Clusters[p[0]] != nil
	case 2:
		return st.tenant(p[0], p[1]) != nil
	case 3:
		return st.subtenant(p[0], p[1], p[2]) != nil
	}
	return false
}

func (st *state) tenant(c, t string) *tenant {
	if cl := st.Clusters[c]; cl != nil {
		return cl.Tenants[t]
	}
	return nil
}

func (st *state) subtenant(c, t, s string) *subtenant {
	if tn := st.tenant(c, t); tn != nil {
		return tn.Subtenants[s]
	}
	return nil
}

func (st *state) dataset(c, t, s, d string) *dataset {
	if sub := st.subtenant(c, t, s); sub != nil {
		return sub.Datasets[d]
	}
	return nil
}

// sortedKeys returns a map's keys in order (lists are sorted by name).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
