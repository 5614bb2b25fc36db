#!/usr/bin/env bash
# Kubernetes' own tests for CSI drivers (test/e2e/storage/external of
# kubernetes/kubernetes) against switchyard, one backend family at a time,
# through the testdriver YAML of each family in this folder.
#
# e2e.test is built from the Go module proxy at the cluster's release
# (v1.37.2): `go test -c k8s.io/kubernetes/test/e2e` in the nested module
# build/ (the same staging replaces as lab/cluster/kubebuild), cached under
# /var/cache/switchyard-lab/e2e-test/<key>/ by the hash of build/'s files
# and the Go version. A cold build takes long (the whole e2e suite links
# in); a warm start finds the binary in well under a second.
#
# Without KUBECONFIG this runs e2e/run.sh (cluster, images, chart) with
# E2E_RUN=conformance, which calls back here with the cluster up.
#
# env:
#   CONFORMANCE   focused (default): provisioning, snapshots, expansion, block
#                 and multiVolume on one family per protocol; ci: CI's share of
#                 focused, local-hostpath without the snapshot specs' retain
#                 variants (below); vm: the storage VM's share for CI, a
#                 file and a block family (zfs-generic-nfs, -iscsi), two
#                 specs each (restore from a snapshot, expand in use);
#                 full: every family, every external storage test but
#                 disruptive ones
#   FAMILIES      space-separated family folders, overriding the set
#   E2E_TEST      an e2e.test to use instead of building one
#   FOCUS         a ginkgo focus replacing the mode's (one spec or a few,
#                 e.g. FOCUS='Pre-provisioned Snapshot'); the mode's skips stay
#   CONFORMANCE_DRY_RUN  1: list each family's specs (ginkgo's dry run) and
#                 exit, without a cluster
#   SIDECAR_WAIT  seconds to wait for the sidecars of a family's node to
#                 start their controllers (default 300; see wait_sidecars)
#   CONFORMANCE_TIMEOUT  ginkgo's -timeout per family (default 2h): a bound
#                 for runs under the lab lock; when it passes, the running
#                 spec is interrupted (its cleanup runs) and the rest are
#                 reported as not run
#   E2E_ARTIFACTS where the reports go (e2e/run.sh sets it)
set -euo pipefail

say() { echo "conformance: $*" >&2; }
# No HTTP proxy for anything that talks to the cluster (as e2e/run.sh:
# CI's egress proxy refuses the lab's local addresses).
NOPROXY=(env)
for v in http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY; do NOPROXY+=(-u "$v"); done
die() {
	say "$*"
	exit 1
}

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
GO=${GO:-go}
MODE=${CONFORMANCE:-focused}

# The tests' pods run from registry.k8s.io/e2e-test-images/* (busybox,
# glibc-dns-testing, agnhost), which no registry here serves: built locally
# under those names (scripts/ensure-e2e-test-images.sh, cached by content key).
test_images() {
	local dir
	dir=$(GO=$GO "$ROOT/scripts/ensure-e2e-test-images.sh" "$@" | tail -1) || die "scripts/ensure-e2e-test-images.sh failed: the tests' pods would have no image"
	[ -f "$dir/images.txt" ] || die "scripts/ensure-e2e-test-images.sh printed $dir, which has no images.txt"
	echo "$dir"
}

if [ "${CONFORMANCE_DRY_RUN:-0}" != 1 ] && { [ -z "${KUBECONFIG:-}" ] || [ -z "${E2E_LAB_FILE:-}" ]; }; then
	say "no cluster given (KUBECONFIG, E2E_LAB_FILE): starting one with e2e/run.sh"
	# e2e/run.sh imports E2E_EXTRA_IMAGES into every node it starts (the
	# storage VM's node too, which has no way in afterwards).
	dir=$(test_images)
	E2E_EXTRA_IMAGES=$(awk -v d="$dir" '{printf "%s%s/%s", (NR > 1 ? " " : ""), d, $1}' "$dir/images.txt")
	export E2E_EXTRA_IMAGES
	E2E_RUN=conformance exec "$ROOT/e2e/run.sh"
fi

