package storage

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/switchyard-csi/switchyard/simulators/truenas/middleware"
)

// replicationSchema is replication_run_onetime: replication_create
// without name, auto, schedule, only_matching_schedule and enabled.
func (s *service) replicationSchema() schema {
	pyd := s.pydantic()
	nonEmpty := func(v any) string {
		if l, _ := v.([]any); len(l) == 0 {
			if pyd {
				return "List should have at least 1 item after validation, not 0"
			}
			return "Empty value not allowed"
		}
		return ""
	}
	str := func(n string) field { return field{name: n, typ: tStr, null: true} }
	integer := func(n string) field { return field{name: n, typ: tInt, null: true} }
	boolean := func(n string, d bool) field { return field{name: n, typ: tBool, def: d} }
	list := func(n string) field { return field{name: n, typ: tList, def: []any{}} }
	return schema{name: "replication_run_onetime", pydantic: pyd, fields: []field{
		{name: "direction", typ: tStr, required: true, enum: []string{"PUSH", "PULL"}},
		{name: "transport", typ: tStr, required: true, enum: []string{"SSH", "SSH+NETCAT", "LOCAL"}},
		integer("ssh_credentials"),
		{name: "netcat_active_side", typ: tStr, null: true, enum: []string{"LOCAL", "REMOTE"}},
		str("netcat_active_side_listen_address"),
		integer("netcat_active_side_port_min"), integer("netcat_active_side_port_max"),
		str("netcat_passive_side_connect_address"),
		boolean("sudo", false),
		{name: "source_datasets", typ: tList, required: true, check: nonEmpty},
		{name: "target_dataset", typ: tStr, required: true},
		{name: "recursive", typ: tBool, required: true},
		list("exclude"),
		boolean("properties", true),
		list("properties_exclude"),
		{name: "properties_override", typ: tObj, def: args{}},
		boolean("replicate", false),
		boolean("encryption", false),
		{name: "encryption_inherit", typ: tBool, null: true},
		str("encryption_key"),
		{name: "encryption_key_format", typ: tStr, null: true, enum: []string{"HEX", "PASSPHRASE"}},
		str("encryption_key_location"),
		list("periodic_snapshot_tasks"),
		list("naming_schema"),
		list("also_include_naming_schema"),
		str("name_regex"),
		{name: "restrict_schedule", typ: tObj, null: true},
		boolean("allow_from_scratch", false),
		{name: "readonly", typ: tStr, enum: []string{"SET", "REQUIRE", "IGNORE"}, def: "SET"},
		boolean("hold_pending_snapshots", false),
		{name: "retention_policy", typ: tStr, required: true, enum: []string{"SOURCE", "CUSTOM", "NONE"}},
		integer("lifetime_value"),
		{name: "lifetime_unit", typ: tStr, null: true, enum: []string{"HOUR", "DAY", "WEEK", "MONTH", "YEAR"}},
		list("lifetimes"),
		{name: "compression", typ: tStr, null: true, enum: []string{"LZ4", "PIGZ", "PLZIP"}},
		integer("speed_limit"),
		boolean("large_block", true),
		boolean("embed", false),
		boolean("compressed", true),
		{name: "retries", typ: tInt, def: int64(5)},
		{name: "logging_level", typ: tStr, null: true, enum: []string{"DEBUG", "INFO", "WARNING", "ERROR"}},
		boolean("exclude_mountpoint_property", true),
		boolean("only_from_scratch", false),
		boolean("mount", true),
	}}
}

