package zfsgeneric

import (
	"regexp"
	"strings"
)

// configshellTree reads what `ls <path> <depth>` of targetcli or nvmetcli
// (both configshell) prints: one line per node, "o- <name> ..... [summary]",
// indented two columns per level ("| " or "  "). It returns the paths of
// the nodes shown ("/iscsi/<iqn>/tpg1/luns/lun0"). roots are the listed
// paths, in the order the script listed them; complete is false unless
// each was printed as a root line, so that a tool that died, was not
// found or printed something else never reads as "nothing there".
func configshellTree(text string, roots ...string) (paths map[string]bool, complete bool) {
	paths = map[string]bool{}
	next := 0
	var stack []string // stack[i] is the path of the current node of level i
	for _, line := range strings.Split(ansiEscape.ReplaceAllString(text, ""), "\n") {
		line = strings.TrimRight(line, "\r")
		i := strings.Index(line, "o- ")
		if i < 0 {
			continue // not a tree line: a banner, a message
		}
		level := i / 2
		switch margin := line[:i]; {
		case prompt.MatchString(margin):
			// Reading a script, configshell prints its prompt ("/> ")
			// before each command's output: the root line follows it.
			level = 0
		case i%2 != 0 || strings.Trim(margin, " |") != "":
			continue
		}
		f := strings.Fields(line[i+3:])
		if len(f) == 0 {
			continue
		}
		name := f[0]
		switch {
		case level == 0:
			if next >= len(roots) || name != rootName(roots[next]) {
				return paths, false // a tree the script did not ask for
			}
			stack = []string{strings.TrimRight(roots[next], "/")}
			next++
		case stack == nil || level > len(stack):
			return paths, false // a node deeper than its parent: not configshell's tree
		default:
			stack = append(stack[:level], stack[level-1]+"/"+name)
			paths[stack[level]] = true
		}
	}
	return paths, next == len(roots)
}

// rootName is the name configshell prints for the node at path.
func rootName(path string) string {
	path = strings.TrimRight(path, "/")
	if path == "" {
		return "/"
	}
	return path[strings.LastIndexByte(path, '/')+1:]
}

// prompt is configshell's prompt ("/> ", "/iscsi> "), once or more (one
// per empty script line).
var prompt = regexp.MustCompile(`^(\S*> )+$`)

// ansiEscape matches terminal colour sequences: configshell colours its
// output when it writes to a terminal, and the tools run with a pty.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