ensure_e2e_test() {
	if [ -n "${E2E_TEST:-}" ]; then
		echo "$E2E_TEST"
		return
	fi
	local key dir tmp
	key=$( (cat "$HERE"/build/go.mod "$HERE"/build/go.sum "$HERE"/build/tools.go && $GO version) | sha256sum | cut -c1-16)
	dir=${SWITCHYARD_LAB_CACHE:-/var/cache/switchyard-lab}/e2e-test/$key
	if [ -x "$dir/e2e.test" ]; then
		echo "$dir/e2e.test"
		return
	fi
	say "building e2e.test v1.37.2 (go test -c k8s.io/kubernetes/test/e2e; cached in $dir)"
	mkdir -p "$(dirname "$dir")"
	tmp=$(mktemp -d "$(dirname "$dir")/.build.XXXXXX")
	local start=$SECONDS
	(cd "$HERE/build" && GOFLAGS=-mod=readonly CGO_ENABLED=0 GOTOOLCHAIN=local nice "$GO" test -c -trimpath -o "$tmp/e2e.test" \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" \
		k8s.io/kubernetes/test/e2e) >&2
	rm -rf "$dir"
	mv "$tmp" "$dir"
	say "built e2e.test in $((SECONDS - start))s"
	echo "$dir/e2e.test"
}

case "$MODE" in
focused | ci)
	# One family per protocol: a directory, NFS, SMB, iSCSI, NVMe/TCP.
	families=${FAMILIES:-"local-hostpath zfs-generic-nfs zfs-generic-smb zfs-generic-iscsi zfs-generic-nvmeof"}
	focus='External.Storage.*(provisioning|snapshottable|volume-expand|volumeMode|multiVolume)'
	# Not [Slow]: every multiVolume spec carries it (the suite is
	# "multiVolume [Slow]"), and skipping it would leave multiVolume out.
	# Nor the block-refusal spec of drivers without block: it always waits
	# 5 minutes for a PVC that must stay Pending (full mode runs it).
	skip='\[Disruptive\]|\[Serial\]|should fail in binding dynamic provisioned PV to PVC|\[Feature:(Windows|SELinux|VolumeGroupSnapshotDataSource|VolumeAttributesClass|VolumeSnapshotMetadata)\]'
	if [ "$MODE" = ci ]; then
		# CI's budget (docs/testing.md has the per-spec times): local-hostpath
		# on the host node, and each snapshot pattern with its delete policy
		# only. A retain variant runs the same driver calls but DeleteSnapshot
		# (the policy is the snapshot-controller's and the sidecar's) and
		# costs 42-60 s: the three left out save 154 s of 510.
		families=${FAMILIES:-local-hostpath}
		skip="$skip|\(retain policy\)"
	fi
	;;
full)
	# Every folder with a testdriver (build/, agnhost/ and junitsum/ are not families).
	families=${FAMILIES:-"$(cd "$HERE" && for t in */testdriver.yaml; do printf '%s ' "${t%/testdriver.yaml}"; done)"}
	focus='External.Storage'
	skip='\[Disruptive\]|\[Feature:(Windows|SELinux|VolumeGroupSnapshotDataSource|VolumeAttributesClass|VolumeSnapshotMetadata)\]'
	;;
vm)
	# The storage VM's share for CI: one file and one block protocol, two
	# specs each (focus per family, below), chosen for the most driver
	# calls per minute under TCG, where every pod start costs 20-40 s on a
	# quiet machine and minutes on a loaded one (docs/testing.md has the
	# times): a volume restored from a snapshot (CreateVolume, stage and
	# publish, CreateSnapshot, a volume from it, the data read back, every
	# delete) and a volume expanded while a pod uses it (ControllerExpand,
	# and for block NodeExpandVolume's rescan).
	families=${FAMILIES:-"zfs-generic-nfs zfs-generic-iscsi"}
	focus=""
	skip='\[Disruptive\]|\[Serial\]|\[Feature:(Windows|SELinux|VolumeGroupSnapshotDataSource|VolumeAttributesClass|VolumeSnapshotMetadata)\]'
	;;
*) die "CONFORMANCE=$MODE: want focused, ci, vm or full" ;;
esac
[ -z "${FOCUS:-}" ] || focus="External.Storage.*($FOCUS)"

# yaml_field FILE KEY: the first "KEY: value" at any indent (comments cut).
yaml_field() { awk -v k="$2:" '$1 == k {print $2; exit}' "$1"; }

