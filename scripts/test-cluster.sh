#!/usr/bin/env bash
# Container cluster test: three coordinators and two agents in Docker
# (deploy/cluster), with TLS on every link (HTTPS for agents and clients,
# mutual TLS for Raft and between coordinators, certificates made at start
# with `gpulayer tls`), driven through a leader kill, a follower partition and
# a full restart by integration/clusterscenario, which checks that every
# job succeeded exactly once and that all coordinators hold the same state.
#
# Needs Go, a C compiler (static cgo build), Docker and docker compose
# (v2 plugin or docker-compose v1). Pulls nothing: the image is built
# FROM scratch out of the static binaries built here.
#
# Everything it starts is torn down on exit, success or not: the compose
# project (unique per run) with its containers, network and volumes, the
# image it built (tagged gpulayer-cluster:<project>; set
# GPULAYER_KEEP_IMAGE=1 to keep it), and its temporary directory.
# On failure the containers' logs are printed first (GPULAYER_CLUSTER_LOGS=DIR
# also saves them there, pass or fail).
#
# Environment: GPULAYER_CLUSTER_JOBS (default 200),
# GPULAYER_CLUSTER_PARTITION (default 5s), GPULAYER_CLUSTER_MAX_FAILOVER
# (e.g. 10s: fail when the failover takes longer; default: only report it),
# GPULAYER_SUBNET (default: a free one Docker picks).
set -euo pipefail
cd "$(dirname "$0")/.."

began=$(date +%s)
project="glcluster$(date +%s)$$"
image="gpulayer-cluster:${project}"
compose_file="deploy/cluster/docker-compose.yml"
work=$(mktemp -d "${TMPDIR:-/tmp}/gpulayer-cluster.XXXXXX")
started=0
built_image=0
driver_pid=
probe_net=

log() { echo "test-cluster: $*" >&2; }
# quiet runs a command, showing its output only if it fails.
quiet() {
	if ! "$@" >"$work/cmd.log" 2>&1; then
		cat "$work/cmd.log" >&2
		log "failed: $*"
		return 1
	fi
}

if docker compose version >/dev/null 2>&1; then
	compose=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then
	compose=(docker-compose)
else
	log "neither 'docker compose' nor 'docker-compose' is installed"
	exit 1
fi
dc() { "${compose[@]}" -p "$project" -f "$compose_file" "$@"; }

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$driver_pid" ]; then
		kill "$driver_pid" 2>/dev/null || true
		wait "$driver_pid" 2>/dev/null || true
	fi
	if [ "$started" = 1 ]; then
		if [ -n "${GPULAYER_CLUSTER_LOGS:-}" ]; then
			mkdir -p "$GPULAYER_CLUSTER_LOGS"
			dc logs --no-color --timestamps >"$GPULAYER_CLUSTER_LOGS/$project.log" 2>&1 || true
			log "container logs saved in $GPULAYER_CLUSTER_LOGS/$project.log"
		fi
		if [ "$rc" != 0 ]; then
			log "failed; the last container logs:"
			dc logs --no-color --tail 60 >&2 2>&1 || true
		fi
		log "tearing down compose project $project"
		dc down -v --remove-orphans -t 5 >/dev/null 2>&1 || log "WARNING: 'down -v' of project $project failed"
	fi
	if [ -n "$probe_net" ]; then
		docker network rm "$probe_net" >/dev/null 2>&1 || true
	fi
	if [ "$built_image" = 1 ] && [ "${GPULAYER_KEEP_IMAGE:-0}" != 1 ]; then
		docker image rm -f "$image" >/dev/null 2>&1 || log "WARNING: could not remove image $image"
	fi
	rm -rf "$work"
	log "$([ "$rc" = 0 ] && echo passed || echo "FAILED (exit $rc)") in $(($(date +%s) - began))s"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# 1. Static binaries (cgo for NVML, linked statically so they run FROM
# scratch) and the driver (an ordinary host binary).
log "building static binaries"
export CGO_ENABLED=1
ldflags='-s -w -linkmode external -extldflags "-static"'
rootfs="$work/ctx/rootfs"
mkdir -p "$rootfs/tmp" "$rootfs/data" "$rootfs/plugins"
chmod 1777 "$rootfs/tmp"
chmod 0700 "$rootfs/data"
# (The linker's warnings about glibc functions in static binaries are
# expected and hidden; the output is shown when a build fails.)
quiet go build -tags osusergo,netgo -ldflags "$ldflags" -o "$rootfs/gpulayer" ./cmd/gpulayer
quiet go build -tags osusergo,netgo -ldflags "$ldflags" -o "$rootfs/plugins/gpulayer-executor-echo" ./examples/plugins/echo
# The task the scenario runs with the exec executor to check the sandbox.
CGO_ENABLED=0 quiet go build -o "$rootfs/sandboxprobe" ./integration/clusterscenario/sandboxprobe
quiet go build -o "$work/clusterscenario" ./integration/clusterscenario

# 2. The image, FROM scratch: nothing to pull.
log "building image $image"
built_image=1
quiet docker build --pull=false -f deploy/cluster/Dockerfile -t "$image" "$work/ctx"

