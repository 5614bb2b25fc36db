// Package containers runs the lab's simulators (TrueNAS, Infinia, ZFS over
// SSH: subcommands of cmd/switchyard-lab) as Docker containers started and
// removed by tests through testcontainers-go: the container tier of
// lab/testtier.
//
// The image is built locally from a static switchyard-lab binary, FROM
// scratch, with the conventions of scripts/images.sh: Docker's legacy
// builder with --network host (the lab's dockerd runs with --bridge=none)
// and a tag derived from the content, so a second build of the same binary
// is a no-op. No registry is involved.
//
// Containers use the host's network (the simulators listen on 127.0.0.1
// ports from the caller's range) and docker's --init, so they stop at once.
// Ryuk, testcontainers' reaper, is an image from a registry: it is disabled
// (TESTCONTAINERS_RYUK_DISABLED=true) and every container is removed by
// its test's cleanup instead.
package containers
