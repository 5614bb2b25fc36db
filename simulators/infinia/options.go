package infinia

import (
	"errors"
	"log/slog"
	"time"
)

// Options configure a Server.
type Options struct {
	// StateDir holds everything that persists across New/Close: the object
	// tree (state.json and state.journal), the volumes' data files (volumes/<uuid>.img) and
	// the TLS certificate (tls/). Required.
	StateDir string
	// Plain serves http instead of https.
	Plain bool
	// TokenTTL is the lifetime of a login token (default 1h).
	TokenTTL time.Duration
	// Seed is what exists at the first start on an empty StateDir (nil:
	// DefaultSeed). A StateDir that already has a state ignores it.
	Seed *Seed
	// Target mirrors subsystems into a real NVMe-oF target (nil: the
	// exposure is only recorded). See Target.
	Target Target
	// Logger receives request logs (never passwords or tokens); nil
	// discards them.
	Logger *slog.Logger
	// FaultSeed seeds Faults' random error rates (default 1).
	FaultSeed uint64
}

// Seed describes the clusters and accounts a fresh simulator starts with.
type Seed struct {
	Clusters []ClusterSeed
	Accounts []Account
}

// ClusterSeed is one cluster: its raw capacity, its instances (the
// servers that expose volumes) and its tenants.
type ClusterSeed struct {
	Name      string
	Capacity  int64 // bytes; what capacity_percent reports as total
	Instances []Instance
	Tenants   []TenantSeed
}

// TenantSeed is a tenant and its subtenants.
type TenantSeed struct {
	Name       string
	Quota      int64 // bulk_quota in bytes, 0 = unlimited
	Subtenants []SubtenantSeed
}

// SubtenantSeed is a subtenant and its block services.
type SubtenantSeed struct {
	Name     string
	Quota    int64
	Services []ServiceSeed
}

// ServiceSeed is a block service; its volumes live in the dataset of the
// same name, whose bulk_quota is Quota.
type ServiceSeed struct {
	Name      string
	Quota     int64
	Instances []int // instance ids the service reports; nil = all of the cluster's
}

// Account is a service account that may log in. Level is where it lives:
// "<cluster>/<tenant>" (a tenant account, like DDN's csiAccount),
// "<cluster>/<tenant>/<subtenant>" (one subtenant only), "<cluster>" (the
// whole cluster) or "" (every cluster). The login's `level` header must
// equal it.
type Account struct {
	Level    string `json:"level"`
	User     string `json:"user"`
	Password string `json:"password"`
}

// Key is the account's name in a driver config: "<level>/<user>", e.g.
// "clu1/red/csiAccount".
func (a Account) Key() string {
	if a.Level == "" {
		return a.User
	}
	return a.Level + "/" + a.User
}

// Instance is a server of the cluster; DataIP is where its NVMe-oF
// listeners are.
type Instance struct {
	ID       int    `json:"instance_id"`
	Hostname string `json:"hostname"`
	DataIP   string `json:"data_ip"`
}

// Defaults of DefaultSeed.
const (
	DefaultCluster   = "clu1"
	DefaultTenant    = "red"
	DefaultSubtenant = "red"
	DefaultService   = "csiService"
	DefaultUser      = "csiAccount"
	DefaultPassword  = "switchyard-lab"
	DefaultPort      = 4420
)

// DefaultSeed is the lab's Infinia: cluster clu1 (1 TiB) with instances
// 1..3 (red-1..3 on 127.0.0.1..3), tenant red, subtenant red (quota 100
// GiB) with block service csiService (unlimited dataset), and the account
// clu1/red/csiAccount with password "switchyard-lab".
func DefaultSeed() *Seed {
	return &Seed{
		Clusters: []ClusterSeed{{
			Name:     DefaultCluster,
			Capacity: 1 << 40,
			Instances: []Instance{
				{ID: 1, Hostname: "red-1", DataIP: "127.0.0.1"},
				{ID: 2, Hostname: "red-2", DataIP: "127.0.0.2"},
				{ID: 3, Hostname: "red-3", DataIP: "127.0.0.3"},
			},
			Tenants: []TenantSeed{{
				Name: DefaultTenant,
				Subtenants: []SubtenantSeed{{
					Name:     DefaultSubtenant,
					Quota:    100 << 30,
					Services: []ServiceSeed{{Name: DefaultService}},
				}},
			}},
		}},
		Accounts: []Account{{Level: DefaultCluster + "/" + DefaultTenant, User: DefaultUser, Password: DefaultPassword}},
	}
}

// validate checks o and fills in the defaults.
func (o *Options) validate() error {
	if o.StateDir == "" {
		return errors.New("infinia: Options.StateDir is required: the object tree and the volumes' data persist there")
	}
	if o.TokenTTL < 0 {
		return errors.New("infinia: Options.TokenTTL must not be negative")
	}
	if o.TokenTTL == 0 {
		o.TokenTTL = time.Hour
	}
	if o.Seed == nil {
		o.Seed = DefaultSeed()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.FaultSeed == 0 {
		o.FaultSeed = 1
	}
	return nil
}
