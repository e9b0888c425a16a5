package gen

import "fmt"

// genObject returns an object of the request's kind; variant changes the
// values so that an UPDATE's old and new objects differ.
func (g *generator) genObject(variant int) obj {
	k := g.kind
	apiVersion := k.version
	if k.group != "" {
		apiVersion = k.group + "/" + k.version
	}
	if g.req.asV2 {
		apiVersion = k.group + "/v2"
	}
	meta := obj{"name": g.req.name}
	if k.namespaced && g.req.namespace != "" {
		meta["namespace"] = g.req.namespace
	}
	if g.chance(0.6) {
		meta["labels"] = obj{"app": pick(g, []string{"web", "db"})}
	}
	if g.chance(0.2) {
		meta["annotations"] = obj{"owner": "team-a"}
	}
	o := obj{"apiVersion": apiVersion, "kind": k.kind, "metadata": meta}
	replicas := g.intn(6) + variant
	image := pick(g, []string{"nginx:1.27", "redis", "registry.example.com/app:v2"})
	switch k.kind {
	case "Deployment":
		o["spec"] = obj{
			"replicas": replicas,
			"selector": obj{"matchLabels": obj{"app": "web"}},
			"template": obj{"metadata": obj{"labels": obj{"app": "web"}},
				"spec": obj{"containers": []any{obj{"name": "app", "image": image}}}},
		}
		if g.chance(0.1) {
			o["spec"].(obj)["unknownField"] = true
		}
	case "ConfigMap":
		data := obj{"mode": pick(g, []string{"fast", "safe"})}
		if g.chance(0.8) {
			data["count"] = fmt.Sprint(replicas)
		}
		o["data"] = data
	case "Pod":
		spec := obj{"containers": []any{obj{"name": "app", "image": image}}}
		if g.chance(0.3) {
			spec["nodeName"] = "node-1"
		}
		o["spec"] = spec
	case "Namespace":
		delete(meta, "namespace")
	case "ClusterRole":
		o["rules"] = []any{obj{"apiGroups": []any{""}, "resources": []any{"pods"},
			"verbs": []any{pick(g, []string{"get", "*"})}}}
	case "Widget":
		o["spec"] = obj{"size": replicas, "color": pick(g, []string{"red", "blue"})}
		if g.chance(0.2) {
			o["spec"].(obj)["size"] = 2.5
		}
	case "Scale":
		o["spec"] = obj{"replicas": replicas}
		o["status"] = obj{"replicas": 3, "selector": "app=web"}
	case "PodExecOptions":
		delete(o, "metadata")
		o["container"] = "app"
		o["command"] = []any{pick(g, []string{"sh", "ls", "id"}), "-c", "true"}
		o["stdin"] = g.chance(0.5)
		o["tty"] = g.chance(0.5)
	}
	return o
}

func (g *generator) genReview() obj {
	k := g.kind
	version := k.version
	if g.req.asV2 {
		version = "v2"
	}
	resGroup := k.group
	if k.kind == "Scale" {
		resGroup = "apps"
	}
	req := obj{
		"uid":       fmt.Sprintf("00000000-0000-0000-0000-%012d", g.intn(1_000_000)),
		"kind":      obj{"group": k.group, "version": version, "kind": k.kind},
		"resource":  obj{"group": resGroup, "version": version, "resource": k.resource},
		"name":      g.req.name,
		"operation": g.req.op,
		"userInfo":  obj{"username": g.req.user},
	}
	if k.sub != "" {
		req["subResource"] = k.sub
	}
	if g.req.namespace != "" {
		req["namespace"] = g.req.namespace
	}
	if len(g.req.groups) > 0 {
		var groups []any
		for _, gr := range g.req.groups {
			groups = append(groups, gr)
		}
		req["userInfo"].(obj)["groups"] = groups
	}
	switch g.req.op {
	case "CREATE", "CONNECT":
		req["object"] = g.genObject(0)
	case "UPDATE":
		req["object"] = g.genObject(1)
		req["oldObject"] = g.genObject(0)
	case "DELETE":
		req["oldObject"] = g.genObject(0)
	}
	if g.req.op != "CONNECT" && g.chance(0.1) {
		req["dryRun"] = true
		kind := map[string]string{"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}[g.req.op]
		req["options"] = obj{"apiVersion": "meta.k8s.io/v1", "kind": kind, "dryRun": []any{"All"}}
	}
	return obj{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}
}
