package bench

import (
	"fmt"
	"math"
	"strings"
)

// A small SVG line chart: enough for throughput curves and percentile
// plots, with no plotting dependency.

// series is one line of a chart.
type series struct {
	name string
	xs   []float64
	ys   []float64
}

// tick is an axis mark at a value, with its label.
type tick struct {
	v     float64
	label string
}

// chart is a line chart. Values are plotted as given: a caller wanting a
// log axis passes logarithms and labels its ticks accordingly.
type chart struct {
	title, xlabel, ylabel string
	xticks, yticks        []tick
	lines                 []series
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

const (
	svgW, svgH             = 720, 440
	padL, padR, padT, padB = 80, 170, 40, 60
	plotW, plotH           = svgW - padL - padR, svgH - padT - padB
)

// bounds returns the range the ticks and the data span together.
func (c *chart) bounds() (x0, x1, y0, y1 float64) {
	x0, y0 = math.Inf(1), math.Inf(1)
	x1, y1 = math.Inf(-1), math.Inf(-1)
	grow := func(x, y float64) {
		x0, x1 = math.Min(x0, x), math.Max(x1, x)
		y0, y1 = math.Min(y0, y), math.Max(y1, y)
	}
	for _, s := range c.lines {
		for i := range s.xs {
			grow(s.xs[i], s.ys[i])
		}
	}
	for _, t := range c.xticks {
		x0, x1 = math.Min(x0, t.v), math.Max(x1, t.v)
	}
	for _, t := range c.yticks {
		y0, y1 = math.Min(y0, t.v), math.Max(y1, t.v)
	}
	if x1 <= x0 {
		x1 = x0 + 1
	}
	if y1 <= y0 {
		y1 = y0 + 1
	}
	return
}

// svg renders the chart.
func (c *chart) svg() string {
	x0, x1, y0, y1 := c.bounds()
	px := func(x float64) float64 { return padL + (x-x0)/(x1-x0)*plotW }
	py := func(y float64) float64 { return padT + plotH - (y-y0)/(y1-y0)*plotH }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgW, svgH, svgW, svgH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", padL, esc(c.title))
	for _, t := range c.xticks {
		x := px(t.v)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, padT, x, padT+plotH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, padT+plotH+16, esc(t.label))
	}
	for _, t := range c.yticks {
		y := py(t.v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", padL, y, padL+plotW, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", padL-6, y+4, esc(t.label))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", padL, padT, plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", padL+plotW/2, svgH-16, esc(c.xlabel))
	fmt.Fprintf(&b, `<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">%s</text>`+"\n", padT+plotH/2, padT+plotH/2, esc(c.ylabel))
	for i, s := range c.lines {
		col := palette[i%len(palette)]
		pts := make([]string, len(s.xs))
		for j := range s.xs {
			pts[j] = fmt.Sprintf("%.1f,%.1f", px(s.xs[j]), py(s.ys[j]))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", px(s.xs[j]), py(s.ys[j]), col)
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), col)
		ly := padT + 14 + 20*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", padL+plotW+12, ly-4, padL+plotW+32, ly-4, col)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", padL+plotW+38, ly, esc(s.name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// linearTicks returns about n round ticks from 0 to at least max.
func linearTicks(max float64, n int, format func(float64) string) []tick {
	if max <= 0 {
		max = 1
	}
	raw := max / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []tick
	for v := 0.0; v < max+step; v += step {
		ts = append(ts, tick{v, format(v)})
	}
	return ts
}

// log10Ticks returns ticks at the powers of ten spanning [lo, hi] (values
// already log10), labelled as latencies in microseconds.
func log10Ticks(lo, hi float64) []tick {
	var ts []tick
	for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
		ts = append(ts, tick{e, fmtMicros(math.Pow(10, e))})
	}
	return ts
}

func fmtMicros(us float64) string {
	switch {
	case us >= 1e6:
		return fmt.Sprintf("%gs", us/1e6)
	case us >= 1e3:
		return fmt.Sprintf("%gms", us/1e3)
	default:
		return fmt.Sprintf("%gµs", us)
	}
}

// nines maps a percentile to the "number of nines" axis: 90 → 1,
// 99 → 2, 99.9 → 3.
func nines(p float64) float64 { return -math.Log10(1 - p/100) }
