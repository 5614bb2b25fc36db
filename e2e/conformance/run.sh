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
#                 and multiVolume on one family per protocol; full: every
#                 family, every external storage test but disruptive ones
#   FAMILIES      space-separated family folders, overriding the set
#   E2E_TEST      an e2e.test to use instead of building one
#   E2E_ARTIFACTS where the reports go (e2e/run.sh sets it)
set -euo pipefail

say() { echo "conformance: $*" >&2; }
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

if [ -z "${KUBECONFIG:-}" ] || [ -z "${E2E_LAB_FILE:-}" ]; then
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
focused)
	# One family per protocol: a directory, NFS, SMB, iSCSI, NVMe/TCP.
	families=${FAMILIES:-"local-hostpath zfs-generic-nfs zfs-generic-smb zfs-generic-iscsi zfs-generic-nvmeof"}
	focus='External.Storage.*(provisioning|snapshottable|volume-expand|volumeMode|multiVolume)'
	# Not [Slow]: every multiVolume spec carries it (the suite is
	# "multiVolume [Slow]"), and skipping it would leave multiVolume out.
	# Nor the block-refusal spec of drivers without block: it always waits
	# 5 minutes for a PVC that must stay Pending (full mode runs it).
	skip='\[Disruptive\]|\[Serial\]|should fail in binding dynamic provisioned PV to PVC|\[Feature:(Windows|SELinux|VolumeGroupSnapshotDataSource|VolumeAttributesClass|VolumeSnapshotMetadata)\]'
	;;
full)
	# Every folder with a testdriver (build/, agnhost/ and junitsum/ are not families).
	families=${FAMILIES:-"$(cd "$HERE" && for t in */testdriver.yaml; do printf '%s ' "${t%/testdriver.yaml}"; done)"}
	focus='External.Storage'
	skip='\[Disruptive\]|\[Feature:(Windows|SELinux|VolumeGroupSnapshotDataSource|VolumeAttributesClass|VolumeSnapshotMetadata)\]'
	;;
*) die "CONFORMANCE=$MODE: want focused or full" ;;
esac

E2E=$(ensure_e2e_test)

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
ART=${E2E_ARTIFACTS:-$ROOT/bin/e2e-artifacts/conformance-$(date -u +%Y%m%dT%H%M%SZ)}/conformance
mkdir -p "$ART"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
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
		kubectl_bin=${KUBECTL:-kubectl}
		"$kubectl_bin" -n switchyard create secret generic e2e-smb-credentials --from-literal=username=root --from-literal="password=$pw" \
			--dry-run=client -o yaml | "$kubectl_bin" apply -f - >&2
	fi
	out=$ART/$fam
	mkdir -p "$out"
	say "$fam: e2e.test -storage.testdriver=$fam/testdriver.yaml ($MODE)"
	start=$SECONDS
	set +e
	# -storage.testdriver reads its file while the flags are parsed, from
	# the working directory; the FromFile paths inside are under -repo-root.
	(cd "$HERE" && "$E2E" -kubeconfig "$KUBECONFIG" -repo-root "$HERE" -storage.testdriver="$HERE/$fam/testdriver.yaml" -report-dir "$out" \
		-ginkgo.focus="$focus" -ginkgo.skip="$skip" -ginkgo.timeout=2h -ginkgo.v -ginkgo.no-color -ginkgo.junit-report="$out/junit.xml" \
		>"$out/e2e.log" 2>&1)
	code=$?
	set -e
	line=$(grep -E '^Ran [0-9]+ of [0-9]+ Specs' "$out/e2e.log" | tail -1 || true)
	counts=$(grep -E '^(SUCCESS|FAIL)! -- ' "$out/e2e.log" | tail -1 || true)
	if [ -z "$line" ]; then
		say "$fam: e2e.test ran no specs; the start of $out/e2e.log:"
		grep -v '^  ' "$out/e2e.log" | head -5 >&2 || true
	fi
	echo "$fam: ${line:-no summary} ${counts:-} exit $code, $((SECONDS - start))s" | tee -a "$summary" >&2
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
