package miner

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDbgLayout(t *testing.T) {
	if os.Getenv("MINER_DBG") == "" {
		t.Skip()
	}
	shared := sharedDir(t)
	for _, d := range gaDatasets {
		lines := readLines(t, filepath.Join(shared, "logs", "loghub2k", d, d+"_2k.log"))
		f := Learn(lines)
		t.Logf("%s layout=%q", d, f.Layout())
		for _, l := range lines[:3] {
			h := f.Parse(l)
			t.Logf("   %+v msg=%q", h, h.Msg(l))
		}
	}
}

func TestDbgClusters(t *testing.T) {
	d := os.Getenv("MINER_DBG_SET")
	if d == "" {
		t.Skip()
	}
	shared := sharedDir(t)
	lines := readLines(t, filepath.Join(shared, "logs", "loghub2k", d, d+"_2k.log"))
	f := Learn(lines)
	m := New()
	for _, l := range lines {
		m.Add(f.Parse(l).Msg(l))
	}
	for li, lf := range m.leaves {
		c := m.clusters[lf.cluster]
		t.Logf("leaf %d cl=%d (leaves=%d) n=%d %q", li, lf.cluster, c.leaves, lf.count, lf.toks)
	}
}
