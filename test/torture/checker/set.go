package checker

// SetAdd is one attempt to add Element to the set: a create of a child
// named Element under the set's node. Elements are meant to be unique;
// when one is attempted more than once, the most promising outcome
// counts (OK over Unknown over Failed).
type SetAdd struct {
	Client  int
	Element string
	Span
	Outcome Outcome
}

// CheckSet checks the set's durability and agreement. final maps a
// member name to the elements it listed after healing (its children of
// the set node, read after sync).
//
// Every OK add must be present on every member; no member may list an
// element that was never attempted or whose add Failed; all members
// must list the same elements (an Unknown add may be present or absent,
// but the same on every member). A member listing an element twice, and
// an empty final (nothing to check against), are anomalies too.
// Anomalies name the element (Result.Key) and the member.
func CheckSet(adds []SetAdd, final map[string][]string) Result {
	var f findings
	best := make(map[string]SetAdd)
	var nOK, nUnknown, nFailed int
	for _, a := range adds {
		switch a.Outcome {
		case OK:
			nOK++
		case Unknown:
			nUnknown++
		default:
			nFailed++
		}
		if b, seen := best[a.Element]; !seen || outcomeRank(a.Outcome) > outcomeRank(b.Outcome) {
			best[a.Element] = a
		}
	}
	f.note("adds: %d ok, %d unknown, %d failed; %d members read", nOK, nUnknown, nFailed, len(final))

	ms := members(final, &f, "set")
	on := presence(final, ms, &f)
	for _, el := range sortedKeys(best) {
		a, present := best[el], on[el]
		switch a.Outcome {
		case OK:
			for _, m := range missing(ms, present) {
				f.add(el, "%s: lost: add acknowledged to client %d at %s, absent on member %s", el, a.Client, at(a.Return), m)
			}
		case Unknown:
			if len(present) > 0 && len(present) < len(ms) {
				f.add(el, "%s: members disagree on an add of unknown outcome: present on %v, absent on %v", el, present, missing(ms, present))
			}
		default:
			for _, m := range present {
				f.add(el, "%s: listed on member %s, but its add failed (client %d at %s)", el, m, a.Client, at(a.Return))
			}
		}
	}
	for _, el := range sortedKeys(on) {
		if _, attempted := best[el]; !attempted {
			for _, m := range on[el] {
				f.add(el, "%s: listed on member %s, but no client ever added it", el, m)
			}
		}
	}
	return f.result("set", len(adds))
}
