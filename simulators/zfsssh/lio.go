package zfsssh

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// LIOState is a snapshot of the simulated LIO target: what targetcli shows
// and what its saveconfig writes (in a shape close to rtslib's).
type LIOState struct {
	StorageObjects []StorageObject `json:"storage_objects"`
	Targets        []ISCSITarget   `json:"targets"`
}

// StorageObject is a backstore: /backstores/<plugin>/<name>.
type StorageObject struct {
	Plugin     string            `json:"plugin"` // "block" or "fileio"
	Name       string            `json:"name"`
	Dev        string            `json:"dev"` // e.g. /dev/zvol/tank/k8s/pvc-1
	Size       int64             `json:"size"`
	WWN        string            `json:"wwn"`
	Readonly   bool              `json:"readonly"`
	WriteBack  bool              `json:"write_back"`
	Attributes map[string]string `json:"attributes"`
}

// ISCSITarget is /iscsi/<wwn>.
type ISCSITarget struct {
	WWN  string `json:"wwn"`
	TPGs []TPG  `json:"tpgs"`
}

// TPG is a target portal group, /iscsi/<wwn>/tpg<tag>.
type TPG struct {
	Tag        int               `json:"tag"`
	Enable     bool              `json:"enable"`
	Attributes map[string]string `json:"attributes"`
	Auth       map[string]string `json:"auth"` // userid, password, mutual_userid, mutual_password
	Parameters map[string]string `json:"parameters"`
	LUNs       []LUN             `json:"luns"`
	NodeACLs   []NodeACL         `json:"node_acls"`
	Portals    []Portal          `json:"portals"`
}

// LUN maps a TPG LUN to a storage object.
type LUN struct {
	Index         int    `json:"index"`
	StorageObject string `json:"storage_object"` // "/backstores/block/<name>"
}

// NodeACL is an initiator allowed into a TPG.
type NodeACL struct {
	WWN        string            `json:"node_wwn"`
	Auth       map[string]string `json:"auth"`
	MappedLUNs []MappedLUN       `json:"mapped_luns"`
}

// MappedLUN exposes a TPG LUN to one initiator.
type MappedLUN struct {
	Index        int  `json:"index"`
	TPGLUN       int  `json:"tpg_lun"`
	WriteProtect bool `json:"write_protect"`
}

// Portal is a network portal of a TPG.
type Portal struct {
	IP   string `json:"ip_address"`
	Port int    `json:"port"`
}

// lioModel is the live LIO configuration ("configfs"), persisted after each
// change so a restarted simulator keeps its targets.
type lioModel struct {
	mu    sync.Mutex
	file  string
	st    LIOState
	prefs map[string]string // targetcli's global preferences
	saved []byte            // what the file holds, to skip rewriting it
}

type lioFile struct {
	LIOState
	Prefs map[string]string `json:"prefs"`
}

// targetcli-fb's default preferences that change behaviour here.
func defaultTargetcliPrefs() map[string]string {
	return map[string]string{
		"auto_add_default_portal": "true", "auto_add_mapped_luns": "true", "auto_cd_after_create": "false",
		"auto_enable_tpgt": "true", "auto_save_on_exit": "true", "auto_use_daemon": "false",
		"color_mode": "true", "export_backstore_name_as_model": "true", "loglevel_console": "info",
		"max_backup_files": "10", "prompt_length": "30", "tree_max_depth": "0",
	}
}

func loadLIO(file string) (*lioModel, error) {
	m := &lioModel{file: file, prefs: defaultTargetcliPrefs()}
	if file == "" {
		return m, nil
	}
	var f lioFile
	ok, err := readJSON(file, &f)
	if err != nil || !ok {
		return m, err
	}
	m.st = f.LIOState
	for k, v := range f.Prefs {
		m.prefs[k] = v
	}
	return m, nil
}

// save persists the model; the caller holds m.mu or owns m.
func (m *lioModel) saveLocked() error {
	if m.file == "" {
		return nil
	}
	data, err := marshalJSON(lioFile{LIOState: m.st, Prefs: m.prefs})
	if err != nil || bytes.Equal(data, m.saved) {
		return err
	}
	if err := writeFileAtomic(m.file, data); err != nil {
		return err
	}
	m.saved = data
	return nil
}

func (m *lioModel) save() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saveLocked()
}

// snapshot deep-copies the state.
func (m *lioModel) snapshot() LIOState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneJSON(m.st)
}

func cloneJSON[T any](v T) T {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("zfsssh: state is not serialisable: %v", err))
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		panic(fmt.Sprintf("zfsssh: state does not round-trip: %v", err))
	}
	return out
}

// LIO returns a snapshot of the simulated LIO target.
func (s *Server) LIO() LIOState { return s.lio.snapshot() }

func (m *lioModel) storageObject(plugin, name string) *StorageObject {
	for i := range m.st.StorageObjects {
		if so := &m.st.StorageObjects[i]; so.Plugin == plugin && so.Name == name {
			return so
		}
	}
	return nil
}

func (m *lioModel) storageObjectByDev(dev string) *StorageObject {
	for i := range m.st.StorageObjects {
		if so := &m.st.StorageObjects[i]; so.Dev == dev {
			return so
		}
	}
	return nil
}

func (m *lioModel) objects(plugin string) []*StorageObject {
	var out []*StorageObject
	for i := range m.st.StorageObjects {
		if so := &m.st.StorageObjects[i]; so.Plugin == plugin {
			out = append(out, so)
		}
	}
	return out
}

