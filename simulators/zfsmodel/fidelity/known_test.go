package fidelity

import (
	"regexp"
	"slices"
)

// knownDifference is a place where zfs-fuse (pool version 23, 2013) and
// the model print different texts because the model follows modern
// OpenZFS. The rewrite turns zfs-fuse's text into OpenZFS's; a result is
// accepted when, after the rewrites that apply, it equals the model's.
type knownDifference struct {
	name    string
	reason  string
	openzfs string   // where OpenZFS prints what the model prints (openzfs/zfs at be7657e3, 2.4.99)
	cmds    []string // zfs subcommands it applies to (nil: all)
	re      *regexp.Regexp
	repl    string // replaces re's matches in zfs-fuse's stderr
	// both applies the rewrite to the model's stderr too: for texts that
	// differ as a whole between versions (usage), not phrase by phrase.
	both bool
	// codes, when set, is zfs-fuse's exit code and OpenZFS's: the exit
	// code changes with the text.
	codes *[2]int
}

const oz = "openzfs/zfs "

var knownDifferences = []knownDifference{
	{
		name:    "compression values",
		reason:  "OpenZFS added lz4 and zstd to the compression values listed in the error",
		openzfs: oz + "module/zcommon/zfs_prop.c:427 (compression values), lib/libzfs/libzfs_util.c:1907 \"'%s' must be one of '%s'\"",
		cmds:    []string{"create", "set"},
		re:      regexp.MustCompile(`('compression' must be one of 'on \| off \| lzjb \| gzip \| gzip-\[1-9\] \| zle)'`),
		repl:    `$1 | lz4 | zstd | zstd-[1-19] | zstd-fast | zstd-fast-[1-10,20,30,40,50,60,70,80,90,100,500,1000]'`,
	},
	{
		name:    "name check: '@' in filesystem name",
		reason:  "reworded when bookmarks ('#') came",
		openzfs: oz + "lib/libzfs/libzfs_dataset.c:99 zfs_validate_name()",
		re:      regexp.MustCompile(`snapshot delimiter '@' in filesystem name\n`), repl: "snapshot delimiter '@' is not expected here\n",
	},
	{
		name:    "name check: empty component",
		reason:  "reworded when bookmarks ('#') came",
		openzfs: oz + "lib/libzfs/libzfs_dataset.c:99 zfs_validate_name() NAME_ERR_EMPTY_COMPONENT",
		re:      regexp.MustCompile(`empty component in name\n`), repl: "empty component or misplaced '@' or '#' delimiter in name\n",
	},
	{
		name:    "name check: multiple delimiters",
		reason:  "reworded when bookmarks ('#') came",
		openzfs: oz + "lib/libzfs/libzfs_dataset.c:99 zfs_validate_name() NAME_ERR_MULTIPLE_DELIMITERS",
		re:      regexp.MustCompile(`multiple '@' delimiters in name\n`), repl: "multiple '@' and/or '#' delimiters in name\n",
	},
	// Before "snapshot: name errors", which rewrites the same prefix.
	{
		name:    "snapshot: no '@'",
		reason:  "zfs snapshot prints only the usage (exit 2) for an argument without '@'",
		openzfs: oz + "cmd/zfs/zfs_main.c:4714 zfs_do_snapshot(): strchr(argv[0], '@') == NULL -> goto usage",
		cmds:    []string{"snapshot"},
		re:      regexp.MustCompile(`^cannot snapshot '[^']*': missing '@' delimiter in snapshot name\n$`), repl: "usage:\n",
		codes: &[2]int{1, 2},
	},
	{
		name:    "snapshot: name errors",
		reason:  "zfs snapshot now validates names in zfs_snapshot_nvl(), whose prefix is \"cannot create snapshot\"",
		openzfs: oz + "lib/libzfs/libzfs_dataset.c:4020 zfs_snapshot_nvl()",
		cmds:    []string{"snapshot"},
		re:      regexp.MustCompile(`(?m)^cannot snapshot '`), repl: "cannot create snapshot '",
	},
	{
		name:    "snapshot: missing dataset",
		reason:  "zfs snapshot prints the usage (exit 2) after the open error of its dataset",
		openzfs: oz + "cmd/zfs/zfs_main.c:4719 zfs_do_snapshot(): zfs_open fails -> goto usage",
		cmds:    []string{"snapshot"},
		re:      regexp.MustCompile(`^(cannot open '[^']*': dataset does not exist\n)$`), repl: "${1}usage:\n",
		codes: &[2]int{1, 2},
	},
	{
		name:    "destroy: missing snapshot",
		reason:  "zfs destroy gathers the snapshots named (ranges, %) and reports when none matched",
		openzfs: oz + "cmd/zfs/zfs_main.c:1796 zfs_do_destroy(): nvlist_empty(cb.cb_nvl)",
		cmds:    []string{"destroy"},
		re:      regexp.MustCompile(`^cannot open '[^']*@[^']*': dataset does not exist\n$`), repl: "could not find any snapshots to destroy; check snapshot names.\n",
	},
	{
		name:    "clone, rollback: not a snapshot",
		reason:  "zfs_open(ZFS_TYPE_SNAPSHOT) now checks the name before looking the dataset up",
		openzfs: oz + "cmd/zfs/zfs_main.c:907 zfs_do_clone(), :4474 zfs_do_rollback() -> lib/libzfs/libzfs_dataset.c:709 zfs_open() -> zfs_validate_name()",
		cmds:    []string{"clone", "rollback"},
		re:      regexp.MustCompile(`(cannot open '[^'@]*': )operation not applicable to datasets of this type\n`), repl: "${1}missing '@' delimiter in snapshot name\n",
	},
	{
		name:    "rollback: more recent snapshots",
		reason:  "bookmarks (after pool version 23) count as more recent too",
		openzfs: oz + "cmd/zfs/zfs_main.c:4386 rollback_check()",
		cmds:    []string{"rollback"},
		re:      regexp.MustCompile(`(?m)(: more recent snapshots) exist\nuse '-r' to force deletion of the following snapshots:$`),
		repl:    "$1 or bookmarks exist\nuse '-r' to force deletion of the following snapshots and bookmarks:",
	},
	{
		name:    "inherit: quota hint",
		reason:  "OpenZFS also suggests 'zfs inherit -S' (received properties came after pool version 23)",
		openzfs: oz + "cmd/zfs/zfs_main.c:2560 zfs_do_inherit()",
		cmds:    []string{"inherit"},
		re:      regexp.MustCompile(`(use 'zfs set (quota|reservation|refquota|refreservation)=none' to clear\n)`), repl: "${1}use 'zfs inherit -S $2' to revert to received value\n",
	},
	{
		name:    "send: missing snapshot",
		reason:  "a plain send opens the snapshot first (zfs-fuse warned from its replication code path)",
		openzfs: oz + "cmd/zfs/zfs_main.c:5078 zfs_do_send(): zfs_open(argv[0], ZFS_TYPE_DATASET)",
		cmds:    []string{"send"},
		re:      regexp.MustCompile(`^WARNING: could not send ([^@ ]+@[^: ]+): does not exist\n$`), repl: "cannot open '$1': dataset does not exist\n",
	},
	{
		name:    "receive: missing parent",
		reason:  "receive checks the new filesystem's parent, and its error keeps the open error's text apart",
		openzfs: oz + "lib/libzfs/libzfs_sendrecv.c:4982 zfs_receive_one() \"validate parent\" -> EZFS_BADRESTORE",
		cmds:    []string{"receive", "recv"},
		re:      regexp.MustCompile(`^cannot open '([^']+)/[^/']+': dataset does not exist\ncannot receive new filesystem stream: dataset does not exist\n$`),
		repl:    "cannot open '$1': dataset does not exist\ncannot receive new filesystem stream: unable to restore to destination\n",
	},
	// Last: the rewrites above may end in "usage:".
	{
		name:    "usage text",
		reason:  "usage lists each version's synopses and property table (zfs-fuse's is pool version 23's); the message before it and the exit code 2 are still compared",
		openzfs: oz + "cmd/zfs/zfs_main.c usage(), get_usage()",
		re:      regexp.MustCompile(`(?s)usage:\n.*$`), repl: "usage: <the version's usage>\n", both: true,
	},
}

// acceptKnown reports whether exp (zfs-fuse) and got (model) differ only
// by known differences, and which ones were needed.
func acceptKnown(args []string, exp, got Result) ([]string, bool) {
	var used []string
	for _, k := range knownDifferences {
		if k.cmds != nil && (len(args) == 0 || !slices.Contains(k.cmds, args[0])) {
			continue
		}
		e := k.re.ReplaceAllString(exp.Stderr, k.repl)
		g := got.Stderr
		if k.both {
			g = k.re.ReplaceAllString(g, k.repl)
		}
		if e == exp.Stderr && g == got.Stderr {
			continue
		}
		if k.codes != nil && e != exp.Stderr && exp.Code == k.codes[0] {
			exp.Code = k.codes[1]
		}
		exp.Stderr, got.Stderr = e, g
		used = append(used, k.name)
	}
	return used, exp == got
}
