package sharing

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
	"github.com/switchyard-csi/switchyard/simulators/zfsmodel"
)

// iscsi.extent (plugins/iscsi_/extents.py): the LUN backends, a zvol
// ("DISK", disk "zvol/<dataset>") or a file inside a dataset ("FILE").

// extentFields are the same on create and update (defaults apply on
// create only, in decode).
func (s *Service) extentFields() []field {
	name := field{name: "name", kind: kStr, required: true, maxLen: 64}
	size := field{name: "filesize", kind: kInt, def: 0}
	if s.v.AtLeast(25, 4, 0) {
		name.minLen = 1
	}
	if s.v.AtLeast(25, 10, 0) {
		size = field{name: "filesize", kind: kIntOrStr, def: "0"}
	}
	f := []field{
		name,
		{name: "type", kind: kStr, enum: strs("DISK", "FILE"), def: "DISK"},
		{name: "disk", kind: kStr, null: true},
		{name: "serial", kind: kStr, null: true},
		{name: "path", kind: kStr, null: true},
		size,
		{name: "blocksize", kind: kInt, enum: []any{512, 1024, 2048, 4096}, def: 512},
		{name: "pblocksize", kind: kBool, def: false},
		{name: "avail_threshold", kind: kInt, null: true, min: intp(1), max: intp(99)},
		{name: "comment", kind: kStr, def: ""},
		{name: "insecure_tpc", kind: kBool, def: true},
		{name: "xen", kind: kBool, def: false},
		{name: "rpm", kind: kStr, enum: strs("UNKNOWN", "SSD", "5400", "7200", "10000", "15000"), def: "SSD"},
		{name: "ro", kind: kBool, def: false},
		{name: "enabled", kind: kBool, def: true},
	}
	if s.v.AtLeast(25, 10, 0) {
		f = append(f, field{name: "product_id", kind: kStr, null: true, minLen: 1, maxLen: 16})
	}
	return f
}

func (s *Service) extentArg(verb string) dialect {
	return s.iscsiArg("iscsi_extent_"+verb, "iscsi_extent_"+verb)
}

func (s *Service) registerExtent(r *middleware.Registry) {
	del := []string{"id", "remove", "force"}
	s.addCRUD(r, crud{
		ns: nsExtent, verbose: "iSCSITargetExtent",
		view:   func(row middleware.Row, _ middleware.QueryOptions) middleware.Row { return s.extentView(row) },
		create: s.extentCreate, createParams: []string{"iscsi_extent_create"},
		update: s.extentUpdate, updateParams: []string{"id", "iscsi_extent_update"},
		del: s.extentDelete, delParams: del,
	})
	r.Add(middleware.Method{Name: "iscsi.extent.disk_choices", Handler: func(c *middleware.Call, params []json.RawMessage) (any, error) {
		if err := argCount(params, 0); err != nil {
			return nil, err
		}
		return s.diskChoices(), nil
	}})
}

// extentView: the stored path of a DISK extent is also its disk.
func (s *Service) extentView(r middleware.Row) middleware.Row {
	if strOf(r["type"]) == "DISK" {
		r["disk"] = r["path"]
	} else {
		r["disk"] = nil
	}
	r["locked"] = false
	s.pathFields(r, strOf(r["path"]), strOf(r["type"]) == "FILE")
	return r
}

// diskChoices lists the zvols no extent uses, as "zvol/<name>": "<name> (<size>)".
func (s *Service) diskChoices() map[string]any {
	names, err := s.model.List("", true, zfsmodel.Volume)
	if err != nil {
		return map[string]any{}
	}
	s.mu.Lock()
	used := map[string]bool{}
	for _, e := range s.t[nsExtent].rows {
		used[strOf(e["path"])] = true
	}
	s.mu.Unlock()
	out := map[string]any{}
	for _, n := range names {
		info, err := s.model.Get(n)
		if err != nil || used["zvol/"+n] {
			continue
		}
		out["zvol/"+n] = n + " (" + humanSize(info.Volsize) + ")"
	}
	return out
}

func (s *Service) extentCreate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 1); err != nil {
		return nil, err
	}
	data, err := objArg(s.extentArg("create"), params, 0, s.extentFields(), true)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if strOf(data["serial"]) == "" {
		data["serial"] = s.freshSerial()
	}
	data["naa"] = "0x6589cfc000000" + randomHex(19)
	if err := s.extentClean(data, "iscsi_extent_create", nil); err != nil {
		return nil, err
	}
	if err := s.extentSave(data, nil); err != nil {
		return nil, err
	}
	data["vendor"] = "TrueNAS"
	row, err := s.insert(nsExtent, data)
	if err != nil {
		return nil, err
	}
	s.log.Info("iSCSI extent created", "id", row["id"], "name", row["name"], "path", row["path"])
	return s.extentView(row), nil
}