func (m *lioModel) target(wwn string) *ISCSITarget {
	for i := range m.st.Targets {
		if t := &m.st.Targets[i]; t.WWN == wwn {
			return t
		}
	}
	return nil
}

func (t *ISCSITarget) tpg(tag int) *TPG {
	for i := range t.TPGs {
		if g := &t.TPGs[i]; g.Tag == tag {
			return g
		}
	}
	return nil
}

// inUse reports whether a LUN uses the storage object.
func (m *lioModel) inUse(path string) bool {
	for _, t := range m.st.Targets {
		for _, g := range t.TPGs {
			for _, l := range g.LUNs {
				if l.StorageObject == path {
					return true
				}
			}
		}
	}
	return false
}

// deleteStorageObject removes it and, as targetcli does, the LUNs using it.
func (m *lioModel) deleteStorageObject(plugin, name string) {
	path := "/backstores/" + plugin + "/" + name
	for ti := range m.st.Targets {
		for gi := range m.st.Targets[ti].TPGs {
			g := &m.st.Targets[ti].TPGs[gi]
			var keep []LUN
			for _, l := range g.LUNs {
				if l.StorageObject == path {
					g.dropMappedLUNs(l.Index)
					continue
				}
				keep = append(keep, l)
			}
			g.LUNs = keep
		}
	}
	var keep []StorageObject
	for _, so := range m.st.StorageObjects {
		if so.Plugin != plugin || so.Name != name {
			keep = append(keep, so)
		}
	}
	m.st.StorageObjects = keep
}

func (g *TPG) dropMappedLUNs(tpgLUN int) {
	for ai := range g.NodeACLs {
		acl := &g.NodeACLs[ai]
		var keep []MappedLUN
		for _, ml := range acl.MappedLUNs {
			if ml.TPGLUN != tpgLUN {
				keep = append(keep, ml)
			}
		}
		acl.MappedLUNs = keep
	}
}

func (m *lioModel) sortTargets() {
	sort.Slice(m.st.Targets, func(i, j int) bool { return m.st.Targets[i].WWN < m.st.Targets[j].WWN })
}

// Kernel defaults of a new iSCSI TPG (targetcli then sets authentication=0).
func defaultTPGAttributes() map[string]string {
	return map[string]string{
		"authentication": "0", "cache_dynamic_acls": "0", "default_cmdsn_depth": "64", "default_erl": "0",
		"demo_mode_discovery": "1", "demo_mode_write_protect": "1", "fabric_prot_type": "0",
		"generate_node_acls": "0", "login_keys_workaround": "1", "login_timeout": "15", "netif_timeout": "2",
		"prod_mode_write_protect": "0", "t10_pi": "0", "tpg_enabled_sendtargets": "1",
	}
}

func defaultTPGParameters() map[string]string {
	return map[string]string{
		"AuthMethod": "CHAP,None", "DataDigest": "CRC32C,None", "DataPDUInOrder": "Yes", "DataSequenceInOrder": "Yes",
		"DefaultTime2Retain": "20", "DefaultTime2Wait": "2", "ErrorRecoveryLevel": "0", "FirstBurstLength": "65536",
		"HeaderDigest": "CRC32C,None", "IFMarkInt": "Reject", "IFMarker": "No", "ImmediateData": "Yes",
		"InitialR2T": "Yes", "MaxBurstLength": "262144", "MaxConnections": "1", "MaxOutstandingR2T": "1",
		"MaxRecvDataSegmentLength": "8192", "MaxXmitDataSegmentLength": "262144", "OFMarkInt": "Reject",
		"OFMarker": "No", "TargetAlias": "LIO Target",
	}
}

func defaultAuth() map[string]string {
	return map[string]string{"userid": "", "password": "", "mutual_userid": "", "mutual_password": ""}
}

// Kernel defaults of a block backstore's attributes.
func defaultSOAttributes() map[string]string {
	return map[string]string{
		"block_size": "512", "emulate_3pc": "1", "emulate_caw": "1", "emulate_dpo": "1", "emulate_fua_read": "1",
		"emulate_fua_write": "1", "emulate_model_alias": "1", "emulate_pr": "1", "emulate_rest_reord": "0",
		"emulate_tas": "1", "emulate_tpu": "0", "emulate_tpws": "0", "emulate_ua_intlck_ctrl": "0",
		"emulate_write_cache": "0", "enforce_pr_isids": "1", "force_pr_aptpl": "0", "is_nonrot": "0",
		"max_unmap_block_desc_count": "1", "max_unmap_lba_count": "8192", "max_write_same_len": "65535",
		"optimal_sectors": "16384", "pi_prot_format": "0", "pi_prot_type": "0", "queue_depth": "128",
		"unmap_granularity": "1", "unmap_granularity_alignment": "0", "unmap_zeroes_data": "0",
		"hw_block_size": "512", "hw_max_sectors": "16384", "hw_queue_depth": "128",
	}
}

// Attributes the kernel shows but does not let one write.
var roSOAttributes = map[string]bool{"hw_block_size": true, "hw_max_sectors": true, "hw_queue_depth": true}

func randomHex(n int) string {
	b := make([]byte, (n+1)/2)
	rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// unitSerial is a T10 unit serial in rtslib's form (a UUID).
func unitSerial() string {
	h := randomHex(32)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
