// Package validate checks the deployment files: the compose file against
// the Compose specification (compose-go, the loader Docker Compose uses),
// and the Kubernetes manifests by strict decoding into the Kubernetes API
// types (unknown or misspelled fields fail) plus the rules our operations
// depend on. It is its own module so the product does not depend on the
// Kubernetes API packages.
package validate

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const deployDir = ".."

func TestComposeFileIsValid(t *testing.T) {
	path, _ := filepath.Abs(filepath.Join(deployDir, "docker-compose.yml"))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	details := types.ConfigDetails{
		WorkingDir:  filepath.Dir(path),
		ConfigFiles: []types.ConfigFile{{Filename: path, Content: b}},
		Environment: types.Mapping{"QDRANT_API_KEY": "k"},
	}
	p, err := loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("sleuth", true)
	})
	if err != nil {
		t.Fatalf("compose file: %v", err)
	}
	sl, ok := p.Services["sleuth"]
	if !ok {
		t.Fatal("no sleuth service")
	}
	if _, ok := p.Services["qdrant"]; !ok {
		t.Fatal("no qdrant service")
	}
	if got := sl.Environment["QDRANT_URL"]; got == nil || !strings.Contains(*got, "qdrant:6334") {
		t.Errorf("sleuth does not point QDRANT_URL at the qdrant service's gRPC port: %v", got)
	}
	if len(p.Services["qdrant"].Volumes) == 0 || len(sl.Volumes) == 0 {
		t.Error("sleuth and qdrant need persistent volumes")
	}
	if sl.HealthCheck == nil {
		t.Error("sleuth has no health check")
	}
}

// docs splits a multi-document YAML file.
func docs(t *testing.T, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "k8s", name))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(d) != "" {
			out = append(out, []byte(d))
		}
	}
	return out
}

func strict[T any](t *testing.T, name string) T {
	t.Helper()
	var v T
	d := docs(t, name)
	if len(d) != 1 {
		t.Fatalf("%s: want one document, got %d", name, len(d))
	}
	if err := yaml.UnmarshalStrict(d[0], &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func TestKubernetesManifests(t *testing.T) {
	dep := strict[appsv1.Deployment](t, "deployment.yaml")
	svc := strict[corev1.Service](t, "service.yaml")
	cm := strict[corev1.ConfigMap](t, "configmap.yaml")
	pvc := strict[corev1.PersistentVolumeClaim](t, "pvc.yaml")
	sec := strict[corev1.Secret](t, "secret.example.yaml")

	if dep.Kind != "Deployment" || svc.Kind != "Service" || cm.Kind != "ConfigMap" || pvc.Kind != "PersistentVolumeClaim" || sec.Kind != "Secret" {
		t.Fatal("a manifest has the wrong kind")
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 {
		t.Error("the embedded store serves one replica: replicas must be 1")
	}
	if dep.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Error("use the Recreate strategy so two pods never share the RWO volume")
	}
	pod := dep.Spec.Template.Spec
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Error("pod must run as non-root")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Error("liveness probe must GET /healthz")
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Error("readiness probe must GET /readyz")
	}
	if c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() {
		t.Error("container needs resource requests and limits")
	}
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("container root filesystem must be read-only")
	}
	if pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds <= 25 {
		t.Error("terminationGracePeriodSeconds must exceed SLEUTH_SHUTDOWN_GRACE (25s)")
	}
	// The service selects the pods and targets the named container port.
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("service selector %s=%s does not match the pod labels", k, v)
		}
	}
	portNames := map[string]bool{}
	for _, p := range c.Ports {
		portNames[p.Name] = true
	}
	for _, p := range svc.Spec.Ports {
		if !portNames[p.TargetPort.String()] {
			t.Errorf("service targets port %q that the container does not name", p.TargetPort.String())
		}
	}
	// Volumes: the PVC and the secret are the ones defined here.
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != pvc.Name {
			t.Errorf("volume claims %q, manifest defines %q", v.PersistentVolumeClaim.ClaimName, pvc.Name)
		}
		if v.Secret != nil && v.Secret.SecretName != sec.Name {
			t.Errorf("volume mounts secret %q, manifest defines %q", v.Secret.SecretName, sec.Name)
		}
	}
	if c.EnvFrom[0].ConfigMapRef == nil || c.EnvFrom[0].ConfigMapRef.Name != cm.Name {
		t.Error("container must load the ConfigMap")
	}

	// Every variable the manifests set is documented in .env.example.
	documented := envExample(t)
	for k := range cm.Data {
		if !documented[k] {
			t.Errorf("ConfigMap sets %s, which .env.example does not document", k)
		}
	}
	for k := range sec.StringData {
		if !documented[k] {
			t.Errorf("Secret holds %s, which .env.example does not document", k)
		}
	}
	for _, e := range c.Env {
		if !documented[strings.TrimSuffix(e.Name, "_FILE")] {
			t.Errorf("container sets %s, which .env.example does not document", e.Name)
		}
	}
}

func TestKustomizationListsExistingFiles(t *testing.T) {
	var k struct {
		Resources []string `json:"resources"`
	}
	b, err := os.ReadFile(filepath.Join(deployDir, "k8s", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	if len(k.Resources) < 4 {
		t.Fatalf("kustomization lists %d resources", len(k.Resources))
	}
	for _, r := range k.Resources {
		if _, err := os.Stat(filepath.Join(deployDir, "k8s", r)); err != nil {
			t.Errorf("kustomization resource %s: %v", r, err)
		}
	}
}

// envExample returns the variable names .env.example documents (set or
// commented out).
func envExample(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "..", ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^#?\s*([A-Z][A-Z0-9_]+)=`)
	out := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			out[m[1]] = true
		}
	}
	return out
}
