// Package metrics holds sleuth's Prometheus collectors. They are registered
// on one registry (Registry) served at /metrics. Label values are low
// cardinality by construction: platform names, outcomes, skill names.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry is sleuth's registry, with Go and process collectors.
var Registry = prometheus.NewRegistry()

var (
	// EventsReceived counts platform events by platform and outcome
	// (queued, duplicate, ignored, rejected).
	EventsReceived = counter("sleuth_events_total", "Platform events received, by platform and outcome.", "platform", "outcome")
	// Runs counts agent runs by outcome (ok, failed, interrupted, fallback).
	Runs = counter("sleuth_runs_total", "Agent runs, by outcome.", "outcome")
	// SkillCalls counts skill calls by skill and status.
	SkillCalls = counter("sleuth_skill_calls_total", "Skill calls, by skill and status.", "skill", "status")
	// ModelTokens counts model tokens by kind (prompt, completion).
	ModelTokens = counter("sleuth_model_tokens_total", "Model tokens, by kind.", "kind")
	// ModelLatency observes model call latency by outcome.
	ModelLatency = histogram("sleuth_model_latency_seconds", "Model call latency, by outcome.", "outcome")
	// QueueDepth is the number of queued and running turns.
	QueueDepth = prometheus.NewGauge(prometheus.GaugeOpts{Name: "sleuth_queue_depth", Help: "Turns queued or running."})
	// AttachmentBytes counts attachment bytes downloaded, by platform.
	AttachmentBytes = counter("sleuth_attachment_bytes_total", "Attachment bytes stored, by platform.", "platform")
	// JobRuns counts scheduled job runs by job and outcome.
	JobRuns = counter("sleuth_job_runs_total", "Scheduled job runs, by job and outcome.", "job", "outcome")
	// MemoryErrors counts long-term memory store errors by operation.
	MemoryErrors = counter("sleuth_memory_store_errors_total", "Long-term memory store errors, by operation.", "op")
)

func init() {
	Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	Registry.MustRegister(EventsReceived, Runs, SkillCalls, ModelTokens, ModelLatency, QueueDepth, AttachmentBytes, JobRuns, MemoryErrors)
}

// Handler serves the registry in the Prometheus text format.
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry})
}

func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func histogram(name, help string, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}, labels)
}