func (s *Service) extentUpdate(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 2); err != nil {
		return nil, err
	}
	d := s.extentArg("update")
	id, err := intArg(d, params, 0, "id")
	if err != nil {
		return nil, err
	}
	data, err := objArg(d, params, 1, s.extentFields(), false)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, err := s.instance(nsExtent, "iSCSITargetExtent", id)
	if err != nil {
		return nil, err
	}
	old = s.extentView(old)
	delete(old, "locked")
	updated := clone(old)
	for k, v := range data {
		updated[k] = v
	}
	if strOf(updated["serial"]) == "" {
		updated["serial"] = s.freshSerial()
	}
	if err := s.extentClean(updated, "iscsi_extent_update", old); err != nil {
		return nil, err
	}
	if err := s.extentSave(updated, old); err != nil {
		return nil, err
	}
	row, err := s.replace(nsExtent, updated)
	if err != nil {
		return nil, err
	}
	return s.extentView(row), nil
}

func (s *Service) extentDelete(c *middleware.Call, params []json.RawMessage) (any, error) {
	if err := argCount(params, 3); err != nil {
		return nil, err
	}
	d := s.extentArg("delete")
	id, err := intArg(d, params, 0, "id")
	if err != nil {
		return nil, err
	}
	remove, err := boolArg(d, params, 1, "remove")
	if err != nil {
		return nil, err
	}
	force, err := boolArg(d, params, 2, "force")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.instance(nsExtent, "iSCSITargetExtent", id)
	if err != nil {
		return nil, err
	}
	var busy []string
	for _, te := range s.t[nsTargetExt].find(func(r middleware.Row) bool { return intOf(r["extent"]) == id }) {
		if t := s.t[nsTarget].get(intOf(te["target"])); t != nil && s.inUse[strOf(t["name"])] {
			busy = append(busy, s.basename()+":"+strOf(t["name"]))
		}
	}
	if len(busy) > 0 && !force {
		verb := "is"
		if len(busy) > 1 {
			verb = "are"
		}
		return nil, middleware.Errorf(middleware.EFAULT, "Associated target(s) %s %s in use.", strings.Join(busy, ","), verb)
	}
	if remove && strOf(e["type"]) == "FILE" {
		if host, ok := s.model.HostPath(strOf(e["path"])); !ok || os.Remove(host) != nil {
			return nil, middleware.Errorf(middleware.EFAULT, "Failed to remove extent file")
		}
	}
	s.dropExtent(id)
	if err := s.commit(nsExtent, nsTargetExt); err != nil {
		return nil, err
	}
	s.log.Info("iSCSI extent deleted", "id", id, "name", e["name"])
	return true, nil
}

// dropExtent removes an extent and its target associations (not its
// file). Callers hold s.mu and commit.
func (s *Service) dropExtent(id int) {
	for _, te := range s.t[nsTargetExt].find(func(r middleware.Row) bool { return intOf(r["extent"]) == id }) {
		s.t[nsTargetExt].remove(intOf(te["id"]))
	}
	s.t[nsExtent].remove(id)
}

// freshSerial is extent_serial: 15 random hex digits no extent uses.
// Callers hold s.mu.
func (s *Service) freshSerial() string {
	for {
		serial := randomHex(15)
		if len(s.t[nsExtent].find(func(r middleware.Row) bool { return strOf(r["serial"]) == serial })) == 0 {
			return serial
		}
	}
}

