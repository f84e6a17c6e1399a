// Package report turns experiment results into the paper's artefacts: a
// complete JSON record, a CSV of every task of every run, a Markdown table
// laid out like the paper's tables, and PNG figures (accuracy curves,
// prototype-correlation heat maps, sensitivity sweeps).
//
// result.json is an experiment.Result with a "summary" added; its format
// is documented in docs/RESULTS-FORMAT.md, and ReadResult also reads the
// files written before it had a schema version.
package report
