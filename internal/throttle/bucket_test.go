package throttle

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

func TestBucketOffAdmitsEverything(t *testing.T) {
	b := NewBucket(DefaultBucketConfig(), t0, func() float64 { return 0 })
	for i := range 1000 {
		if !b.Check(t0, 3) {
			t.Fatalf("check %d refused with throttling off", i)
		}
	}
	if b.Enabled() || b.Deficit() != 0 || b.DropChance() != 0 {
		t.Fatalf("off bucket: enabled %v deficit %d drop %v", b.Enabled(), b.Deficit(), b.DropChance())
	}
}

func TestBucketTokensAndRefill(t *testing.T) {
	cfg := DefaultBucketConfig()
	cfg.MaxTokens, cfg.FillTime, cfg.FillCount = 3, 10, 2
	b := NewBucket(cfg, t0, nil)
	steps := []struct {
		at      int
		need    int
		ok      bool
		deficit int
	}{
		{0, 1, true, 1},
		{0, 1, true, 2},
		{0, 1, true, 3},
		{0, 1, false, 3},  // empty
		{10, 1, false, 3}, // exactly one period: ZooKeeper refills only past it
		{11, 1, true, 2},  // 11 ms × 2 / 10 = 2 tokens; the 1 ms left over is lost
		{11, 2, false, 2}, // a weighted need that does not fit takes nothing
		{11, 1, true, 3},
		{1000, 3, true, 3}, // refilled to the cap, not beyond
		{1000, 1, false, 3},
	}
	for i, s := range steps {
		if got := b.Check(ms(s.at), s.need); got != s.ok || b.Deficit() != s.deficit {
			t.Fatalf("step %d (t=%dms need %d): ok %v deficit %d, want %v %d", i, s.at, s.need, got, b.Deficit(), s.ok, s.deficit)
		}
	}
}

func TestBucketBlueDropRisesWhileEmptyAndFallsWhenIdle(t *testing.T) {
	cfg := DefaultBucketConfig()
	cfg.MaxTokens, cfg.FillTime, cfg.FillCount = 2, 1000, 1
	cfg.FreezeTime, cfg.DropIncrease, cfg.DropDecrease, cfg.DecreaseRatio = 100, 0.25, 0.5, 0.5
	draw := 0.3
	b := NewBucket(cfg, t0, func() float64 { return draw })
	b.Check(ms(0), 1)
	b.Check(ms(0), 1) // empty now
	// Every freeze period that finds the bucket empty raises the chance.
	for i, want := range []float64{0.25, 0.5, 0.75} {
		b.Check(ms(101*(i+1)), 1)
		if got := b.DropChance(); got != want {
			t.Fatalf("after %d empty periods drop = %v, want %v", i+1, got, want)
		}
	}
	// Within a freeze period the chance does not move.
	if b.Check(ms(350), 0); b.DropChance() != 0.75 {
		t.Fatalf("drop = %v within the freeze period, want 0.75", b.DropChance())
	}
	// A period that ends with no more than MaxTokens × DecreaseRatio (1)
	// tokens used lowers it: at 1001 ms one token was refilled.
	if b.Check(ms(1001), 0); b.Deficit() != 1 || b.DropChance() != 0.25 {
		t.Fatalf("deficit %d drop %v, want 1 and 0.25", b.Deficit(), b.DropChance())
	}
	// A draw below the chance refuses even a session the bucket could pay
	// for, and takes no token.
	draw = 0.1
	if b.Check(ms(1050), 1) || b.Deficit() != 1 {
		t.Fatalf("draw 0.1 < drop 0.25: admitted, or deficit %d != 1", b.Deficit())
	}
	draw = 0.9
	if !b.Check(ms(1050), 1) || b.Deficit() != 2 {
		t.Fatalf("draw 0.9 >= drop 0.25 refused a session the bucket could pay for (deficit %d)", b.Deficit())
	}
}

func TestWeights(t *testing.T) {
	cases := []struct {
		name  string
		in    Weights
		want  Weights
		fixes int
	}{
		{"defaults", Weights{Enabled: true, Global: 3, Local: 1, Renew: 2}, Weights{Enabled: true, Global: 3, Local: 1, Renew: 2}, 0},
		{"non-positive take defaults", Weights{Global: 0, Local: -1, Renew: 0}, Weights{Global: 3, Local: 1, Renew: 2}, 3},
		{"raised to local", Weights{Global: 2, Local: 4, Renew: 3}, Weights{Global: 4, Local: 4, Renew: 4}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, fixes := c.in.Effective()
			if got != c.want || len(fixes) != c.fixes {
				t.Fatalf("Effective(%+v) = %+v with %d fixes %q, want %+v with %d", c.in, got, len(fixes), fixes, c.want, c.fixes)
			}
		})
	}
	w := Weights{Enabled: true, Global: 3, Local: 1, Renew: 2}
	for _, c := range []struct {
		session int64
		local   bool
		need    int
	}{{0, false, 3}, {0, true, 1}, {42, false, 2}, {42, true, 2}} {
		if got := w.Need(c.session, c.local); got != c.need {
			t.Errorf("Need(%d, local=%v) = %d, want %d", c.session, c.local, got, c.need)
		}
	}
	if got := (Weights{}).Need(0, false); got != 1 {
		t.Errorf("Need without weights = %d, want 1", got)
	}
	cfg := BucketConfig{MaxTokens: 10, FillCount: 2}
	if got := w.Scale(cfg); got.MaxTokens != 30 || got.FillCount != 6 {
		t.Errorf("Scale = %+v, want tokens and fill count × 3", got)
	}
	if got := (Weights{}).Scale(cfg); got != cfg {
		t.Errorf("Scale without weights = %+v, want unchanged", got)
	}
}

func TestBucketConfigValidate(t *testing.T) {
	ok := DefaultBucketConfig()
	ok.MaxTokens = 5
	for _, c := range []struct {
		name string
		mut  func(*BucketConfig)
		ok   bool
	}{
		{"off accepts anything", func(c *BucketConfig) { c.MaxTokens, c.FillTime = 0, 0 }, true},
		{"defaults with tokens", func(*BucketConfig) {}, true},
		{"negative tokens", func(c *BucketConfig) { c.MaxTokens = -1 }, false},
		{"zero fill time", func(c *BucketConfig) { c.FillTime = 0 }, false},
		{"negative fill count", func(c *BucketConfig) { c.FillCount = -1 }, false},
		{"freeze below -1", func(c *BucketConfig) { c.FreezeTime = -2 }, false},
	} {
		cfg := ok
		c.mut(&cfg)
		if err := cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("%s: Validate() = %v", c.name, err)
		}
	}
}
