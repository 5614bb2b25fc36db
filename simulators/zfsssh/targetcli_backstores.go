package zfsssh

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// targetcli's /backstores: block and fileio storage objects.

func (t *tcli) backstoresNode(parent *csNode) *csNode {
	n := t.node("backstores", parent)
	n.kids = func(n *csNode) []*csNode { return []*csNode{t.backstoreNode(n, "block"), t.backstoreNode(n, "fileio")} }
	return n
}

func (t *tcli) backstoreNode(parent *csNode, plugin string) *csNode {
	n := t.node(plugin, parent)
	n.summary = func() (string, csHealth) {
		return fmt.Sprintf("Storage Objects: %d", len(t.m.objects(plugin))), healthNone
	}
	n.kids = func(n *csNode) []*csNode {
		var out []*csNode
		for _, so := range t.m.objects(plugin) {
			out = append(out, t.soNode(n, plugin, so.Name))
		}
		return out
	}
	n.cmds["delete"] = &csCmd{args: []string{"name", "save"}, nreq: 1, run: func(c *csCall) (*csNode, error) {
		name := c.args["name"]
		if t.m.storageObject(plugin, name) == nil {
			return nil, csError(fmt.Sprintf("No storage object named %s.", name))
		}
		t.m.deleteStorageObject(plugin, name)
		t.sh.info("Deleted storage object %s.", name)
		return nil, nil
	}}
	if plugin == "block" {
		n.cmds["create"] = &csCmd{args: []string{"name", "dev", "readonly", "wwn", "exclusive"}, nreq: 2, run: t.createBlock}
	} else {
		n.cmds["create"] = &csCmd{args: []string{"name", "file_or_dev", "size", "write_back", "sparse", "wwn"}, nreq: 2, run: t.createFileio}
	}
	return n
}

func (t *tcli) soNode(parent *csNode, plugin, name string) *csNode {
	n := t.node(name, parent)
	n.summary = func() (string, csHealth) {
		so := t.m.storageObject(plugin, name)
		if so == nil {
			return "", healthNone
		}
		state, h := "deactivated", healthNone
		if t.m.inUse("/backstores/" + plugin + "/" + name) {
			state, h = "activated", healthOK
		}
		cache := "write-thru"
		if so.WriteBack {
			cache = "write-back"
		}
		return fmt.Sprintf("%s (%s) %s %s", so.Dev, humanBytes(so.Size), cache, state), h
	}
	n.groups["attribute"] = &csGroup{
		params: func() []string { return sortedKeys(t.m.storageObject(plugin, name).Attributes) },
		writable: func(k string) bool {
			return !roSOAttributes[k]
		},
		get: func(k string) string { return t.m.storageObject(plugin, name).Attributes[k] },
		set: func(k, v string) error {
			if _, err := strconv.Atoi(v); err != nil {
				return csError(fmt.Sprintf("Cannot set attribute %s: [Errno 22] Invalid argument", k))
			}
			t.m.storageObject(plugin, name).Attributes[k] = v
			return nil
		},
	}
	return n
}

// devInfo checks a device path: a zvol (block device) or a file.
func (t *tcli) devInfo(dev string) (fileInfo, error) {
	return t.p.env.srv.fs.stat(clean("/", dev))
}

func validSOName(name string) error {
	if strings.ContainsAny(name, "/ \t\n") {
		return csError("A storage object's name cannot contain  /, newline or spaces/tabs")
	}
	return nil
}

