package infinia

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The JSON shapes of the answers. Handlers build them under s.mu, so that
// encoding (after the lock is released) never reads the live tree.

type sizeJSON struct {
	Name  string `json:"name"`
	Quota int64  `json:"bulk_quota"`
	Usage int64  `json:"usage"`
}

type serviceJSON struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Dataset   string `json:"dataset"`
	Instances []int  `json:"instances"`
}

type datasetJSON struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Quota int64  `json:"bulk_quota"`
	Usage int64  `json:"usage"`
}

type subsystemJSON struct {
	Name         string          `json:"name"`
	NQN          string          `json:"nqn"`
	Serial       string          `json:"serial_number"`
	Model        string          `json:"model_number"`
	AllowAnyHost bool            `json:"allow_any_host"`
	Hosts        []string        `json:"hosts"`
	Namespaces   []namespaceJSON `json:"namespaces"`
	Listeners    []listenerJSON  `json:"listeners"`
}

type namespaceJSON struct {
	NSID   int    `json:"nsid"`
	Volume string `json:"volume"`
	UUID   string `json:"uuid"`
	NGUID  string `json:"nguid"`
}

type listenerJSON struct {
	TrType     string   `json:"trtype"`
	AdrFam     string   `json:"adrfam"`
	TrSvcID    string   `json:"trsvcid"`
	TrAddrs    []string `json:"traddrs"`
	InstanceID int      `json:"instance_id"`
}

// modelNumber is what every subsystem reports as its model.
const modelNumber = "RED Controller"

func volumeJSON(v *volume) volume {
	out := *v
	out.Xattrs = maps.Clone(v.Xattrs)
	if out.Xattrs == nil {
		out.Xattrs = map[string]any{}
	}
	return out
}

func serviceOf(cl *cluster, name string, sv *service) serviceJSON {
	ids := slices.Clone(sv.Instances)
	if ids == nil {
		ids = []int{}
		for _, in := range cl.Instances {
			ids = append(ids, in.ID)
		}
	}
	return serviceJSON{Name: name, Type: "block", Dataset: sv.Dataset, Instances: ids}
}

func subsystemOf(cl *cluster, name string, ss *subsystem) subsystemJSON {
	out := subsystemJSON{Name: name, NQN: ss.NQN, Serial: ss.Serial, Model: modelNumber,
		AllowAnyHost: ss.AllowAnyHost, Hosts: slices.Clone(ss.Hosts),
		Namespaces: []namespaceJSON{}, Listeners: []listenerJSON{}}
	if out.Hosts == nil {
		out.Hosts = []string{}
	}
	for _, ns := range ss.Namespaces {
		out.Namespaces = append(out.Namespaces, namespaceJSON{NSID: ns.NSID, Volume: ns.Volume, UUID: ns.UUID, NGUID: nguid(ns.UUID)})
	}
	for _, l := range ss.Listeners {
		in, ok := cl.instance(l.InstanceID)
		if !ok {
			continue
		}
		fam := "IPv4"
		if strings.Contains(in.DataIP, ":") {
			fam = "IPv6"
		}
		out.Listeners = append(out.Listeners, listenerJSON{TrType: "TCP", AdrFam: fam, TrSvcID: strconv.Itoa(ss.Port),
			TrAddrs: []string{in.DataIP}, InstanceID: l.InstanceID})
	}
	return out
}