# vm_focus TESTDRIVER: CONFORMANCE=vm's two specs for the family, in its
# block volume mode when it has one (the Filesystem path of the block
# families is make e2e's data path in CI).
vm_focus() {
	local mode='default fs'
	[ "$(yaml_field "$1" block)" = true ] && mode='block volmode'
	echo "External.Storage.*\\($mode\\)(\\] provisioning should provision storage with snapshot data source \\[|\\(allowExpansion\\)\\] volume-expand should resize volume when PVC is edited while pod is using it)"
}

E2E=$(ensure_e2e_test)

# CONFORMANCE_DRY_RUN=1: the specs each family would run (ginkgo's dry
# run: no cluster, nothing started), to size a focus before taking the lab.
if [ "${CONFORMANCE_DRY_RUN:-0}" = 1 ]; then
	for fam in $families; do
		[ -f "$HERE/$fam/testdriver.yaml" ] || die "no $HERE/$fam/testdriver.yaml"
		famfocus=$focus
		[ -n "$famfocus" ] || famfocus=$(vm_focus "$HERE/$fam/testdriver.yaml")
		list=$(cd "$HERE" && "$E2E" -repo-root "$HERE" -storage.testdriver="$HERE/$fam/testdriver.yaml" -ginkgo.dry-run -ginkgo.v -ginkgo.no-color \
			-ginkgo.focus="$famfocus" -ginkgo.skip="$skip" 2>&1) || die "$fam: e2e.test -ginkgo.dry-run failed: $(printf '%s\n' "$list" | tail -3)"
		echo "$fam ($MODE): $(printf '%s\n' "$list" | grep -E '^Ran [0-9]+ of' | tail -1)"
		# Each spec is its "External Storage ..." line; the line after it
		# names its source. (run.sh may leave out one more spec per node:
		# hostexec_skip, decided against the running cluster.)
		printf '%s\n' "$list" | sed -n 's/^External Storage \[Driver: [^]]*\] /  /p'
	done
	exit 0
fi

# The host node's containerd gets the test images here (idempotent: quick
# when e2e/run.sh imported them already); kind nodes load them.
case "${E2E_PROVIDER:-local}" in
local)
	sock=${E2E_HOST_CONTAINERD:-/var/lib/switchyard-lab/cluster/containerd/containerd.sock}
	[ -S "$sock" ] || die "no containerd socket at $sock (the lab's host node; set E2E_HOST_CONTAINERD)"
	test_images --import "$sock" >/dev/null
	;;
kind)
	dir=$(test_images)
	while read -r tar _; do kind load image-archive "$dir/$tar" --name "${KIND_CLUSTER:-switchyard-e2e}" >&2; done <"$dir/images.txt"
	;;
esac

# hostexec_skip NODE: the volumeMode spec "should not mount / map unused
# volumes" looks into the kubelet's pod folder from a privileged pod on NODE
# with `nsenter --mount=/rootfs/proc/1/ns/mnt` (the node's PID 1 through a
# hostPath of /). On the lab's host node PID 1 is this machine's own init,
# which no process may enter, root included (it holds CAP_SYS_RESOURCE,
# which nothing else here has: reference/lab-machine.md): the spec cannot
# pass there, for any driver. Prints the skip pattern when that is so
# (probed here: the host node's pods share this machine's PID namespace).
hostexec_skip() {
	[ "${E2E_PROVIDER:-local}" = local ] && [ "$1" = "${E2E_HOST_NODE:-lab-host}" ] || return 0
	nsenter --mount=/proc/1/ns/mnt -- true 2>/dev/null && return 0
	echo 'should not mount / map unused volumes in a pod'
}

# label_preprovisioned DRIVER NODE: until killed, gives every
# VolumeSnapshotContent of DRIVER made from a bare snapshot handle (a
# pre-provisioned one) and carrying no snapshot.storage.kubernetes.io/managed-by
# label that label for NODE. The main release runs strategy node, so its
# csi-snapshotters run with --node-deployment and watch only contents
# labelled with their own node; the snapshot-controller labels the contents
# it makes for a PVC's snapshot, never one a user creates. So a
# pre-provisioned content needs the label from whoever creates it, the step
# docs/testing.md tells users of strategy node; the suite's "Pre-provisioned
# Snapshot" specs create theirs without labels, and this is that step.
label_preprovisioned() {
	local driver=$1 node=$2 name
	while sleep 2; do
		"${NOPROXY[@]}" "$KUBECTL_BIN" get volumesnapshotcontents -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.spec.driver}{"\t"}{.spec.source.snapshotHandle}{"\t"}{.metadata.labels.snapshot\.storage\.kubernetes\.io/managed-by}{"\n"}{end}' 2>/dev/null |
			awk -F'\t' -v d="$driver" '$2 == d && $3 != "" && $4 == "" {print $1}' |
			while read -r name; do
				"${NOPROXY[@]}" "$KUBECTL_BIN" label volumesnapshotcontent "$name" "snapshot.storage.kubernetes.io/managed-by=$node" >&2 || true
			done || true # (a failed listing is tried again 2 s later)
	done
}
KUBECTL_BIN=${KUBECTL:-kubectl}

