#!/usr/bin/env bash
# Builds kube-apiserver v1.37.2 and etcd v3.7.x from the Go module proxy and
# runs them on 127.0.0.1 for serverdiff. Not part of CI: it takes about 15
# minutes cold on 2 cores and runs servers.
#
#   servers.sh build    # wrapper modules and binaries under $KAS_DIR
#   servers.sh start    # etcd, then kube-apiserver; writes $KAS_DIR/kubeconfig
#   servers.sh stop     # stops both (by the pids this script recorded)
#
# KAS_DIR defaults to /work/kas; nothing is written into the repository.
set -euo pipefail

KAS_DIR=${KAS_DIR:-/work/kas}
KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
STAGING_VERSION=${STAGING_VERSION:-v0.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
PORT=${PORT:-6443}

build() {
	mkdir -p "$KAS_DIR/kube" "$KAS_DIR/etcd" "$KAS_DIR/bin"
	# kube-apiserver: a wrapper module requiring k8s.io/kubernetes, each
	# staging module it requires at v0.0.0 replaced by the matching release.
	(
		cd "$KAS_DIR/kube"
		go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null
		mod=$(go env GOMODCACHE)/k8s.io/kubernetes@$KUBE_VERSION/go.mod
		{
			printf 'module kaswrapper\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\n' "$KUBE_VERSION"
			grep -E '^\s+k8s.io/[a-z0-9-]+ v0.0.0$' "$mod" | awk -v v="$STAGING_VERSION" '{print "replace "$1" => "$1" "v}'
		} >go.mod
		printf '//go:build tools\n\npackage kaswrapper\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' >tools.go
		nice -n 19 go mod tidy -e
		nice -n 19 go build -o "$KAS_DIR/bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
	)
	# etcd: the server module's main package.
	(
		cd "$KAS_DIR/etcd"
		printf 'module etcdwrapper\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >go.mod
		printf '//go:build tools\n\npackage etcdwrapper\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >tools.go
		nice -n 19 go mod tidy -e
		nice -n 19 go build -o "$KAS_DIR/bin/etcd" go.etcd.io/etcd/server/v3
	)
}

start() {
	local run=$KAS_DIR/run
	mkdir -p "$run"
	# Credentials: a static token for an admin, service-account keys.
	[[ -f $run/token ]] || head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$run/token"
	local token
	token=$(cat "$run/token")
	printf '%s,admin,admin-uid,system:masters\n' "$token" >"$run/tokens.csv"
	[[ -f $run/sa.key ]] || openssl genrsa -out "$run/sa.key" 2048 2>/dev/null
	openssl rsa -in "$run/sa.key" -pubout -out "$run/sa.pub" 2>/dev/null

	rm -rf "$run/etcd-data"
	nice -n 10 "$KAS_DIR/bin/etcd" --name default --data-dir "$run/etcd-data" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster default=http://127.0.0.1:2380 --log-level warn >"$run/etcd.log" 2>&1 &
	echo $! >"$run/etcd.pid"

	# Only the policy plugins and NamespaceLifecycle admit: the other
	# default plugins (ServiceAccount, Priority, DefaultTolerationSeconds,
	# LimitRanger, ...) mutate pods in ways vapkit does not model, and need
	# controllers that do not run here. AlwaysAllow lets the admin
	# impersonate a case's user.
	nice -n 10 "$KAS_DIR/bin/kube-apiserver" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$PORT" \
		--etcd-servers http://127.0.0.1:2379 \
		--cert-dir "$run/certs" \
		--token-auth-file "$run/tokens.csv" \
		--authorization-mode AlwaysAllow \
		--service-account-issuer https://kubernetes.default.svc \
		--service-account-key-file "$run/sa.pub" \
		--service-account-signing-key-file "$run/sa.key" \
		--service-cluster-ip-range 10.0.0.0/24 --endpoint-reconciler-type none \
		--enable-admission-plugins NamespaceLifecycle,MutatingAdmissionPolicy,ValidatingAdmissionPolicy \
		--disable-admission-plugins LimitRanger,ServiceAccount,DefaultStorageClass,PersistentVolumeClaimResize,DefaultTolerationSeconds,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ResourceQuota,StorageObjectInUseProtection,PodGroupProtection,Priority,TaintNodesByCondition,RuntimeClass,CertificateApproval,CertificateSigning,ClusterTrustBundleAttest,CertificateSubjectRestriction,DefaultIngressClass,PodSecurity,PodTopologyLabels,NodeDeclaredFeatureValidator,PodResizeValidator \
		>"$run/kube-apiserver.log" 2>&1 &
	echo $! >"$run/kube-apiserver.pid"

	cat >"$KAS_DIR/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:$PORT", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: "$token"}
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
KC
	for _ in $(seq 120); do
		if curl -ksf -H "Authorization: Bearer $token" "https://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; then
			echo "kube-apiserver ready; kubeconfig: $KAS_DIR/kubeconfig"
			return 0
		fi
		sleep 1
	done
	echo "kube-apiserver not ready after 120 s; see $run/kube-apiserver.log" >&2
	return 1
}

stop() {
	local run=$KAS_DIR/run
	for p in kube-apiserver etcd; do
		if [[ -f $run/$p.pid ]]; then
			local pid
			pid=$(cat "$run/$p.pid")
			kill "$pid" 2>/dev/null || true
			# Wait until it has exited and released its ports.
			for _ in $(seq 300); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			rm -f "$run/$p.pid"
		fi
	done
}

case ${1:-} in
build) build ;;
start) start ;;
stop) stop ;;
*)
	echo "usage: $0 build|start|stop" >&2
	exit 2
	;;
esac