// extentClean is iSCSITargetExtentService.clean (name, serial, type and
// path, size); old is the extent being updated. Callers hold s.mu.
func (s *Service) extentClean(data middleware.Row, schema string, old middleware.Row) error {
	var errs middleware.ValidationErrors
	add := func(attr, msg string) {
		errs = append(errs, middleware.ValidationError{Attribute: schema + "." + attr, Message: msg})
	}
	self := intOf(old["id"])
	name, serial := strOf(data["name"]), strOf(data["serial"])
	if strings.Contains(name, `"`) {
		add("name", "Double quotes are not allowed")
	}
	if old == nil || name != strOf(old["name"]) {
		if len(s.t[nsExtent].find(func(r middleware.Row) bool { return intOf(r["id"]) != self && strOf(r["name"]) == name })) > 0 {
			add("name", "Extent name must be unique")
		}
	}
	if strings.Contains(serial, `"`) {
		add("serial", "Double quotes are not allowed")
	}
	if len(serial) > 20 {
		add("serial", "Extent serial can not exceed 20 characters")
	}
	if old == nil || serial != strOf(old["serial"]) {
		if len(s.t[nsExtent].find(func(r middleware.Row) bool { return intOf(r["id"]) != self && strOf(r["serial"]) == serial })) > 0 {
			add("serial", "Serial number must be unique")
		}
	}
	switch strOf(data["type"]) {
	case "DISK":
		disk := strOf(data["disk"])
		if disk == "" {
			add("disk", "This field is required")
			return errs // the real service raises here: nothing else can be checked
		}
		if !strings.HasPrefix(disk, "zvol/") {
			add("disk", `Disk name must start with "zvol/"`)
			return errs
		}
		zvol := strings.TrimPrefix(disk, "zvol/")
		if !s.zvolExists(zvol) {
			add("disk", "Device '/dev/"+disk+"' for volume '"+zvol+"' does not exist")
		}
		if ro, _ := data["ro"].(bool); strings.Contains(zvol, "@") && !ro {
			add("ro", "Must be set when disk is a ZFS Snapshot")
		}
	case "FILE":
		p := strOf(data["path"])
		if p == "" {
			add("path", "This field is required")
			return errs
		}
		host, inPool := s.model.HostPath(p)
		st, statErr := os.Stat(host)
		if inPool && statErr == nil && (st.IsDir() || strings.HasSuffix(p, "/")) {
			add("path", "You need to specify a filepath not a directory")
		}
		if !inPool {
			add("path", "The path must reside within a pool mount point")
		}
		size, blocksize := sizeOf(data["filesize"]), intOf(data["blocksize"])
		switch {
		case size == 0 && (statErr != nil || !st.Mode().IsRegular()):
			add("path", "The file must exist if the extent size is set to auto (0)")
		case size != 0 && blocksize != 0 && size%int64(blocksize) != 0:
			add("filesize", "File size ("+strconv.FormatInt(size, 10)+") must be a multiple of block size ("+itoa(blocksize)+")")
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// extentSave is iscsi.extent.save: a FILE extent's file is created (or
// grown) now; a DISK extent stores its disk as path. Callers hold s.mu.
func (s *Service) extentSave(data, old middleware.Row) error {
	if strOf(data["type"]) != "FILE" {
		data["path"] = data["disk"]
		delete(data, "disk")
		return nil
	}
	delete(data, "disk")
	host, _ := s.model.HostPath(strOf(data["path"]))
	size := sizeOf(data["filesize"])
	if _, err := os.Stat(host); err != nil {
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			return middleware.Errorf(middleware.EFAULT, "Failed to create %s with error: %v", filepath.Dir(strOf(data["path"])), err)
		}
		f, err := os.OpenFile(host, os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			err = f.Truncate(size)
			f.Close()
		}
		if err != nil {
			return middleware.Errorf(middleware.EFAULT, "Failed to create extent file: %v", err)
		}
		return nil
	}
	if old != nil {
		switch oldSize := sizeOf(old["filesize"]); {
		case size > oldSize:
			if err := os.Truncate(host, size); err != nil {
				return middleware.Errorf(middleware.EFAULT, "Failed to grow extent file: %v", err)
			}
		case size < oldSize:
			return middleware.Invalid("iscsi_extent_create.filesize", "Shrinking an extent is not allowed. This can lead to data loss.")
		}
	}
	return nil
}

// zvolExists accepts a volume or a snapshot of one.
func (s *Service) zvolExists(name string) bool {
	if ds, _, isSnap := strings.Cut(name, "@"); isSnap {
		_, isVol := s.model.ZvolPath(ds)
		return isVol && s.model.Exists(name)
	}
	_, ok := s.model.ZvolPath(name)
	return ok
}

// sizeOf reads a filesize given as a number or (25.10) a string of digits.
func sizeOf(v any) int64 {
	if str, ok := v.(string); ok {
		n, _ := strconv.ParseInt(str, 10, 64)
		return n
	}
	return int64(intOf(v))
}

// humanSize formats bytes as the middleware's format_size does (1.5 GiB).
func humanSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64) + " " + units[i]
}
