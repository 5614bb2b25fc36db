#!/bin/sh
# /lab/node/mounts.sh of the Kubernetes node in the storage VM: mounts a
# share for the node's own processes on the host's request, so that a
# controller on this node finds an NFS export or an SMB share mounted at
# its controllerBasePath (nfs-client, smb-client), as an administrator
# would have mounted it. vm-node.sh runs it every second while the node is
# up; lab/cluster vmnode.go writes it with the rest of /lab/node.
#
# usage: mounts.sh <requests dir> <mount root>
#
# The host (e2e/cmd/e2e-lab) writes <requests dir>/<name>.req, lines of
# key=value (read, never sourced):
#   type=nfs|cifs
#   source=127.0.0.1:/tank/e2e/nfs | //127.0.0.1/share
#   target=<mount root>/<dir>      (a new directory, made here)
#   options=<mount -o list>        (optional; cifs credentials go in a
#                                   credentials=<file> option, never here)
# and then waits for <name>.rc (the exit code, written last) and <name>.out
# (what mount said). A request is taken once: it is renamed to <name>.taken
# before the mount, so a slow mount is not started twice. A target already
# mounted answers 0 (a kept cluster's shares survive a rerun of the lab
# file). Targets outside <mount root>, names other than [a-z0-9-], and
# types other than nfs and cifs are refused with rc 2.
set -u
REQS=$1
ROOT=${2%/}
answer() { # name rc message
	printf '%s\n' "$3" >"$REQS/$1.out"
	echo "$2" >"$REQS/$1.rc"
}
for req in "$REQS"/*.req; do
	[ -e "$req" ] || continue
	name=${req##*/}
	name=${name%.req}
	case $name in
	*[!a-z0-9-]* | "")
		mv -f "$req" "$req.refused"
		continue
		;;
	esac
	mv -f "$req" "$REQS/$name.taken" || continue
	rm -f "$REQS/$name.rc" "$REQS/$name.out"
	type= source= target= options=
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		type=*) type=${line#type=} ;;
		source=*) source=${line#source=} ;;
		target=*) target=${line#target=} ;;
		options=*) options=${line#options=} ;;
		esac
	done <"$REQS/$name.taken"
	case $type in
	nfs | cifs) ;;
	*)
		answer "$name" 2 "type '$type': want nfs or cifs"
		continue
		;;
	esac
	case $target in
	"$ROOT"/*/* | *..*)
		answer "$name" 2 "target '$target': want one directory directly under $ROOT"
		continue
		;;
	"$ROOT"/?*) ;;
	*)
		answer "$name" 2 "target '$target': want one directory directly under $ROOT"
		continue
		;;
	esac
	if [ -z "$source" ]; then
		answer "$name" 2 "no source"
		continue
	fi
	if mountpoint -q "$target" 2>/dev/null; then
		answer "$name" 0 "$target is already mounted"
		continue
	fi
	mkdir -p "$target" || {
		answer "$name" 1 "cannot make $target"
		continue
	}
	# A server that does not answer must not hold the node's loop: mount
	# and its helper (mount.nfs, mount.cifs) are stopped after 60 s.
	if [ -n "$options" ]; then
		out=$(timeout 60 mount -t "$type" -o "$options" "$source" "$target" 2>&1)
	else
		out=$(timeout 60 mount -t "$type" "$source" "$target" 2>&1)
	fi
	rc=$?
	answer "$name" "$rc" "mount -t $type $source $target: ${out:-ok}"
done