# 3. Tokens: init once; every coordinator reads the same credential hashes.
mkdir -p "$work/bootstrap"
"$rootfs/gpulayer" coordinator init --data-dir "$work/bootstrap" --json >"$work/tokens.json"
admin_token=$(sed -n 's/.*"admin_token":"\([^"]*\)".*/\1/p' "$work/tokens.json")
join_token=$(sed -n 's/.*"join_token":"\([^"]*\)".*/\1/p' "$work/tokens.json")
rm -f "$work/tokens.json"
if [ -z "$admin_token" ] || [ -z "$join_token" ]; then
	log "coordinator init printed no tokens"
	exit 1
fi

# 4. Certificates, made with the binary's own tooling: a cluster CA (its
# key stays in $work/ca, never mounted), one server certificate per
# coordinator carrying server.global.gpulayer (verified between
# coordinators, for Raft and forwarding) and its container name (verified
# by agents and this script over HTTPS), and the CA bundle.
log "creating the cluster CA and certificates (gpulayer tls)"
tls_dir="$work/tls"
mkdir -p "$work/ca" "$tls_dir"
quiet "$rootfs/gpulayer" tls ca create --dir "$work/ca" --days 2
for c in c1 c2 c3; do
	quiet "$rootfs/gpulayer" tls cert create --server --days 1 \
		--ca "$work/ca/gpulayer-ca.pem" --ca-key "$work/ca/gpulayer-ca-key.pem" \
		--dir "$tls_dir" --out "$c" --additional-dnsname "$c"
done
cp "$work/ca/gpulayer-ca.pem" "$tls_dir/gpulayer-ca.pem"

# 5. A subnet no other network uses (Docker picks it for a probe network,
# which is removed again), so that coordinators keep fixed addresses.
if [ -z "${GPULAYER_SUBNET:-}" ]; then
	probe_net="${project}_probe"
	docker network create "$probe_net" >/dev/null
	GPULAYER_SUBNET=$(docker network inspect -f '{{range .IPAM.Config}}{{.Subnet}} {{end}}' "$probe_net" | awk '{print $1}')
	docker network rm "$probe_net" >/dev/null
	probe_net=
fi
case "$GPULAYER_SUBNET" in
*.0/1[6-9] | *.0/2[0-4]) ;;
*)
	log "subnet '$GPULAYER_SUBNET' is not an IPv4 /16../24 network; set GPULAYER_SUBNET"
	exit 1
	;;
esac
GPULAYER_IP_PREFIX=${GPULAYER_SUBNET%.*}

# Host ports for the coordinators' HTTP APIs: fixed for the whole run (an
# ephemeral published port would change when a container restarts).
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			case " ${ports[*]:-} " in *" $p "*) continue ;; esac
			echo "$p"
			return
		fi
	done
	return 1
}
ports=()
for _ in 1 2 3; do ports+=("$(free_port)"); done

export GPULAYER_IMAGE="$image" GPULAYER_BOOTSTRAP_DIR="$work/bootstrap" GPULAYER_JOIN_TOKEN="$join_token" GPULAYER_TLS_DIR="$tls_dir"
export GPULAYER_SUBNET GPULAYER_IP_PREFIX
export GPULAYER_C1_PORT=${ports[0]} GPULAYER_C2_PORT=${ports[1]} GPULAYER_C3_PORT=${ports[2]}

# 6. The cluster: coordinators first, then the agents (they retry until a
# leader answers).
log "starting project $project (subnet $GPULAYER_SUBNET, coordinators on 127.0.0.1:${ports[0]},${ports[1]},${ports[2]})"
started=1
quiet dc up -d --no-build c1 c2 c3
quiet dc up -d --no-build agent1 agent2
cid() { dc ps -q "$1"; }
name() { docker inspect -f '{{.Name}}' "$(cid "$1")" | sed 's#^/##'; }
containers="$(name c1),$(name c2),$(name c3)"
agents="$(name agent1),$(name agent2)"
network=$(docker inspect -f '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' "$(cid c1)" | awk '{print $1}')

# 7. The scenario. Its last stdout line is the summary. It runs in the
# background so that a signal to this script reaches the trap at once.
log "running the scenario"
GPULAYER_TOKEN="$admin_token" "$work/clusterscenario" \
	-coordinators "https://127.0.0.1:${ports[0]},https://127.0.0.1:${ports[1]},https://127.0.0.1:${ports[2]}" \
	-ca-file "$tls_dir/gpulayer-ca.pem" \
	-node-ids c1,c2,c3 \
	-containers "$containers" \
	-agents "$agents" \
	-network "$network" \
	-jobs "${GPULAYER_CLUSTER_JOBS:-200}" \
	-partition "${GPULAYER_CLUSTER_PARTITION:-5s}" \
	-max-failover "${GPULAYER_CLUSTER_MAX_FAILOVER:-0}" \
	-run-id "$project" &
driver_pid=$!
rc=0
wait "$driver_pid" || rc=$?
driver_pid=
exit "$rc"
