package fetch

import "fmt"

// Resolve returns the catalogue's assets of the given names, in order.
// With a mirror URL there must be exactly one name, and its asset is
// downloaded from that URL instead (verified the same way). An unknown
// name is ErrUnknown.
func Resolve(names []string, url string) ([]Asset, error) {
	if url != "" && len(names) != 1 {
		return nil, fmt.Errorf("--url %s: give exactly one NAME (got %d)", url, len(names))
	}
	var assets []Asset
	for _, n := range names {
		a, err := Lookup(n)
		if err != nil {
			return nil, err
		}
		if url != "" {
			a.URLs = []string{url}
		}
		assets = append(assets, a)
	}
	return assets, nil
}

// FlagName is the flycl flag that reads the asset: "backbone" for
// weights, "data" for a data set (with Flag's value).
func (a Asset) FlagName() string {
	if a.Kind == Weights {
		return "backbone"
	}
	return "data"
}
