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
