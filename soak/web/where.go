package web

import (
	"net/url"

	"github.com/soakd/soakd/soak/model"
	"github.com/soakd/soakd/soak/units"
	"github.com/soakd/soakd/soak/verdict"
)

// whereView is the page's "where the growth lives" section.
type whereView struct {
	Mappings []mappingRow
	Sites    []siteRow
	Notes    []string
	Evidence []evidenceRow
	Cut      string
}

type mappingRow struct {
	Resource, Name, Growth, Share, New string
}

type siteRow struct {
	Resource string
	verdict.Site
	PerRequest, Growth, Share string
}

type evidenceRow struct {
	model.EvidenceFile
	Href, Size, Cut string
}

// newWhereView builds the section; nil when the report has nothing of it.
func newWhereView(rep *model.Report, base string) *whereView {
	w := &whereView{}
	for _, n := range rep.ResourceNames() {
		res := rep.Resources[n]
		for _, m := range res.Mappings {
			row := mappingRow{Resource: n, Name: m.Name, Growth: "+" + units.Amount(m.GrowthBytes, "bytes"), Share: percent(m.Share)}
			if m.New != nil {
				row.New = model.MappingsLine([]verdict.Mapping{{Name: m.Name, Share: m.Share, GrowthBytes: m.GrowthBytes, New: m.New}})
			}
			w.Mappings = append(w.Mappings, row)
		}
		for _, s := range res.Sites {
			w.Sites = append(w.Sites, siteRow{Resource: n, Site: s, PerRequest: units.Amount(s.PerRequest, "bytes"),
				Growth: "+" + units.Amount(s.GrowthBytes, "bytes"), Share: percent(s.Share)})
		}
	}
	if wh := rep.Where; wh != nil {
		w.Notes, w.Cut = wh.Notes, wh.EvidenceCut
		for _, f := range wh.Evidence {
			row := evidenceRow{EvidenceFile: f, Size: units.Amount(float64(f.Bytes), "bytes")}
			if f.Bytes > 0 {
				row.Href = base + url.PathEscape(f.Name)
			}
			if f.CutFromBytes > 0 {
				row.Cut = "cut from " + units.Amount(float64(f.CutFromBytes), "bytes")
			}
			w.Evidence = append(w.Evidence, row)
		}
	}
	if len(w.Mappings)+len(w.Sites)+len(w.Notes)+len(w.Evidence) == 0 {
		return nil
	}
	return w
}