func (t *tcli) createBlock(c *csCall) (*csNode, error) {
	name, dev := c.args["name"], c.args["dev"]
	fi, err := t.devInfo(dev)
	if _, given := c.arg("readonly"); !given && err != nil {
		return nil, csError("Could not open " + dev)
	}
	if err := validSOName(name); err != nil {
		return nil, err
	}
	if t.m.storageObject("block", name) != nil {
		return nil, csError(fmt.Sprintf("Storage object block/%s exists", name))
	}
	if err != nil || fi.kind != kindBlock {
		return nil, csError(fmt.Sprintf("Device %s is not a TYPE_DISK block device", dev))
	}
	exclusive := true
	if v, ok := c.arg("exclusive"); ok {
		exclusive = isTrue(v)
	}
	if exclusive && t.m.storageObjectByDev(dev) != nil {
		// rtslib's message really has "{dev}" in it (a missing f-string).
		return nil, csError("Cannot configure StorageObject because device {dev} is already in use")
	}
	ro, _ := c.arg("readonly")
	wwn, ok := c.arg("wwn")
	if !ok {
		wwn = unitSerial()
	}
	t.m.st.StorageObjects = append(t.m.st.StorageObjects, StorageObject{Plugin: "block", Name: name, Dev: dev, Size: fi.size,
		WWN: wwn, Readonly: isTrue(ro), Attributes: defaultSOAttributes()})
	t.sh.info("Created block storage object %s using %s.", name, dev)
	return t.afterCreate(c, name)
}

// afterCreate honours auto_cd_after_create.
func (t *tcli) afterCreate(c *csCall, child string) (*csNode, error) {
	if t.m.prefs["auto_cd_after_create"] != "true" {
		return nil, nil
	}
	n, err := c.node.get(child)
	if err == nil {
		t.sh.info("Entering new node %s", n.path())
	}
	return n, err
}

func (t *tcli) createFileio(c *csCall) (*csNode, error) {
	name, file := c.args["name"], c.args["file_or_dev"]
	if err := validSOName(name); err != nil {
		return nil, err
	}
	fi, err := t.devInfo(file)
	if err == nil {
		if so := t.m.storageObjectByDev(file); so != nil {
			return nil, csError(fmt.Sprintf("storage object for %s already exists: %s", file, so.Name))
		}
	}
	sizeArg, hasSize := c.arg("size")
	var size int64
	switch {
	case err == nil && fi.kind == kindBlock:
		if hasSize {
			t.sh.info("Block device, size parameter ignored")
		}
		t.sh.info("Note: block backstore preferred for best results")
		size = fi.size
	case err == nil && fi.kind == kindFile:
		if hasSize {
			t.sh.info("%s exists, using its size (%d bytes) instead", file, fi.size)
		}
		size = fi.size
	case err == nil:
		return nil, csError(fmt.Sprintf("Path %s exists but is not a file", file))
	default:
		if !hasSize {
			return nil, csError("Attempting to create file for new fileio backstore, need a size")
		}
		n, perr := humanToBytes(sizeArg)
		if perr != nil {
			return nil, csError(perr.Error())
		}
		w, cerr := t.p.env.srv.fs.create(clean("/", file), false, t.p.env.user, true, 0)
		if cerr != nil {
			return nil, csError("Could not open " + file)
		}
		w.Close()
		size = n
	}
	if t.m.storageObject("fileio", name) != nil {
		return nil, csError(fmt.Sprintf("Storage object fileio/%s exists", name))
	}
	wb := true
	if v, ok := c.arg("write_back"); ok {
		wb = isTrue(v)
	}
	wwn, ok := c.arg("wwn")
	if !ok {
		wwn = unitSerial()
	}
	t.m.st.StorageObjects = append(t.m.st.StorageObjects, StorageObject{Plugin: "fileio", Name: name, Dev: file, Size: size,
		WWN: wwn, WriteBack: wb, Attributes: defaultSOAttributes()})
	t.sh.info("Created fileio %s with size %d", name, size)
	return t.afterCreate(c, name)
}

var sizeRE = regexp.MustCompile(`^(\d+)\s*([kKmMgGtT]?)[bB]?$`)

// humanToBytes parses targetcli sizes: 1024, 10M, 1GB, 2T.
func humanToBytes(s string) (int64, error) {
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("Cannot interpret size, wrong format: %s", s)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	shift := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[strings.ToLower(m[2])]
	return n << shift, nil
}

func humanBytes(n int64) string {
	v := float64(n)
	for _, u := range []string{"bytes", "KiB", "MiB", "GiB", "TiB"} {
		if v < 1024 || u == "TiB" {
			if u == "bytes" {
				return fmt.Sprintf("%d bytes", n)
			}
			return fmt.Sprintf("%.1f%s", v, u)
		}
		v /= 1024
	}
	return ""
}
