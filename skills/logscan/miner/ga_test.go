package miner

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The Grouping Accuracy harness: for each Loghub-2k dataset under
// ../shared/logs/loghub2k (relative to the repository root) it learns the
// header, mines every line with one Miner, writes predictions.jsonl in the
// shape ../shared/tools/grouping_accuracy.py reads, and computes GA in Go
// with the same definition (a line is correct iff its predicted group,
// keyed by template text, holds exactly the lines of its EventId group).
//
//	go test -run TestGroupingAccuracy -v ./skills/logscan/miner/
//
// MINER_GA_OUT=dir keeps the predictions; MINER_GA_DEBUG=1 prints the
// largest wrong groups.

var gaDatasets = []string{"Android", "Apache", "HDFS", "HealthApp", "Linux", "OpenSSH"}

// gaFloor is the mean GA this test insists on; the target is 0.95.
const gaFloor = 0.95

func sharedDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root not found")
		}
		dir = parent
	}
	s := filepath.Join(dir, "..", "shared")
	if _, err := os.Stat(s); err != nil {
		t.Skip("../shared is absent (relative to the repository root); skipping the Loghub benchmark")
	}
	return s
}

// readLines splits a file into lines counting '\n' only; a trailing "\r"
// is dropped and a missing final newline is fine.
func readLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// mineLines runs the whole per-file pipeline the log engine runs.
func mineLines(lines []string) []Template {
	f := Learn(lines[:min(len(lines), 2000)])
	m := New()
	ids := make([]int, len(lines))
	for i, l := range lines {
		h := f.Parse(l)
		ids[i] = m.Add(h.Msg(l))
	}
	m.Finish()
	out := make([]Template, len(lines))
	for i, id := range ids {
		out[i] = m.Template(id)
	}
	return out
}

type gtRow struct {
	line    int
	event   string
	content string
	tmpl    string
}

func readGroundTruth(t testing.TB, path string) []gtRow {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r := csv.NewReader(fh)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var rows []gtRow
	for _, rec := range recs[1:] {
		var ln int
		fmt.Sscan(rec[col["LineId"]], &ln)
		rows = append(rows, gtRow{line: ln, event: rec[col["EventId"]], content: rec[col["Content"]], tmpl: rec[col["EventTemplate"]]})
	}
	return rows
}

// groupingAccuracy: the logparser evaluator's "accuracy".
func groupingAccuracy(gt []gtRow, pred map[int]string) float64 {
	gtSize := map[string]int{}
	n := 0
	for _, r := range gt {
		if r.event == "" {
			continue
		}
		gtSize[r.event]++
		n++
	}
	members := map[string][]gtRow{}
	for _, r := range gt {
		if r.event == "" {
			continue
		}
		p, ok := pred[r.line]
		if !ok {
			continue
		}
		members[p] = append(members[p], r)
	}
	correct := 0
	for _, mem := range members {
		ev := mem[0].event
		same := true
		for _, r := range mem {
			if r.event != ev {
				same = false
				break
			}
		}
		if same && len(mem) == gtSize[ev] {
			correct += len(mem)
		}
	}
	if n == 0 {
		return 0
	}
	return float64(correct) / float64(n)
}

func TestGroupingAccuracy(t *testing.T) {
	shared := sharedDir(t)
	outDir := os.Getenv("MINER_GA_OUT")
	if outDir == "" {
		outDir = t.TempDir()
	}
	sum := 0.0
	for _, d := range gaDatasets {
		base := filepath.Join(shared, "logs", "loghub2k", d, d+"_2k.log")
		lines := readLines(t, base)
		tmpls := mineLines(lines)
		gt := readGroundTruth(t, base+"_structured.csv")
		if len(gt) != len(lines) {
			t.Fatalf("%s: %d lines but %d ground-truth rows", d, len(lines), len(gt))
		}
		pred := map[int]string{}
		var sb strings.Builder
		enc := json.NewEncoder(&sb)
		for i, tp := range tmpls {
			pred[i+1] = tp.Text
			enc.Encode(map[string]any{"line": i + 1, "template_id": tp.ID, "template": tp.Text})
		}
		if err := os.WriteFile(filepath.Join(outDir, d+".predictions.jsonl"), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		ga := groupingAccuracy(gt, pred)
		sum += ga
		t.Logf("%-10s GA=%.4f templates=%d", d, ga, distinct(tmpls))
		if os.Getenv("MINER_GA_DEBUG") != "" {
			debugGroups(t, d, lines, gt, pred)
		}
	}
	mean := sum / float64(len(gaDatasets))
	t.Logf("mean GA=%.4f", mean)
	if mean < gaFloor {
		t.Errorf("mean GA %.4f below %.2f", mean, gaFloor)
	}
}

func distinct(ts []Template) int {
	s := map[string]bool{}
	for _, t := range ts {
		s[t.ID] = true
	}
	return len(s)
}

// debugGroups prints ground-truth groups that were not matched exactly,
// largest first, with the predicted templates their lines got.
func debugGroups(t *testing.T, d string, lines []string, gt []gtRow, pred map[int]string) {
	byEv := map[string][]gtRow{}
	predSize := map[string]int{}
	for _, r := range gt {
		byEv[r.event] = append(byEv[r.event], r)
		predSize[pred[r.line]]++
	}
	type bad struct {
		ev   string
		rows []gtRow
	}
	var bads []bad
	for ev, rows := range byEv {
		ps := map[string]int{}
		for _, r := range rows {
			ps[pred[r.line]]++
		}
		if len(ps) == 1 && predSize[pred[rows[0].line]] == len(rows) {
			continue
		}
		bads = append(bads, bad{ev, rows})
	}
	sort.Slice(bads, func(i, j int) bool { return len(bads[i].rows) > len(bads[j].rows) })
	for _, b := range bads[:min(len(bads), 12)] {
		ps := map[string]int{}
		for _, r := range b.rows {
			ps[pred[r.line]]++
		}
		t.Logf("%s %s n=%d gt=%q", d, b.ev, len(b.rows), b.rows[0].tmpl)
		k := 0
		for p, c := range ps {
			if k++; k > 4 {
				break
			}
			t.Logf("    pred(%d of %d)=%q  e.g. L%d %q", c, predSize[p], p, b.rows[0].line, lines[b.rows[0].line-1])
		}
	}
}