# wait_sidecars NODE: waits (up to SIDECAR_WAIT seconds, default 300) until
# the csi-provisioner and csi-snapshotter of the main release's pod on NODE
# have started their controllers, and prints how long that took. e2e/run.sh
# waits for the driver's registration and the pod's readiness; but a
# container counts as started when its process is, and under TCG on a
# loaded machine the sidecars' Go processes then took two more minutes to
# start their controllers (2026-11-26: provisioner 14:35:13, container
# started 14:33:19), which the first spec's PVC then waited through. Once
# per node. Pods of strategy deployment (no sidecars on NODE): nothing to
# wait for here. Sets sidecar_msg (not printed: called without a subshell,
# so that waited_nodes keeps the node).
waited_nodes=" "
wait_sidecars() {
	local node=$1 pod containers t0=$SECONDS
	case "$waited_nodes" in *" $node "*) return 0 ;; esac
	waited_nodes="$waited_nodes$node "
	pod=$("${NOPROXY[@]}" "$KUBECTL_BIN" -n switchyard get pods -l app.kubernetes.io/instance=switchyard --field-selector "spec.nodeName=$node" \
		-o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.containers[*].name}{"\n"}{end}' 2>/dev/null | awk '/ csi-provisioner( |$)/ {print $1; exit}')
	[ -n "$pod" ] || return 0
	containers=$("${NOPROXY[@]}" "$KUBECTL_BIN" -n switchyard get pod "$pod" -o jsonpath='{.spec.containers[*].name}')
	# (grep reads all of the log: with pipefail, grep -q's early exit could
	# fail kubectl with SIGPIPE and the match would count as none.)
	while :; do
		if "${NOPROXY[@]}" "$KUBECTL_BIN" -n switchyard logs "$pod" -c csi-provisioner 2>/dev/null | grep 'Started provisioner controller' >/dev/null &&
			{ [[ " $containers " != *" csi-snapshotter "* ]] || "${NOPROXY[@]}" "$KUBECTL_BIN" -n switchyard logs "$pod" -c csi-snapshotter 2>/dev/null | grep 'Starting CSI snapshotter' >/dev/null; }; then
			sidecar_msg="the sidecars of $pod (node $node) had started their controllers after $((SECONDS - t0))s of waiting"
			say "$sidecar_msg"
			return 0
		fi
		if [ $((SECONDS - t0)) -ge "${SIDECAR_WAIT:-300}" ]; then
			sidecar_msg="the sidecars of $pod (node $node) had not started their controllers after ${SIDECAR_WAIT:-300}s (csi-provisioner: no 'Started provisioner controller'); the specs run anyway"
			say "$sidecar_msg"
			return 1
		fi
		sleep 3
	done
}
labeller=""
stop_labeller() {
	[ -z "$labeller" ] || kill "$labeller" 2>/dev/null || true
	labeller=""
}

