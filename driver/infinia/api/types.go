package api

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Volume is a block volume of a dataset.
type Volume struct {
	UUID      string         `json:"uuid"`
	Name      string         `json:"name"`
	VolumeID  int64          `json:"volumeid"`
	WWN       string         `json:"wwn"`
	SN        string         `json:"sn"`
	BlockSize int64          `json:"block_size"`
	NBlocks   int64          `json:"nblocks"`
	LCore     int64          `json:"lcore"`
	XAttrs    map[string]any `json:"xattrs,omitempty"`
	Subsystem string         `json:"subsystem"` // the NVMe-oF subsystem it is a namespace of
	NSID      Flex           `json:"nsid"`
}

// Size is the volume's size in bytes.
func (v *Volume) Size() int64 { return v.BlockSize * v.NBlocks }

// NewVolume is the body of a volume creation.
type NewVolume struct {
	VolumeName string            `json:"volumeName"`
	NBlocks    int64             `json:"nblocks"`
	BlockSize  int64             `json:"block_size"`
	NvmfTarget string            `json:"nvmfTarget"`
	NvmfProp   NvmfProp          `json:"nvmfProp"`
	XAttrs     map[string]string `json:"xattrs,omitempty"`
}

// NvmfProp names the NVMe-oF transport.
type NvmfProp struct {
	Transport string `json:"transport"`
}

// Subsystem is an NVMe-oF subsystem of a subtenant.
type Subsystem struct {
	Name         string      `json:"name"`
	NQN          string      `json:"nqn"`
	SerialNumber string      `json:"serial_number"`
	ModelNumber  string      `json:"model_number"`
	AllowAnyHost bool        `json:"allow_any_host"`
	Hosts        []string    `json:"hosts"`
	Namespaces   []Namespace `json:"namespaces"`
	Listeners    []Listener  `json:"listeners"`
}

// Namespace is a volume exported by a subsystem.
type Namespace struct {
	NSID   Flex   `json:"nsid"`
	Volume string `json:"volume"`
	UUID   string `json:"uuid"`
	NGUID  string `json:"nguid"`
}

// Listener is where a subsystem accepts connections (one per instance).
type Listener struct {
	TrType     string   `json:"trtype"`
	AdrFam     string   `json:"adrfam"`
	TrSvcID    Flex     `json:"trsvcid"`
	TrAddrs    []string `json:"traddrs"`
	InstanceID Flex     `json:"instance_id"`
}

// NewSubsystem is the body of a subsystem creation.
type NewSubsystem struct {
	Transport    string `json:"transport"`
	ReqInstances []int  `json:"reqInstances"`
	Port         int    `json:"port"`
}

// Service is a subtenant's service; block services keep their volumes in
// Dataset.
type Service struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Dataset   string `json:"dataset"`
	Instances []int  `json:"instances"`
}

// DatasetName is where the service's volumes live (its own name when the
// server does not say).
func (s *Service) DatasetName() string {
	if s.Dataset != "" {
		return s.Dataset
	}
	return s.Name
}

// Dataset, Subtenant: quota (0 = unlimited) and usage in bytes.
type Dataset struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	BulkQuota int64  `json:"bulk_quota"`
	Usage     int64  `json:"usage"`
}

// Subtenant is a tenant's subtenant.
type Subtenant struct {
	Name      string `json:"name"`
	BulkQuota int64  `json:"bulk_quota"`
	Usage     int64  `json:"usage"`
}

// Instance is a cluster node that can expose volumes.
type Instance struct {
	InstanceID int    `json:"instance_id"`
	Hostname   string `json:"hostname"`
	DataIP     string `json:"data_ip"`
}

// Capacity is the cluster's raw capacity.
type Capacity struct {
	Total   int64   `json:"total"`
	Used    int64   `json:"used"`
	Percent float64 `json:"percent"`
}

// Flex is a value the API may send as a number or a string ("4420" or
// 4420); it is kept as its text.
type Flex string

// UnmarshalJSON accepts a string, a number or null.
func (f *Flex) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*f = ""
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		*f = Flex(str)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*f = Flex(n.String())
	return nil
}

// Int is the value as an integer (0 when it is none).
func (f Flex) Int() int {
	n, _ := strconv.Atoi(string(f))
	return n
}
