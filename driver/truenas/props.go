package truenas

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/driver/zfs"
)

// apiField is how a native zfs property is written through
// pool.dataset.create/update: the field name and the value's form.
type apiField struct {
	name string
	form string // "int" bytes or count, "upper" enum, "size" ("16K"), "string"
}

// nativeFields are the native properties the dataset API takes. Others
// cannot be set through it (a config that asks for one gets an error
// naming the property).
var nativeFields = map[string]apiField{
	"refquota":                 {"refquota", "int"},
	"quota":                    {"quota", "int"},
	"refreservation":           {"refreservation", "int"},
	"reservation":              {"reservation", "int"},
	"volsize":                  {"volsize", "int"},
	"volblocksize":             {"volblocksize", "size"},
	"recordsize":               {"recordsize", "size"},
	"compression":              {"compression", "upper"},
	"dedup":                    {"deduplication", "upper"},
	"sync":                     {"sync", "upper"},
	"atime":                    {"atime", "upper"},
	"exec":                     {"exec", "upper"},
	"readonly":                 {"readonly", "upper"},
	"snapdir":                  {"snapdir", "upper"},
	"aclmode":                  {"aclmode", "upper"},
	"acltype":                  {"acltype", "upper"},
	"casesensitivity":          {"casesensitivity", "upper"},
	"copies":                   {"copies", "int"},
	"special_small_block_size": {"special_small_block_size", "int"},
}

// isUserProp: user properties have a colon in their name.
func isUserProp(name string) bool { return strings.Contains(name, ":") }

// fieldValue converts a zfs property value to the API's form.
func fieldValue(prop, value string) (string, any, error) {
	f, ok := nativeFields[prop]
	if !ok {
		return "", nil, fmt.Errorf("property %s cannot be set through the TrueNAS API (settable: user properties and %s)", prop, settableList())
	}
	switch f.form {
	case "int":
		if value == "none" {
			return f.name, 0, nil
		}
		n, err := zfs.ParseSize(value)
		if err != nil {
			return "", nil, fmt.Errorf("property %s: %q is not a size", prop, value)
		}
		return f.name, n, nil
	case "size":
		n, err := zfs.ParseSize(value)
		if err != nil {
			return "", nil, fmt.Errorf("property %s: %q is not a size", prop, value)
		}
		return f.name, humanSize(n), nil
	case "upper":
		return f.name, strings.ToUpper(value), nil
	}
	return f.name, value, nil
}

func settableList() string {
	names := make([]string, 0, len(nativeFields))
	for n := range nativeFields {
		names = append(names, n)
	}
	sortStrings(names)
	return strings.Join(names, ", ")
}

// humanSize writes 16384 as "16K", as the API's volblocksize choices are.
func humanSize(n int64) string {
	units := []string{"", "K", "M", "G"}
	i := 0
	for n >= 1024 && n%1024 == 0 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return strconv.FormatInt(n, 10) + units[i]
}

// payload splits properties into API fields and user properties.
func payload(props []zfs.Prop) (map[string]any, []map[string]any, error) {
	fields := map[string]any{}
	var user []map[string]any
	for _, p := range props {
		if isUserProp(p.Name) {
			user = append(user, map[string]any{"key": p.Name, "value": p.Value})
			continue
		}
		name, v, err := fieldValue(p.Name, p.Value)
		if err != nil {
			return nil, nil, err
		}
		fields[name] = v
	}
	return fields, user, nil
}

// entryProps reads the asked properties from a pool.dataset or snapshot
// entry into zfs's form (raw values, "-" for unset, lower-case sources).
func entryProps(e map[string]any, names []string) zfs.Properties {
	out := zfs.Properties{}
	for _, n := range names {
		out[n] = entryProp(e, n)
	}
	return out
}

func entryProp(e map[string]any, name string) zfs.Property {
	unset := zfs.Property{Value: "-", Source: "-"}
	switch name {
	case "name":
		return zfs.Property{Value: str(e["id"]), Source: "-"}
	case "type":
		if t := str(e["type"]); t != "" {
			return zfs.Property{Value: strings.ToLower(t), Source: "-"}
		}
		if strings.Contains(str(e["id"]), "@") || strings.Contains(str(e["name"]), "@") {
			return zfs.Property{Value: "snapshot", Source: "-"}
		}
		return unset
	case "mountpoint":
		if mp, ok := e["mountpoint"].(string); ok && mp != "" {
			return zfs.Property{Value: mp, Source: "default"}
		}
		if _, isMap := e["mountpoint"].(map[string]any); !isMap {
			return unset
		}
	}
	if isUserProp(name) {
		if up, ok := e["user_properties"].(map[string]any); ok {
			if p, ok := up[name]; ok {
				return propValue(p, true)
			}
		}
	}
	if p, ok := e[name]; ok {
		return propValue(p, isUserProp(name))
	}
	if props, ok := e["properties"].(map[string]any); ok {
		if p, ok := props[name]; ok {
			return propValue(p, isUserProp(name))
		}
	}
	return unset
}

// propValue reads {parsed, rawvalue, value, source}; user properties keep
// their value as set, native ones their raw (byte) value.
func propValue(p any, user bool) zfs.Property {
	m, ok := p.(map[string]any)
	if !ok {
		if s := str(p); s != "" {
			return zfs.Property{Value: s, Source: "local"}
		}
		return zfs.Property{Value: "-", Source: "-"}
	}
	v := str(m["rawvalue"])
	if user || v == "" {
		v = str(m["value"])
	}
	if v == "" {
		v = "-"
	}
	src := strings.ToLower(str(m["source"]))
	switch src {
	case "", "none":
		src = "-"
	}
	return zfs.Property{Value: v, Source: src}
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}
