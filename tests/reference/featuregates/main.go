// Command featuregates prints the feature gates kube-scheduler of this module's Kubernetes
// version knows, each with its versioned defaults, as JSON: the same gate set
// kube-scheduler's --feature-gates accepts (cmd/kube-scheduler/app registers them).
//
// tests/reference/build.sh runs it (each version's module links this directory) and
// keeps its output beside the binaries; eventsched's gate table is generated from it.
package main

import (
	"encoding/json"
	"os"

	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

type spec struct {
	Version       string `json:"version"`
	Default       bool   `json:"default"`
	PreRelease    string `json:"preRelease"`
	LockToDefault bool   `json:"lockToDefault,omitempty"`
}

func main() {
	gates := map[string][]spec{}
	for name, versioned := range utilfeature.DefaultMutableFeatureGate.GetAllVersioned() {
		specs := make([]spec, 0, len(versioned))
		for _, s := range versioned {
			version := ""
			if s.Version != nil {
				version = s.Version.String()
			}
			specs = append(specs, spec{version, s.Default, string(s.PreRelease), s.LockToDefault})
		}
		gates[string(name)] = specs
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", " ")
	if err := encoder.Encode(gates); err != nil {
		panic(err)
	}
}
