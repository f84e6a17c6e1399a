// Package extract turns an image data set into feature files with a frozen
// backbone: decode, preprocess, run the model in batches, and save. Results
// are cached under a key of (weights, transform, data content, split, output),
// so repeated runs skip the work, and extraction resumes where it stopped
// after an interruption.
package extract