// validateReplication is ReplicationService._validate for a one-time
// task (no periodic snapshot tasks exist here); creds is
// keychaincredential.get_of_type.
func validateReplication(a args, creds func(int64, string) (args, error)) middleware.ValidationErrors {
	var errs middleware.ValidationErrors
	add := func(attr, format string, v ...any) {
		errs = append(errs, middleware.ValidationError{Attribute: "replication_run_onetime." + attr, Message: fmt.Sprintf(format, v...)})
	}
	set := func(k string) bool { return a[k] != nil }
	nonEmpty := func(k string) bool { l, _ := a[k].([]any); return len(l) > 0 }
	tasks, _ := a["periodic_snapshot_tasks"].([]any)
	for i := range tasks {
		add("periodic_snapshot_tasks."+strconv.Itoa(i), "This snapshot task does not exist")
	}
	switch a.str("direction") {
	case "PUSH":
		if nonEmpty("naming_schema") {
			add("naming_schema", "This field has no sense for push replication")
		}
		if !nonEmpty("also_include_naming_schema") && !set("name_regex") {
			add("periodic_snapshot_tasks", `You must at least either bind a periodic snapshot task or provide `+
				`"Also Include Naming Schema" or "Name Regex" for push replication task`)
		}
	case "PULL":
		if nonEmpty("periodic_snapshot_tasks") {
			add("periodic_snapshot_tasks", "Pull replication can't be bound to a periodic snapshot task")
		}
		if !nonEmpty("naming_schema") && !set("name_regex") {
			add("naming_schema", "Naming schema or Name regex are required for pull replication")
		}
		if nonEmpty("also_include_naming_schema") {
			add("also_include_naming_schema", "This field has no sense for pull replication")
		}
		if a.boolean("hold_pending_snapshots") {
			add("hold_pending_snapshots", "Pull replication tasks can't hold pending snapshots because they don't do source retention")
		}
	}
	netcat := []string{"netcat_active_side_listen_address", "netcat_active_side_port_min",
		"netcat_active_side_port_max", "netcat_passive_side_connect_address"}
	if a.str("transport") == "SSH+NETCAT" {
		if !set("netcat_active_side") {
			add("netcat_active_side", "You must choose active side for SSH+netcat replication")
		}
	} else {
		for _, k := range append([]string{"netcat_active_side"}, netcat...) {
			if set(k) {
				add(k, "This field only has sense for SSH+netcat replication")
			}
		}
	}
	if a.str("transport") == "LOCAL" {
		if set("ssh_credentials") {
			add("ssh_credentials", "Remote credentials have no sense for local replication")
		}
		if set("compression") {
			add("compression", "Compression has no sense for local replication")
		}
		if set("speed_limit") {
			add("speed_limit", "Speed limit has no sense for local replication")
		}
	} else if !set("ssh_credentials") {
		add("ssh_credentials", "SSH Credentials are required for non-local replication")
	} else {
		n, _ := a.int("ssh_credentials")
		if _, err := creds(n, "SSH_CREDENTIALS"); err != nil {
			add("ssh_credentials", "%s", err.Error())
		}
	}
	sources, _ := a["source_datasets"].([]any)
	if !a.boolean("recursive") && nonEmpty("exclude") {
		add("exclude", "Excluding child datasets is only supported for recursive replication")
	}
	excl, _ := a["exclude"].([]any)
	for i, x := range excl {
		e, _ := x.(string)
		child := false
		for _, src := range sources {
			if s, _ := src.(string); strings.HasPrefix(e, s+"/") {
				child = true
			}
		}
		if !child {
			add("exclude."+strconv.Itoa(i), "This dataset is not a child of any of source datasets")
		}
	}
	if a.boolean("replicate") {
		if !a.boolean("recursive") {
			add("recursive", "This option is required for full filesystem replication")
		}
		if nonEmpty("exclude") {
			add("exclude", "This option is not supported for full filesystem replication")
		}
		if !a.boolean("properties") {
			add("properties", "This option is required for full filesystem replication")
		}
		if a.str("retention_policy") != "SOURCE" {
			add("retention_policy", "Only `Same as Source` retention policy can be used for full filesystem replication")
		}
	}
	if a.boolean("encryption") && a["encryption_inherit"] != true {
		for _, k := range []string{"encryption_key", "encryption_key_format", "encryption_key_location"} {
			if !set(k) {
				add(k, "This property is required when remote dataset encryption is enabled")
			}
		}
	}
	if set("name_regex") {
		if _, err := regexp.Compile("(" + a.str("name_regex") + ")$"); err != nil {
			add("name_regex", "Invalid regex: %v", err)
		}
		if nonEmpty("naming_schema") || nonEmpty("also_include_naming_schema") {
			add("name_regex", "Naming regex can't be used with Naming schema")
		}
		if r := a.str("retention_policy"); r != "SOURCE" && r != "NONE" {
			add("retention_policy", "Only `Same as Source` and `None` retention policies can be used with Naming regex")
		}
	}
	if a.str("retention_policy") == "CUSTOM" {
		if !set("lifetime_value") {
			add("lifetime_value", "This field is required for custom retention policy")
		}
		if !set("lifetime_unit") {
			add("lifetime_value", "This field is required for custom retention policy")
		}
	} else {
		if set("lifetime_value") {
			add("lifetime_value", "This field has no sense for specified retention policy")
		}
		if set("lifetime_unit") {
			add("lifetime_unit", "This field has no sense for specified retention policy")
		}
		if nonEmpty("lifetimes") {
			add("lifetimes", "This field has no sense for specified retention policy")
		}
	}
	return errs
}

// snapshotMatcher selects the snapshots a task replicates: those whose
// name matches name_regex (anchored like Python's re.match on
// "(regex)$"), or one of the naming schemas.
func snapshotMatcher(a args) func(string) bool {
	if a["name_regex"] != nil {
		re, err := regexp.Compile("^(?:" + a.str("name_regex") + ")$")
		if err != nil {
			return func(string) bool { return false }
		}
		return re.MatchString
	}
	var res []*regexp.Regexp
	for _, k := range []string{"also_include_naming_schema", "naming_schema"} {
		l, _ := a[k].([]any)
		for _, x := range l {
			if sch, ok := x.(string); ok {
				res = append(res, namingSchemaRegexp(sch))
			}
		}
	}
	return func(name string) bool {
		for _, re := range res {
			if re.MatchString(name) {
				return true
			}
		}
		return false
	}
}

// namingSchemaRegexp turns a strftime naming schema into a regexp.
func namingSchemaRegexp(schema string) *regexp.Regexp {
	codes := map[byte]string{'Y': `\d{4}`, 'm': `\d{2}`, 'd': `\d{2}`, 'H': `\d{2}`, 'M': `\d{2}`,
		'S': `\d{2}`, 'y': `\d{2}`, 'z': `[+-]\d{4}`, 's': `\d+`, '%': `%`}
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(schema); i++ {
		if schema[i] == '%' && i+1 < len(schema) {
			if re, ok := codes[schema[i+1]]; ok {
				b.WriteString(re)
				i++
				continue
			}
		}
		b.WriteString(regexp.QuoteMeta(schema[i : i+1]))
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}
