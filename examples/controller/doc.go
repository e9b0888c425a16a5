// Package controller embeds vapkit in Kubernetes controllers and admission
// webhooks that talk to a live cluster. It is a nested module (its own
// go.mod, requiring client-go, controller-runtime and Prometheus), so the
// vapkit library itself never depends on them.
//
// What it gives a controller author, ready to use:
//
//   - [ListerNamespaces] and [ClientNamespaces]: matching.NamespaceGetter
//     backed by a client-go informer or a controller-runtime (cached)
//     client, answering a missing Namespace with the API server's exact
//     NotFound;
//   - [InformerParams] and [ClientParams]: params.Source backed by dynamic
//     informers or a controller-runtime client;
//   - [PolicySync]: watches the cluster's ValidatingAdmissionPolicies and
//     bindings and recompiles the evaluator on change, debounced, keeping
//     the previous evaluator when a compile fails, with a generation;
//   - [DirSource]: the same for a directory of manifests (clusters without
//     RBAC to watch policies), loading only a file set unchanged across two
//     consecutive scans;
//   - [Handler]: serves the current evaluator as a controller-runtime
//     admission.Handler or a plain http.Handler, with a per-request
//     deadline answered per failurePolicy, a concurrency cap, one log/slog
//     line per request and Prometheus metrics ([Metrics]);
//   - [Shadow]: evaluates the objects a cluster holds against candidate
//     policies and reports which ones they would deny or warn on.
//
// Commands: cmd/webhook (cluster or directory mode) and cmd/shadow.
package controller