ART=${E2E_ARTIFACTS:-$ROOT/bin/e2e-artifacts/conformance-$(date -u +%Y%m%dT%H%M%SZ)}/conformance
mkdir -p "$ART"
scratch=$(mktemp -d)
trap 'stop_labeller; rm -rf "$scratch"' EXIT
available=$(cd "$ROOT/e2e" && $GO run ./cmd/e2e-connections -lab "$E2E_LAB_FILE" -out "$scratch")
(cd "$ROOT/e2e" && $GO build -o "$scratch/junitsum" ./conformance/junitsum) || die "go build ./conformance/junitsum (module e2e) failed"
summary=$ART/summary.txt
: >"$summary"
rc=0
for fam in $families; do
	[ -f "$HERE/$fam/testdriver.yaml" ] || die "no $HERE/$fam/testdriver.yaml"
	# A family the lab does not have (no VM, no simulator) is listed, not run.
	if ! printf '%s\n' "$available" | grep -q "^$fam .*\.yaml$"; then
		echo "$fam: not run: the lab has no storage for it ($E2E_LAB_FILE)" | tee -a "$summary" >&2
		continue
	fi
	if [ "$fam" = zfs-generic-smb ]; then
		# The StorageClass names this node-stage Secret: the SMB account
		# of the ZFS simulator (the lab's root login).
		pw=$(sed -n '/"zfs"/,/}/s/.*"password": "\(.*\)".*/\1/p' "$E2E_LAB_FILE")
		"${NOPROXY[@]}" "$KUBECTL_BIN" -n switchyard create secret generic e2e-smb-credentials --from-literal=username=root --from-literal="password=$pw" \
			--dry-run=client -o yaml | "${NOPROXY[@]}" "$KUBECTL_BIN" apply -f - >&2
	fi
	out=$ART/$fam
	mkdir -p "$out"
	td=$HERE/$fam/testdriver.yaml
	node=$(yaml_field "$td" ClientNodeName)
	driver=$(yaml_field "$td" Name)
	famskip=$skip
	famfocus=$focus
	[ -n "$famfocus" ] || famfocus=$(vm_focus "$td")
	notes=()
	sidecar_msg=""
	if wait_sidecars "$node"; then
		[ -z "$sidecar_msg" ] || notes+=("note: $sidecar_msg")
	else
		notes+=("warning: $sidecar_msg")
	fi
	if hs=$(hostexec_skip "$node") && [ -n "$hs" ]; then
		famskip="$famskip|$hs"
		notes+=("skipped by run.sh: volumeMode \"$hs\": its hostexec pod's nsenter into PID 1's mount namespace is refused on this machine's host node (PID 1 is the machine's own init; root cannot enter it either)")
	fi
	if [ -n "$driver" ] && [ -n "$node" ]; then
		label_preprovisioned "$driver" "$node" &
		labeller=$!
		notes+=("note: run.sh labelled pre-provisioned VolumeSnapshotContents snapshot.storage.kubernetes.io/managed-by=$node (strategy node's snapshotters need it; the suite's contents have none)")
	fi
	say "$fam: e2e.test -storage.testdriver=$fam/testdriver.yaml ($MODE)"
	start=$SECONDS
	set +e
	# -storage.testdriver reads its file while the flags are parsed, from
	# the working directory; the FromFile paths inside are under -repo-root.
	(cd "$HERE" && "${NOPROXY[@]}" "$E2E" -kubeconfig "$KUBECONFIG" -repo-root "$HERE" -storage.testdriver="$HERE/$fam/testdriver.yaml" -report-dir "$out" \
		-ginkgo.focus="$famfocus" -ginkgo.skip="$famskip" -ginkgo.timeout="${CONFORMANCE_TIMEOUT:-2h}" -ginkgo.v -ginkgo.no-color -ginkgo.junit-report="$out/junit.xml" \
		>"$out/e2e.log" 2>&1)
	code=$?
	set -e
	stop_labeller
	line=$(grep -E '^Ran [0-9]+ of [0-9]+ Specs' "$out/e2e.log" | tail -1 || true)
	counts=$(grep -E '^(SUCCESS|FAIL)! -- ' "$out/e2e.log" | tail -1 || true)
	if [ -z "$line" ]; then
		say "$fam: e2e.test ran no specs; the start of $out/e2e.log:"
		grep -v '^  ' "$out/e2e.log" | head -5 >&2 || true
	fi
	echo "$fam: ${line:-no summary} ${counts:-} exit $code, $((SECONDS - start))s" | tee -a "$summary" >&2
	for n in "${notes[@]}"; do echo "$fam   $n"; done >>"$summary"
	# Every failed and skipped spec with its reason, from the JUnit report.
	if [ -s "$out/junit.xml" ]; then
		"$scratch/junitsum" "$out/junit.xml" | sed "s/^/$fam   /" >>"$summary" || true
	else
		grep -E '^\s*\[FAIL\]' "$out/e2e.log" | sed "s/^/$fam   /" | sort -u >>"$summary" || true
	fi
	[ "$code" = 0 ] || rc=1
done
say "summary ($summary):"
cat "$summary" >&2
exit $rc
